"""Sweep plots from a sweep table: heatmaps and cost vs accuracy."""

from __future__ import annotations

import pandas as pd

from omlab.viz.report import write_sweep_plots

PNG = b"\x89PNG\r\n\x1a\n"


def _table() -> pd.DataFrame:
    rows = []
    for b in (0.1, 0.2):
        for a in (1.1, 1.5):
            rows.append(
                {
                    "run_id": f"r{b}{a}",
                    "config_name": f"bufferTokens={b},blockAfter={a}",
                    "buffer_tokens": b,
                    "block_after": a,
                    "blocked_s": 100.0 if a == 1.1 else 0.0,
                    "context_tokens_peak": 9000 + 1000 * a,
                    "sync_observations": 2 if a == 1.1 else 0,
                    "accuracy": 0.5 + b,
                    "cost_usd": 0.1 + b / 10,
                }
            )
    return pd.DataFrame(rows)


def test_sweep_plots_are_written_for_each_metric_and_the_pareto_front(tmp_path):
    paths = write_sweep_plots(tmp_path, _table(), x="buffer_tokens", y="block_after", sweep_label="demo sweep")
    names = sorted(p.name for p in paths)
    assert names == sorted(
        [
            "demo-sweep-heatmap-blocked_s.png",
            "demo-sweep-heatmap-context_tokens_peak.png",
            "demo-sweep-heatmap-sync_observations.png",
            "demo-sweep-heatmap-accuracy.png",
            "demo-sweep-heatmap-cost_usd.png",
            "demo-sweep-cost-vs-accuracy.png",
        ]
    )
    assert all(p.read_bytes()[:8] == PNG for p in paths)


def test_missing_metrics_are_skipped(tmp_path):
    table = _table().drop(columns=["accuracy", "cost_usd"])
    names = {p.name for p in write_sweep_plots(tmp_path, table, x="buffer_tokens", y="block_after", sweep_label="s")}
    assert "s-cost-vs-accuracy.png" not in names and "s-heatmap-blocked_s.png" in names

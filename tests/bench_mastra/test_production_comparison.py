"""Production's OM records beside omlab's replay: the frames, the report section and the plot."""

from __future__ import annotations

import pandas as pd
import pytest

from omlab.bench.datasets.mastra import markers_df, om_records_df, read_mastra
from omlab.bench.report.production import compare, production_comparison, production_location, production_log_df
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite
from omlab.bench.suite.suite_file import parse_suite
from omlab.cli.main import main
from omlab.viz.plots.production import plot_production_comparison


def test_the_rebuilt_production_log_ends_where_mastra_counted_it(recorded):
    imported = read_mastra(recorded)
    records, log = om_records_df(imported), production_log_df(markers_df(imported))
    for thread, group in log.groupby("conversation_id"):
        last = records[records["thread_id"] == thread].sort_values("generation").iloc[-1]
        assert group["generation"].max() == last["generation"], thread
        assert group["observation_tokens"].iloc[-1] == last["observation_tokens"], thread


def test_compare_sets_both_sources_side_by_side(recorded):
    imported = read_mastra(recorded, threads="support-1")
    steps = pd.DataFrame(
        {
            "conversation_id": ["support-1"] * 3,
            "ts": pd.to_datetime(["2025-03-03T10:00Z", "2025-03-03T12:00Z", "2025-03-03T14:00Z"]),
            "observation_tokens": [500, 4200, 1800],
            "generation": [0, 0, 1],
        }
    )
    comparison = compare(om_records_df(imported), markers_df(imported), steps)
    summary = comparison.summary.set_index("source")
    assert summary.loc["production", "reflections"] == 2 and summary.loc["omlab", "reflections"] == 1
    assert summary.loc["omlab", "peak_tokens"] == 4200 and summary.loc["omlab", "final_tokens"] == 1800
    production = comparison.generations[comparison.generations["source"] == "production"]
    assert list(production["peak_tokens"]) == list(om_records_df(imported)["observation_tokens"])


def test_production_location_resolves_against_the_suite_file(tmp_path):
    config = {"dataset": {"kind": "mastra", "path": "data/m.db"}, "suite_file": str(tmp_path / "s.toml")}
    assert production_location(config) == str(tmp_path / "data" / "m.db")
    assert production_location({"dataset": {"kind": "mastra", "path": "postgresql://u@h/db"}}) == "postgresql://u@h/db"
    assert production_location({"dataset": {"kind": "synthetic"}}) is None


@pytest.fixture(scope="module")
def mastra_run(tmp_path_factory):
    from tests.bench_mastra.conftest import RECORDED

    results = tmp_path_factory.mktemp("results")
    suite = parse_suite(
        {
            "suite": {"name": "mastra-compare"},
            "dataset": {"kind": "mastra", "path": str(RECORDED), "threads": ["support-1"]},
            "engine": {
                "observation": {"messageTokens": 3000, "bufferTokens": 0.2, "bufferActivation": 0.8, "blockAfter": 1.2},
                "reflection": {"observationTokens": 4000, "bufferActivation": 0.5},
            },
            "latency": {"default": {"kind": "fixed", "seconds": 1.0}},
            "replay": {"ingest": "turn"},
        },
        source="compare.toml",
    )
    [summary] = run_suite(suite, RunOptions(results_dir=results, workers=1))
    return results, summary.run_id


def test_a_mastra_run_compares_with_production(mastra_run):
    results, run_id = mastra_run
    comparison = production_comparison(results, run_id)
    assert set(comparison.summary["source"]) == {"production", "omlab"}
    assert set(comparison.log["conversation_id"]) == {"support-1"}


def test_the_report_has_the_section_and_the_plot(mastra_run, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mpl"))
    results, run_id = mastra_run
    out = tmp_path / "report"
    assert main(["report", run_id, "--results", str(results), "--plots", "--out", str(out)]) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "## Production vs this replay" in text and "| support-1 | production | 3 | 2 | 3615 |" in text
    image = f"{run_id}-production-support-1.png"
    assert (out / image).stat().st_size > 0 and f"]({image})" in text


def test_the_plot_is_a_function_of_the_frames(recorded):
    imported = read_mastra(recorded)
    comparison = compare(om_records_df(imported), markers_df(imported), pd.DataFrame())
    axes = plot_production_comparison(comparison.log, comparison.generations, conversation_id="support-1")
    assert len(axes) == 3 and axes[0].get_lines() and axes[1].patches
    with pytest.raises(ValueError, match="no conversation_id 'nope'"):
        plot_production_comparison(comparison.log, comparison.generations, conversation_id="nope")
    empty = plot_production_comparison(comparison.log.iloc[:0], comparison.generations.iloc[:0])
    assert "no data" in empty[0].texts[0].get_text()


def test_a_report_whose_database_is_gone_says_so_and_keeps_the_rest(mastra_run, tmp_path, monkeypatch):
    from omlab.bench.report import production

    monkeypatch.setattr(production, "production_location", lambda config: str(tmp_path / "moved.db"))
    results, run_id = mastra_run
    out = tmp_path / "report"
    assert main(["report", run_id, "--results", str(results), "--plots", "--out", str(out)]) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "production records unavailable: " in text and "moved.db: no such file" in text
    assert "## Compression and context size" in text

"""Tiny suite files for the runner tests (offline models, seconds to run)."""

from __future__ import annotations

from pathlib import Path

TINY_SUITE = """
[suite]
name = "{name}"

[dataset]
kind = "synthetic"
seeds = [11, 12]
target_tokens = 4000
n_questions = 4

[engine]
observation = {{ messageTokens = 1200, bufferTokens = 0.25, blockAfter = 1.2 }}
reflection = {{ observationTokens = 1500 }}

[models]
actor = "{actor}"
judge = "omlab/judge"

[models.prices]
"omlab/observer" = {{ input_per_mtok = 0.3, output_per_mtok = 2.5 }}
"omlab/reflector" = {{ input_per_mtok = 0.3, output_per_mtok = 2.5 }}
"omlab/reader" = {{ input_per_mtok = 0.15, output_per_mtok = 0.6 }}
"omlab/judge" = {{ input_per_mtok = 2.5, output_per_mtok = 10.0 }}

[latency]
default = {{ kind = "fixed", seconds = 4 }}
{extra}
"""

STABLE_METRICS_EXCLUDED = ("latency_s_p50", "latency_s_p95", "cost_usd_paid", "cached_calls")
"""Metrics that legitimately differ between an original run and a cached or resumed rerun
(wall-clock latencies, what was paid, how much came from a cache)."""


def write_suite(folder: Path, name: str = "tiny", *, actor: str = "omlab/reader", extra: str = "") -> Path:
    """Write a tiny offline suite TOML into ``folder`` and return its path."""
    path = folder / f"{name}.toml"
    path.write_text(TINY_SUITE.format(name=name, actor=actor, extra=extra), encoding="utf-8")
    return path


def stable_metrics(metrics) -> dict[tuple[str, str], float]:
    """``{(name, group): rounded value}`` without :data:`STABLE_METRICS_EXCLUDED`."""
    kept = metrics[~metrics["name"].isin(STABLE_METRICS_EXCLUDED)]
    return {(row["name"], row["group_key"]): round(float(row["value"]), 9) for _, row in kept.iterrows()}

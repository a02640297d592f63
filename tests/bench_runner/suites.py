"""Tiny suite files for the runner tests (offline models, seconds to run)."""

from __future__ import annotations

from pathlib import Path

TINY_SUITE = """
[suite]
name = "{name}"

[dataset]
kind = "synthetic"
seeds = {seeds}
target_tokens = 4000
n_questions = 4

[engine]
observation = {{ messageTokens = 1200, bufferTokens = 0.25, blockAfter = 1.2 }}
reflection = {{ observationTokens = 1500 }}

[models]
actor = "{actor}"
judge = "omlab/judge"

{prices}

[latency]
default = {{ kind = "fixed", seconds = 4 }}
{extra}
"""


def offline_synthetic_suite(
    name: str, *, engine: str, target_tokens: int = 12_000, n_questions: int = 20, seed: int = 1, extra: str = ""
) -> str:
    """The TOML text of a one-conversation synthetic suite on the four offline models, without
    the cache, one worker. ``engine``: the ``[engine]`` table's lines; ``extra``: more tables
    (e.g. a ``[grid]``)."""
    return (
        f'[suite]\nname = "{name}"\n'
        f'[dataset]\nkind = "synthetic"\nseeds = [{seed}]\ntarget_tokens = {target_tokens}\nn_questions = {n_questions}\n'
        f"[engine]\n{engine.strip()}\n"
        f"{extra.strip()}\n"
        '[models]\nobserver = "omlab/observer"\nreflector = "omlab/reflector"\n'
        'actor = "omlab/reader"\njudge = "omlab/judge"\n'
        '[cache]\nmode = "off"\n[run]\nworkers = 1\n'
    )


STABLE_METRICS_EXCLUDED = ("latency_s_p50", "latency_s_p95", "cost_usd_paid", "cached_calls")
"""Metrics that legitimately differ between an original run and a cached or resumed rerun
(wall-clock latencies, what was paid, how much came from a cache)."""


PRICES = """[models.prices]
"omlab/observer" = { input_per_mtok = 0.3, output_per_mtok = 2.5 }
"omlab/reflector" = { input_per_mtok = 0.3, output_per_mtok = 2.5 }
"omlab/reader" = { input_per_mtok = 0.15, output_per_mtok = 0.6 }
"omlab/judge" = { input_per_mtok = 2.5, output_per_mtok = 10.0 }
"""


def write_suite(
    folder: Path,
    name: str = "tiny",
    *,
    actor: str = "omlab/reader",
    extra: str = "",
    seeds: str = "[11, 12]",
    prices: bool = True,
) -> Path:
    """Write a tiny offline suite TOML (two ~4k-token conversations, 4 questions each) into
    ``folder`` and return its path. ``extra`` is appended (more tables)."""
    path = folder / f"{name}.toml"
    text = TINY_SUITE.format(name=name, actor=actor, extra=extra, seeds=seeds, prices=PRICES if prices else "")
    path.write_text(text, encoding="utf-8")
    return path


def stable_metrics(metrics) -> dict[tuple[str, str], float]:
    """``{(name, group): rounded value}`` without :data:`STABLE_METRICS_EXCLUDED`."""
    kept = metrics[~metrics["name"].isin(STABLE_METRICS_EXCLUDED)]
    return {(row["name"], row["group_key"]): round(float(row["value"]), 9) for _, row in kept.iterrows()}

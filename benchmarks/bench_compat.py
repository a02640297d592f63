"""What omlab's corrections change: one buffering sweep replayed in both engine modes (issue 13 §1).

Runs ``benchmarks/sweep_buffering.toml`` (bufferTokens x blockAfter on one long synthetic
conversation, offline models, virtual time) once with ``compat = "omlab"`` (the default,
corrected semantics) and once with ``compat = "reference"`` (``@mastra/memory`` 1.31.0's
behaviour, docs/divergences.md "Reference mode"), as one sweep whose grid adds ``compat``. Prints,
per cell, what each mode gives and the difference: seconds the actor was blocked, synchronous
observations, activations, peak and average context, retention (the gold answer still in the
memory at question time) and accuracy.

    .venv/bin/python benchmarks/bench_compat.py [--results DIR] [--workers 2] [--tokens 60000]

Results go to a temporary folder unless ``--results`` is given (then the runs can be opened with
``omlab runs`` / ``omlab report``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tomllib
from pathlib import Path

import pandas as pd

from omlab.bench.report.metrics import metric_value
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite
from omlab.bench.suite.suite_file import parse_suite

SUITE = Path(__file__).resolve().parent / "sweep_buffering.toml"
COLUMNS = (
    ("blocked_s", "blocked_s", "{:.1f}"),
    ("sync_obs", "sync_observations", "{:.0f}"),
    ("activations", "activations", "{:.0f}"),
    ("ctx_peak", "context_tokens_peak", "{:,.0f}"),
    ("ctx_avg", "context_tokens_avg", "{:,.0f}"),
    ("retention", "retention", "{:.1%}"),
    ("accuracy", "accuracy", "{:.1%}"),
)


def compare(results: Path, workers: int, tokens: int) -> pd.DataFrame:
    """Run the sweep in both modes under ``results``; one row per (cell, mode) with its metrics."""
    data = tomllib.loads(SUITE.read_text(encoding="utf-8"))
    data["suite"]["name"] = "compat-modes"
    data["dataset"]["target_tokens"] = tokens
    data["grid"] = {**data["grid"], "compat": ["omlab", "reference"]}
    suite = parse_suite(data, source=str(SUITE), base_dir=SUITE.parent)
    summaries = run_suite(suite, RunOptions(results_dir=results, workers=workers, progress=False))
    rows = []
    for summary in summaries:
        cell, _, mode = summary.config_name.rpartition(",compat=")
        row = {"cell": cell, "mode": mode}
        row.update({label: metric_value(summary.metrics, name) for label, name, _ in COLUMNS})
        rows.append(row)
    return pd.DataFrame(rows)


def side_by_side(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: each metric in both modes and reference - omlab."""
    wide = frame.pivot(index="cell", columns="mode")
    out = pd.DataFrame(index=wide.index)
    for label, _, _ in COLUMNS:
        out[f"{label} omlab"] = wide[(label, "omlab")]
        out[f"{label} ref"] = wide[(label, "reference")]
        out[f"{label} Δ"] = wide[(label, "reference")] - wide[(label, "omlab")]
    return out


def _format(table: pd.DataFrame) -> str:
    shown = table.copy()
    for label, _, pattern in COLUMNS:
        for suffix in ("omlab", "ref", "Δ"):
            column = f"{label} {suffix}"
            signed = "{:+" + pattern[2:] if suffix == "Δ" else pattern
            shown[column] = shown[column].map(lambda v, p=signed: "" if pd.isna(v) else p.format(v))
    return shown.to_string()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, help="keep the runs here (default: a temporary folder)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=60_000, help="conversation size (default 60,000)")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        frame = compare(args.results or Path(scratch), args.workers, args.tokens)
    table = side_by_side(frame)
    print(f"sweep {SUITE.name} in both modes, {len(frame)} runs, {time.perf_counter() - started:.0f} s wall")
    print(_format(table))
    totals = frame.groupby("mode")[["blocked_s", "sync_obs", "activations"]].sum()
    print("\ntotals over the cells:")
    print(totals.to_string())


if __name__ == "__main__":
    main()

"""``omlab sweep SUITE``: run every grid cell and print the sweep table side by side."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from omlab.bench.report.metrics import COUNT_METRICS, SWEEP_INTERVAL_COLUMNS, SWEEP_METRICS, sweep_table
from omlab.bench.results import metrics_df, runs_df
from omlab.bench.run.sweep import run_sweep
from omlab.bench.suite.suite_file import SuiteError, load_suite
from omlab.cli.options import add_run_options, run_options
from omlab.cli.run import exit_status


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "sweep",
        epilog="examples:\n  omlab sweep benchmarks/sweep_buffering.toml --csv sweep.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="run a suite's grid and compare the cells",
        description="Run every [grid] cell of a suite (each its own run) and print "
        "blocked seconds, sync observations, activations, context size, "
        "accuracy and cost per cell. Running it again after an interruption continues the "
        "suite's latest unfinished sweep: finished cells are reused, cut-short cells resumed, "
        "the rest run (--new starts a new sweep; --sweep ID continues that one). A cell that ended "
        "incomplete is resumed too. Exit status: 0 every cell complete, 3 a cell ended incomplete "
        "(listed after the table), 2 a usage or suite error, 1 a crash, 130 interrupted.",
    )
    add_run_options(parser)
    parser.add_argument("--sweep", metavar="ID", help="continue (or show) this sweep instead of the latest one")
    parser.add_argument(
        "--csv",
        metavar="PATH",
        help="also write the table as CSV (default: <results>/reports/sweeps/<suite>-<sweep>.csv)",
    )
    parser.add_argument(
        "--plots",
        action="store_true",
        help="also write heatmaps (first two grid keys) and cost vs accuracy as PNG next to the CSV",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    suite = load_suite(args.suite)
    if not suite.grid:
        raise SuiteError(
            suite.source,
            "grid",
            "omlab sweep runs the cells of a [grid] table and this suite has none: add one "
            '(e.g. [grid] "observation.bufferTokens" = [0.1, 0.2]) or use omlab run for its one configuration',
        )
    result = run_sweep(suite, run_options(args, sweep_id=args.sweep), new=args.new)
    sweep_id, summaries = result.sweep_id, result.summaries
    if result.continued:
        print(
            f"continuing sweep {sweep_id}: {len(result.reused)} finished cell(s) reused, "
            f"{len(summaries) - len(result.reused)} run or resumed"
        )
    ids = [s.run_id for s in summaries]
    runs = runs_df(args.results)
    ordered = runs.set_index("run_id").loc[ids].reset_index()  # grid order, not completion order
    table = sweep_table(ordered, metrics_df(args.results, ids))
    print(format_table(table))
    path = (
        Path(args.csv)
        if args.csv
        else Path(args.results) / "reports" / "sweeps" / f"{summaries[0].suite}-{sweep_id}.csv"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(path, index=False)
    print(f"sweep table: {path}")
    grid = swept_columns(table)
    if args.plots and len(grid) >= 2:
        from omlab.bench.results import lineage_df, lineage_questions_df
        from omlab.viz.report import write_sweep_plots

        names = dict(zip(table["run_id"], table["config_name"], strict=True))
        lineage = {names[run_id]: lineage_df(args.results, run_id) for run_id in ids}
        questions = {names[run_id]: lineage_questions_df(args.results, run_id) for run_id in ids}
        for written in write_sweep_plots(
            path.parent,
            table,
            x=grid[0],
            y=grid[1],
            sweep_label=path.stem,
            lineage=lineage,
            lineage_questions=questions,
        ):
            print(f"plot: {written}")
    elif args.plots:
        print("no plots: a heatmap needs a grid over two keys")
    for summary in summaries:
        for line in summary.failures.lines():
            print(f"{summary.run_id} [{summary.config_name}] {line}")
    return exit_status(summaries)


SWEEP_COLUMNS = (*(column for column, _, _ in SWEEP_METRICS), *SWEEP_INTERVAL_COLUMNS)


def swept_columns(table: pd.DataFrame) -> list[str]:
    """The sweep table's grid columns (the swept settings), in grid order."""
    return [c for c in table.columns if c not in ("run_id", "config_name", *SWEEP_COLUMNS)]


def format_table(table: pd.DataFrame) -> str:
    """The sweep table as aligned text (rates and their CI bounds as percentages, counts and sample
    sizes as whole numbers, seconds and costs rounded)."""
    shown = table.drop(columns=["config_name"]).copy()
    for column in shown.columns:
        if column in COUNT_METRICS or (column.endswith("_n") and column in SWEEP_INTERVAL_COLUMNS):
            shown[column] = shown[column].map(lambda v: "" if pd.isna(v) else f"{v:,.0f}")
        elif column in ("accuracy", "retention") or column in SWEEP_INTERVAL_COLUMNS:
            shown[column] = shown[column].map(lambda v: "" if pd.isna(v) else f"{v:.1%}")
        elif column == "cost_usd":
            shown[column] = shown[column].map(lambda v: "" if pd.isna(v) else f"{v:.4f}")
        elif pd.api.types.is_float_dtype(shown[column]):
            shown[column] = shown[column].map(lambda v: "" if pd.isna(v) else f"{v:,.1f}")
    return shown.to_string(index=False)

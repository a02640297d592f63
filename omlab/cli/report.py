"""``omlab report RUN``: write a run's report (metrics tables, optional plots) under results/reports/."""

from __future__ import annotations

import argparse
from pathlib import Path

from omlab.bench.report.run_index import headline_text
from omlab.bench.results import metrics_df, runs_df
from omlab.cli.options import add_results_option, resolve_run
from omlab.viz.report import write_production_plot
from omlab.viz.run_report import write_report


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "report",
        help="write a run's report",
        description="Print a run's headline numbers and write its report (metrics table, accuracy per type, "
        "cost by role/model/tier, compression and blocking) in results/reports/<run>/.",
        epilog="examples:\n  omlab report latest\n  omlab report 20250101T000000-abcdef --plots --format html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run", help="run id, or 'latest'")
    add_results_option(parser)
    parser.add_argument("--plots", action="store_true", help="also draw the run's plots (PNG)")
    parser.add_argument("--format", choices=("md", "html"), default="md", help="report format (default md)")
    parser.add_argument("--out", metavar="DIR", help="write here instead of results/reports/<run>/")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    run_id = resolve_run(args.results, args.run)
    target = Path(args.out) if args.out else Path(args.results) / "reports" / run_id
    extra = write_production_plot(args.results, run_id, target) if args.plots else []
    path = write_report(args.results, run_id, fmt=args.format, plots=args.plots, out_dir=args.out, extra_images=extra)
    header = runs_df(args.results)
    header = header[header["run_id"].astype(str) == run_id].tail(1)
    if len(header):
        row = header.iloc[0]
        status = (
            "INCOMPLETE (failed phases; run the suite again to retry them)"
            if row["status"] == "incomplete"
            else row["status"]
        )
        print(f"run {run_id} · {row['suite']} [{row['config_name']}] · {status}")
    print(headline_text(metrics_df(args.results, run_id)))
    print(f"report: {path}")
    return 0

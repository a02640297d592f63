"""``omlab export RUN --format longmemeval|locomo|csv|parquet``: a run's results for other tools."""

from __future__ import annotations

import argparse

from omlab.bench.results.export import EXPORT_FORMATS, default_export_path, export_run
from omlab.cli.options import add_results_option, resolve_run


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "export",
        epilog="examples:\n  omlab export latest --format longmemeval --out hypotheses.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="export a run for the official evaluators or as flat tables",
        description="longmemeval: the hypothesis JSONL of LongMemEval's evaluate_qa.py; "
        "locomo: predictions in the shape LoCoMo's evaluation.py scores (key 'prediction'); "
        "csv/parquet: answers, scores and calls tables (floats at full precision).",
    )
    parser.add_argument("run", help="run id, or 'latest'")
    parser.add_argument("--format", required=True, choices=EXPORT_FORMATS, dest="fmt")
    parser.add_argument(
        "--out",
        metavar="PATH",
        help="file (longmemeval, locomo) or folder (csv, parquet); default <results>/exports/<run>/",
    )
    parser.add_argument(
        "--include-failed",
        action="store_true",
        help="also export questions that were not answered (with an empty answer)",
    )
    add_results_option(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    run_id = resolve_run(args.results, args.run)
    out = args.out or default_export_path(args.results, run_id, args.fmt)
    for path in export_run(args.results, run_id, args.fmt, out, include_failed=args.include_failed):
        print(path)
    return 0

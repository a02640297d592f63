"""``omlab report RUN``: write a run's report (metrics tables, optional plots) under results/reports/;
``omlab report --format html`` (no run): write the run browser of the whole results folder as a
static site (results/site/index.html)."""

from __future__ import annotations

import argparse
from pathlib import Path

from omlab.bench.report.run_index import headline_text
from omlab.bench.results import metrics_df, runs_df
from omlab.cli.options import add_results_option, resolve_run
from omlab.viz.report import write_production_plot
from omlab.viz.run_report import write_report

SITE_FOLDER = "site"
"""Where the static site goes under the results folder unless ``--out`` says otherwise."""


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "report",
        help="write a run's report, or every run's as a static site",
        description="Print a run's headline numbers and write its report (metrics table, accuracy per type, "
        "cost by role/model/tier, compression and blocking) in results/reports/<run>/. Without a run, "
        "--format html writes the run browser of the whole results folder (what `omlab view` serves: run "
        "list with filters and sort, each run's report, plots, questions and model calls with prompt and "
        "response, comparisons within a sweep or suite) as plain HTML files in results/site/, to open from "
        "disk with no server.",
        epilog="examples:\n  omlab report latest\n  omlab report 20250101T000000-abcdef --plots --format html\n"
        "  omlab report --format html            (the static site: results/site/index.html)\n"
        "  omlab report --format html --plots --out /tmp/omlab-site",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "run", nargs="?", help="run id, or 'latest'; none with --format html: every run, as a static site"
    )
    add_results_option(parser)
    parser.add_argument(
        "--plots",
        action="store_true",
        help="also draw the run's plots (PNG); for the site, every run's (else it copies plots drawn before)",
    )
    parser.add_argument("--format", choices=("md", "html"), default="md", help="report format (default md)")
    parser.add_argument(
        "--out", metavar="DIR", help="write here instead of results/reports/<run>/ (the site: results/site/)"
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.run is None:
        if args.format != "html":
            raise ValueError(
                "name a run (or 'latest'); without one, --format html writes every run's pages as a static site"
            )
        return _site(args)
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


def _site(args: argparse.Namespace) -> int:
    from omlab.viz.site.static_site import write_site

    if not (Path(args.results) / "runs").is_dir():
        raise ValueError(
            f"no runs under {Path(args.results) / 'runs'} (run `omlab run SUITE` first, or pass --results)"
        )
    out = Path(args.out) if args.out else Path(args.results) / SITE_FOLDER
    site = write_site(args.results, out, plots=args.plots)
    print(
        f"site: {site.index} ({site.runs} runs, {site.pages} pages, {site.comparisons} comparisons, "
        f"{site.plots} plots; open it in a browser, no server needed)"
    )
    return 0

"""``omlab run SUITE``: run (or resume) every configuration of a suite and print its headline."""

from __future__ import annotations

import argparse

from omlab.bench.report.run_index import headline_text
from omlab.bench.results.layout import run_path
from omlab.bench.run.failures import EXIT_INCOMPLETE
from omlab.bench.run.options import RunSummary
from omlab.bench.run.runner import run_suite
from omlab.cli.options import add_run_options, run_options


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "run",
        epilog="examples:\n  omlab run benchmarks/quickstart.toml\n  omlab run benchmarks/quickstart.toml --limit 2 --workers 2",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="run a benchmark suite (resumable)",
        description="Run every configuration of a suite; a killed run resumes "
        "where it stopped when the same command is run again, and so does a run that ended "
        "incomplete (a conversation phase or a question failed): the failed parts are retried. "
        f"Exit status: 0 all runs complete, {EXIT_INCOMPLETE} a run ended incomplete (listed in the "
        "summary), 2 a usage or suite error, 1 a crash, 130 interrupted.",
    )
    add_run_options(parser)
    parser.add_argument("--report", action="store_true", help="write each run's report (with plots) afterwards")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    summaries = run_suite(args.suite, run_options(args))
    for summary in summaries:
        print(summary_line(summary))
        for line in summary.failures.lines():
            print(f"  {line}")
        print(f"  results: {run_path(args.results, summary.run_id)}")
        if args.report:
            from omlab.viz.run_report import write_report

            print(f"  report:  {write_report(args.results, summary.run_id, plots=True)}")
    return exit_status(summaries)


def exit_status(summaries: list[RunSummary]) -> int:
    """0 when every run is complete, :data:`~omlab.bench.run.failures.EXIT_INCOMPLETE` otherwise
    (after a closing line saying how to retry)."""
    incomplete = [s for s in summaries if s.failures.incomplete]
    if not incomplete:
        return 0
    print(
        f"{len(incomplete)} of {len(summaries)} run(s) incomplete; run the same command again "
        "(or with --resume RUN_ID) to retry the failed phases"
    )
    return EXIT_INCOMPLETE


def summary_line(summary: RunSummary) -> str:
    """``<run> <config> <status> … accuracy 62.5% · retention … · failed=…`` for one run: the
    headline numbers ``omlab runs`` and ``omlab report`` print (:mod:`omlab.bench.report.run_index`)."""
    values = [headline_text(summary.metrics) if len(summary.metrics) else "no metrics"]
    failures = summary.failures
    values.append(f"failed={failures.counts()}" if failures.incomplete else "failed=0")
    if summary.warnings:
        values.append(f"warnings={summary.warnings}")
    resumed = " (resumed)" if summary.resumed else ""
    return (
        f"{summary.run_id}  {summary.config_name}  {summary.status}{resumed}  "
        f"{summary.n_conversations} conversations, {summary.n_questions} questions, {summary.wall_s:.1f}s  "
        + "  ".join(values)
    )

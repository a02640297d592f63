"""Option bundles shared by several commands (``--results``, the run options) and run lookup."""

from __future__ import annotations

import argparse
import os
import sys

from omlab.bench.report.latest import latest_run
from omlab.bench.results import ResultsCatalog
from omlab.bench.results.layout import parts_path, run_path, runs_dir
from omlab.bench.run.options import DEFAULT_RESULTS_DIR, RunOptions
from omlab.bench.suite.retry import parse_seconds_flag
from omlab.bench.suite.tables import EXECUTORS, check_address

CACHE_MODES = ("off", "read", "write", "strict")


def add_results_option(parser: argparse.ArgumentParser) -> None:
    """``--results DIR`` (default ``$OMLAB_RESULTS`` or ``results``)."""
    parser.add_argument(
        "--results",
        metavar="DIR",
        default=os.environ.get("OMLAB_RESULTS", DEFAULT_RESULTS_DIR),
        help="results directory (default: $OMLAB_RESULTS or ./results)",
    )


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``omlab run`` and ``omlab sweep``."""
    parser.add_argument("suite", help="suite TOML file (see benchmarks/)")
    add_results_option(parser)
    parser.add_argument(
        "--resume",
        metavar="RUN",
        help="resume this run (default: the latest unfinished run of the same suite and configuration)",
    )
    parser.add_argument("--new", action="store_true", help="always start a new run (no automatic resume)")
    parser.add_argument("--limit", type=_positive, metavar="N", help="at most N conversations")
    parser.add_argument("--cache-mode", choices=CACHE_MODES, help="response cache mode (overrides [cache] mode)")
    parser.add_argument(
        "--no-prepared",
        action="store_true",
        help="do not reuse prepared memories from earlier runs (observe again)",
    )
    parser.add_argument("--workers", type=_positive, metavar="N", help="worker processes for offline runs")
    parser.add_argument(
        "--concurrency", type=_positive, metavar="N", help="conversations in flight for provider-bound runs"
    )
    parser.add_argument(
        "--executor", choices=EXECUTORS, help="where conversations run: pool (local processes) or ray (overrides [run])"
    )
    parser.add_argument(
        "--address",
        type=_ray_address,
        metavar="ADDR",
        help="with --executor ray: join this cluster (auto, ray://HOST:PORT); default: start a local Ray",
    )
    parser.add_argument(
        "--timeout",
        action="append",
        metavar="[ROLE=]SECONDS",
        help="seconds one model request may take, for every role or one role "
        "(observer, reflector, extractor, actor, judge); repeatable; overrides [retry]",
    )
    parser.add_argument(
        "--deadline",
        action="append",
        metavar="[ROLE=]SECONDS",
        help="seconds one model call may take with all its retries; repeatable; overrides [retry]",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")


def run_options(args: argparse.Namespace, **extra: object) -> RunOptions:
    """:class:`RunOptions` from parsed ``add_run_options`` arguments."""
    return RunOptions(
        results_dir=args.results,
        resume=args.resume,
        auto_resume=not args.new,
        limit=args.limit,
        cache_mode=args.cache_mode,
        reuse_prepared=False if args.no_prepared else None,
        workers=args.workers,
        concurrency=args.concurrency,
        progress=not args.quiet,
        executor=args.executor,
        address=args.address,
        timeout=_seconds_flags(args.timeout, "--timeout"),
        deadline=_seconds_flags(args.deadline, "--deadline"),
        **extra,
    )


def _seconds_flags(values: list[str] | None, flag: str) -> dict[str, float] | None:
    """``--timeout 30 --timeout judge=10`` as ``{"": 30.0, "judge": 10.0}`` (None when absent)."""
    if not values:
        return None
    return dict(parse_seconds_flag(value, flag) for value in values)


def resolve_run(results: str, run: str) -> str:
    """``latest`` means the latest readable run under ``results`` that is not a sweep cell (else the
    latest cell), and which run it picked is printed on stderr; anything else is a run id.

    Raises:
        ValueError: The named run's file exists but cannot be read (the message says why)."""
    if run == "latest":
        picked = latest_run(results)
        print(f"omlab: {picked.describe()}", file=sys.stderr)
        return picked.run_id
    if not run_path(results, run).exists() and not parts_path(results, run).exists():
        raise ValueError(f"no run {run!r} under {runs_dir(results)}; `omlab runs --results {results}` lists the runs")
    problem = ResultsCatalog(results).problem_of(run)
    if problem is not None:
        raise ValueError(f"run {run!r} cannot be read: {run_path(results, run)}: {problem}")
    return run


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _ray_address(text: str) -> str:
    try:
        return check_address(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"--address {error}") from None

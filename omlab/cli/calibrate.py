"""``omlab calibrate RUN...`` (or ``--mastra DB``): fit a model profile from runs' model calls, or
from a Mastra database's OM markers, and write it as JSON.

The profile (format in :mod:`omlab.bench.calibration.profile`) is what a suite's
``[models.profiles]`` points the offline Observer/Reflector at."""

from __future__ import annotations

import argparse
from pathlib import Path

from omlab.bench.calibration import calibrate_run, default_profile_path
from omlab.cli.options import add_results_option, resolve_run


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "calibrate",
        epilog=(
            "examples:\n  omlab calibrate latest\n  omlab calibrate RUN1 RUN2 --role observer --out profiles/observer.json\n"
            "  omlab calibrate --mastra memory.db --thread support-1\n\n"
            'then, in a suite:\n  [models.profiles]\n  observer = "profiles/observer.json"'
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="fit a profile (compression, output length, latency, failures) from a run's model calls",
    )
    parser.add_argument(
        "runs", nargs="*", metavar="RUN", help="run id(s), or 'latest': runs made with real providers (a sweep's cells)"
    )
    parser.add_argument("--mastra", metavar="DB", help="fit production's OM markers of a Mastra database instead")
    parser.add_argument("--thread", action="append", metavar="ID", help="--mastra: only this thread (repeatable)")
    parser.add_argument("--resource", metavar="ID", help="--mastra: only this resource's threads")
    parser.add_argument("--model", metavar="NAME", help="--mastra: the model the markers came from (a label)")
    add_results_option(parser)
    parser.add_argument(
        "--role",
        action="append",
        dest="roles",
        metavar="R",
        help="fit this role (repeatable; default: observer and reflector)",
    )
    parser.add_argument(
        "--out", metavar="PATH", help="profile file to write (default: RESULTS/profiles/RUN.json, the first RUN)"
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    roles = tuple(args.roles or ("observer", "reflector"))
    if args.mastra:
        if args.runs:
            raise ValueError("give runs or --mastra DB, not both")
        from omlab.bench.calibration.mastra import calibrate_mastra

        selection = {"threads": args.thread, "resource": args.resource}
        profile = calibrate_mastra(args.mastra, roles, model=args.model, **selection)
        path = profile.write(args.out or Path(args.results) / "profiles" / f"{Path(args.mastra).stem}.json")
    else:
        if not args.runs:
            raise ValueError("name a run (or 'latest'), or give --mastra DB")
        run_ids = [resolve_run(args.results, run) for run in args.runs]
        profile = calibrate_run(args.results, run_ids, roles=roles)
        path = profile.write(args.out or default_profile_path(args.results, run_ids[0]))
    for fit in profile.fits:
        line = f"{fit.role:<9} {fit.model}: {fit.calls} calls"
        if fit.compression is not None:
            ratios = ", ".join(f"{r:.2f}" for r in fit.compression.ratios)
            line += f"; compression {ratios} (content {fit.compression.content_tokens[0]:.0f}"
            line += f"-{fit.compression.content_tokens[-1]:.0f} tokens)"
        if fit.latency is not None:
            line += f"; latency p50 {fit.latency['p50_s']:.2f} s, p95 {fit.latency['p95_s']:.2f} s"
        if fit.failure_rate is not None:
            line += f"; failed {fit.failure_rate:.1%}"
        print(line)
    print(f"profile written to {path}")
    return 0

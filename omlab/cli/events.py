"""``omlab events list RUN``: browse a run's engine events (data parts and debug events)."""

from __future__ import annotations

import argparse

from omlab.bench.results import events_df
from omlab.cli.options import add_results_option, resolve_run

NOISE_TYPES: tuple[str, ...] = ("data-om-status", "step_progress")
"""Parts the engine emits at every step; listed only with ``--all`` or ``--type``."""

COLUMNS = [
    "seq",
    "ts",
    "conversation_id",
    "kind",
    "type",
    "operation_type",
    "triggered_by",
    "tokens_in",
    "tokens_out",
    "duration_ms",
]


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "events",
        help="browse a run's engine events",
        description="Browse the engine events a run recorded (data-om-* parts and debug events).",
        epilog="example:\n  omlab events list latest --type data-om-activation",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    listing = verbs.add_parser(
        "list",
        help="list events in order",
        description="List a run's events in order. Status and progress parts are hidden unless --all "
        "or --type asks for them.",
        epilog="examples:\n  omlab events list latest\n  omlab events list latest --type data-om-observation-end "
        "--payload\n  omlab events list latest --all --limit 0",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument("run", help="run id, or 'latest'")
    add_results_option(listing)
    listing.add_argument(
        "--type",
        action="append",
        dest="types",
        metavar="T",
        help="only this event type (repeatable), e.g. data-om-activation",
    )
    listing.add_argument("--conversation", metavar="ID", help="only this conversation")
    listing.add_argument(
        "--limit", type=int, default=50, metavar="N", help="show at most N events (default 50; 0: all)"
    )
    listing.add_argument("--payload", action="store_true", help="print each event's JSON payload too")
    listing.add_argument(
        "--all", action="store_true", help=f"also show the {', '.join(NOISE_TYPES)} parts (hidden by default)"
    )
    listing.set_defaults(handler=handle_list)


def handle_list(args: argparse.Namespace) -> int:
    run_id = resolve_run(args.results, args.run)
    frame = events_df(args.results, run_id, conversation_id=args.conversation)
    if args.types:
        known = sorted(set(frame["type"].astype(str)))
        unknown = [t for t in args.types if t not in known]
        if unknown:
            raise ValueError(
                f"--type {', '.join(unknown)}: no such event type in run {run_id}; types: {', '.join(known)}"
            )
        frame = frame[frame["type"].astype(str).isin(args.types)]
    elif not args.all:
        noise = frame["type"].astype(str).isin(NOISE_TYPES)
        hidden = int(noise.sum())
        frame = frame[~noise]
        if hidden:
            print(f"({hidden} {'/'.join(NOISE_TYPES)} events hidden; --all shows them)")
    total = len(frame)
    if args.limit:
        frame = frame.head(args.limit)
    if frame.empty:
        print(f"no events in run {run_id}" + (" with these filters" if args.types or args.conversation else ""))
        return 0
    if args.payload:
        for _, row in frame.iterrows():
            print(f"#{row['seq']} {row['ts']} {row['type']}  {row['payload']}")
    else:
        print(frame[COLUMNS].to_string(index=False))
    print(f"({len(frame)} of {total} events)")
    return 0

"""``omlab events list RUN``: browse a run's engine events (data parts and debug events)."""

from __future__ import annotations

import argparse

from omlab.bench.results import events_df
from omlab.cli.options import add_results_option, resolve_run

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
    parser = commands.add_parser("events", help="browse a run's engine events")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    listing = verbs.add_parser("list", help="list events in order")
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
    listing.set_defaults(handler=handle_list)


def handle_list(args: argparse.Namespace) -> int:
    run_id = resolve_run(args.results, args.run)
    frame = events_df(args.results, run_id, conversation_id=args.conversation, types=args.types)
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

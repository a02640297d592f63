"""``omlab calls list RUN``: browse a run's model calls (tokens, cost, latency, tier, cache hits).

Two costs per call: ``cost_usd`` as configured (the call's tokens priced with the run's prices,
whether or not it was sent) and ``cost_usd_paid`` (what this run paid a provider: 0 for a call
served from the response cache or a reused prepared memory). A call routed by
``ModelByInputTokens`` shows ``routing_tokens``, the count its tier was chosen on (the new
messages for the Observer, the observations for the Reflector), beside ``input_tokens``, the
whole prompt it was sent."""

from __future__ import annotations

import argparse

from omlab.bench.results import calls_df
from omlab.bench.suite.retry import ROLES
from omlab.cli.options import add_results_option, resolve_run

COLUMNS = [
    "conversation_id",
    "role",
    "resolved_model",
    "tier",
    "routing_tokens",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "cost_usd_paid",
    "latency_s",
    "cached",
    "error",
]


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "calls",
        epilog="examples:\n  omlab calls list latest --role observer",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="browse a run's model calls",
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    listing = verbs.add_parser(
        "list",
        help="list model calls",
        epilog="examples:\n  omlab calls list latest\n  omlab calls list latest --role observer --role reflector --limit 0",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument("run", help="run id, or 'latest'")
    add_results_option(listing)
    listing.add_argument(
        "--role",
        action="append",
        dest="roles",
        choices=ROLES,
        metavar="R",
        help=f"only this role (repeatable): {', '.join(ROLES)}",
    )
    listing.add_argument("--limit", type=int, default=50, metavar="N", help="show at most N calls (default 50; 0: all)")
    listing.set_defaults(handler=handle_list)


def handle_list(args: argparse.Namespace) -> int:
    run_id = resolve_run(args.results, args.run)
    frame = calls_df(args.results, run_id, roles=args.roles)
    total, cost, paid = len(frame), frame["cost_usd"].fillna(0).sum(), frame["cost_usd_paid"].fillna(0).sum()
    if args.limit:
        frame = frame.head(args.limit)
    if frame.empty:
        print(f"no model calls in run {run_id}" + (" with these roles" if args.roles else ""))
        return 0
    # the question column only when some listed call was made for a question (actor, judge)
    columns = COLUMNS[:2] + ["question_id"] + COLUMNS[2:] if frame["question_id"].notna().any() else COLUMNS
    if frame["routing_tokens"].isna().all():  # no routed call listed: the column would be empty
        columns = [column for column in columns if column != "routing_tokens"]
    print(frame[columns].to_string(index=False))
    print(
        f"({len(frame)} of {total} calls; total cost as configured ${cost:.4f}, "
        f"paid in this run ${paid:.4f}; cost_usd = as configured, cost_usd_paid = paid)"
    )
    return 0

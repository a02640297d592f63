"""``omlab runs``: list the runs (newest first, with headline numbers), tag them, delete them."""

from __future__ import annotations

import argparse

from omlab.bench.report.run_index import delete_run, runs_overview, tag_run
from omlab.bench.results.schema import RUN_STATUSES
from omlab.cli.options import add_results_option, resolve_run


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "runs",
        help="list, tag and delete runs",
        description="List the runs under the results directory, newest first, with suite, configuration, "
        "status, tags and headline numbers; tag or delete them.",
        epilog="examples:\n  omlab runs\n  omlab runs --suite quickstart --status finished\n  omlab runs --sweep 3fa2c1d0\n  omlab runs tag latest baseline\n  omlab runs delete 20250101T000000-abcdef --yes",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_results_option(parser)
    parser.add_argument("--limit", type=int, default=20, metavar="N", help="show at most N runs (default 20; 0: all)")
    parser.add_argument("--suite", metavar="NAME", help="only the runs of this suite")
    parser.add_argument("--status", choices=(*RUN_STATUSES, "unreadable"), help="only the runs with this status")
    parser.add_argument("--tag", metavar="TAG", help="only the runs with this tag")
    parser.add_argument("--sweep", metavar="ID", help="only the cells of this sweep")
    parser.set_defaults(handler=handle_list)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")
    tag = verbs.add_parser(
        "tag",
        help="add (or --remove) tags of a run",
        description="Add tags to a run, or remove them with --remove; tags show in 'omlab runs'.",
        epilog="example:\n  omlab runs tag latest baseline tight-buffers",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    tag.add_argument("run", help="run id, or 'latest'")
    tag.add_argument("tags", nargs="+", metavar="TAG")
    tag.add_argument("--remove", action="store_true", help="remove these tags instead of adding them")
    add_results_option(tag)
    tag.set_defaults(handler=handle_tag)
    delete = verbs.add_parser(
        "delete",
        help="delete runs (their files)",
        description="Delete runs' files; without --yes only says what would be deleted.",
        epilog="example:\n  omlab runs delete 20250101T000000-abcdef --yes",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    delete.add_argument("runs", nargs="+", metavar="RUN", help="run ids, or 'latest'")
    delete.add_argument("--yes", action="store_true", help="really delete")
    add_results_option(delete)
    delete.set_defaults(handler=handle_delete)


def handle_list(args: argparse.Namespace) -> int:
    filters = {"suite": args.suite, "status": args.status, "tag": args.tag, "sweep": args.sweep}
    frame = runs_overview(args.results, **filters)
    if frame.empty:
        filtered = any(value is not None for value in filters.values())
        print("no runs match these filters" if filtered else f"no runs under {args.results}")
        return 0
    total = len(frame)
    if args.limit:
        frame = frame.head(args.limit)
    print(_left_aligned(frame.fillna("").astype(str)))
    if len(frame) < total:
        print(f"({len(frame)} of {total} runs; --limit 0 shows all)")
    return 0


def _left_aligned(frame) -> str:
    """The frame as left-aligned text columns; the last (the headline) is never cut or padded."""
    widths = [max(len(column), *map(len, frame[column])) for column in frame.columns[:-1]]

    def line(cells) -> str:
        return "  ".join([cell.ljust(width) for cell, width in zip(cells, widths, strict=False)] + [cells[-1]])

    return "\n".join([line(list(frame.columns)), *(line(list(row)) for row in frame.itertuples(index=False))])


def handle_tag(args: argparse.Namespace) -> int:
    run_id = resolve_run(args.results, args.run)
    kept = tag_run(args.results, run_id, remove=args.tags) if args.remove else tag_run(args.results, run_id, args.tags)
    print(f"{run_id}: {', '.join(kept) or '(no tags)'}")
    return 0


def handle_delete(args: argparse.Namespace) -> int:
    # an unreadable run must stay deletable: only "latest" goes through the readable-run lookup
    run_ids = [resolve_run(args.results, run) if run == "latest" else run for run in args.runs]
    if not args.yes:
        print("would delete " + ", ".join(run_ids) + " (add --yes to delete)")
        return 0
    for run_id in run_ids:
        removed = delete_run(args.results, run_id)
        print(f"deleted {run_id} ({len(removed)} path(s))")
    return 0

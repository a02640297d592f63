"""``omlab cache info|clear``: the response cache and the prepared memories under a results folder."""

from __future__ import annotations

import argparse
import json

from omlab.bench.run.prepared import PreparedStore
from omlab.bench.suite.run_settings import CACHE_FILE, PREPARED_DIR, cache_dir
from omlab.cli.options import add_results_option
from omlab.llm.cache import ResponseCache
from omlab.llm.cache_damage import CorruptCacheError, check_cache_file, remove_cache_file


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "cache",
        epilog="examples:\n  omlab cache info\n  omlab cache clear --responses",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        help="inspect or clear the caches",
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    info = verbs.add_parser(
        "info",
        help="entries and size of the response cache and prepared memories",
        epilog="examples:\n  omlab cache info\n  omlab cache info --json --results results/",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_results_option(info)
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(handler=handle_info)
    clear = verbs.add_parser(
        "clear",
        help="delete cached responses and/or prepared memories",
        epilog="examples:\n  omlab cache clear --responses\n  omlab cache clear --prepared --results results/",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_results_option(clear)
    clear.add_argument("--responses", action="store_true", help="only the response cache")
    clear.add_argument("--prepared", action="store_true", help="only the prepared memories")
    clear.set_defaults(handler=handle_clear)


def handle_info(args: argparse.Namespace) -> int:
    folder = cache_dir(args.results)
    responses_path = folder / CACHE_FILE
    check_cache_file(responses_path)  # damaged: an error naming the file and the fix
    responses = (
        ResponseCache(responses_path, mode="read").info()
        if responses_path.exists()
        else {"path": str(responses_path), "entries": 0, "bytes": 0}
    )
    prepared = PreparedStore(folder / PREPARED_DIR).info()
    if args.json:
        print(json.dumps({"responses": responses, "prepared": prepared}, indent=2, default=str))
        return 0
    print(f"responses: {responses['entries']:,} entries, {responses['bytes']:,} bytes  ({responses['path']})")
    for model, count in sorted(responses.get("by_model", {}).items()):
        print(f"  {model}: {count:,}")
    print(f"prepared memories: {prepared['entries']:,} conversations, {prepared['bytes']:,} bytes", end="")
    print(f"  ({prepared['path']})")
    return 0


def handle_clear(args: argparse.Namespace) -> int:
    folder = cache_dir(args.results)
    both = not (args.responses or args.prepared)
    if args.responses or both:
        path = folder / CACHE_FILE
        try:
            check_cache_file(path)
            removed = ResponseCache(path, mode="read").clear() if path.exists() else 0
            print(f"removed {removed:,} cached responses")
        except CorruptCacheError:
            gone = remove_cache_file(path)
            print(f"removed the damaged response cache {path} ({len(gone)} file{'' if len(gone) == 1 else 's'})")
    if args.prepared or both:
        print(f"removed {PreparedStore(folder / PREPARED_DIR).clear():,} prepared memories")
    return 0

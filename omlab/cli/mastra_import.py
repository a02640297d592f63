"""``omlab import DB``: read a Mastra storage database and print what it holds (read-only)."""

from __future__ import annotations

import argparse
import json
from datetime import datetime
from pathlib import Path

from omlab.bench.datasets.mastra import markers_df, om_records_df, read_mastra

EPILOG = """examples:
  omlab import mastra.db
  omlab import mastra.db --resource user-ana --since 2025-03-01T00:00:00Z --json
  omlab import postgresql://me@127.0.0.1:5432/app --thread t-42 --markers markers.parquet

Replay the threads through other settings with a suite: [dataset] kind = "mastra", path = "mastra.db"."""


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "import",
        help="read a Mastra database (LibSQL file or postgresql:// URL) and print the import summary",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("database", metavar="DB", help="a @mastra/libsql file or a @mastra/pg postgresql:// URL")
    parser.add_argument("--resource", metavar="ID", help="only this resource's threads")
    parser.add_argument("--thread", action="append", metavar="ID", help="only this thread (repeatable)")
    parser.add_argument("--since", type=_moment, metavar="ISO", help="only messages at or after (with offset)")
    parser.add_argument("--until", type=_moment, metavar="ISO", help="only messages before (with offset)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--records", type=Path, metavar="FILE.parquet", help="write the OM records (om_records_df)")
    parser.add_argument("--markers", type=Path, metavar="FILE.parquet", help="write the OM markers (markers_df)")
    parser.set_defaults(handler=handle)


def _moment(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} needs an offset (e.g. 2025-03-01T00:00:00Z)")
    return moment


def handle(args: argparse.Namespace) -> int:
    imported = read_mastra(
        args.database, resource=args.resource, threads=args.thread, since=args.since, until=args.until
    )
    print(json.dumps(imported.summary.to_dict(), indent=2) if args.json else imported.summary.format())
    for path, frame in ((args.records, om_records_df), (args.markers, markers_df)):
        if path is not None:
            table = frame(imported)
            if "payload" in table:
                table = table.assign(payload=table["payload"].map(lambda p: json.dumps(p, ensure_ascii=False)))
            table.to_parquet(path, index=False)
            print(f"wrote {path} ({len(table)} rows)")
    return 0

"""``omlab view``: browse the runs of a results folder in a web browser (no kernel needed)."""

from __future__ import annotations

import argparse

from omlab.cli.options import add_results_option
from omlab.viz.site.server import DEFAULT_PORT, Server


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "view",
        help="browse runs in a web browser",
        description="Serve a run browser over the results folder: the run list (sortable, filterable, sweeps "
        "grouped), each run's report, questions and model calls, and two runs compared. Listens on "
        "127.0.0.1 unless --host says otherwise; Ctrl-C stops it.",
        epilog="examples:\n  omlab view\n  omlab view --results results --port 8800\n"
        "  omlab view --port 0   (any free port; the URL is printed)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_results_option(parser)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    server = Server(args.results, args.host, args.port)
    print(f"omlab view: {server.url} (results {args.results}; Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    finally:
        server.stop()
    return 0

"""``omlab``: the command line (``omlab <noun> <verb>``), thin commands over library verbs.

Commands::

    omlab run SUITE [--resume RUN] [--limit N] [--results DIR] [--cache-mode M] [--workers N]
              [--executor pool|ray] [--address auto|ray://HOST:PORT]
    omlab sweep SUITE [same options] [--csv PATH]
    omlab runs [--limit N] | omlab runs tag RUN TAG... [--remove] | omlab runs delete RUN... --yes
    omlab report RUN|latest [--plots] [--format md|html] [--results DIR] | omlab report --format html [--out DIR]
    omlab view [--results DIR] [--port N] [--host ADDR]
    omlab events list RUN|latest [--type T] [--conversation C] [--limit N]
    omlab calls list RUN|latest [--role R] [--limit N]
    omlab calibrate RUN|latest [RUN...] | --mastra DB [--thread T] [--role R] [--out PATH]
    omlab datasets list | omlab datasets build synthetic|longmemeval|locomo ...
    omlab cache info | omlab cache clear [--responses] [--prepared]
    omlab export RUN|latest --format longmemeval|locomo|csv|parquet [--out PATH]
    omlab import DB [--resource R] [--thread T]... [--since ISO] [--until ISO] [--json]

Exit status: 0 done; 1 a crash (a traceback); 2 an error a user can fix (a bad suite file, an
unknown run: one line on stderr); 3 ``run``/``sweep`` ended with a run incomplete (a conversation
phase or a question failed: listed in the summary, retried by running the command again); 130
interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence

from omlab.bench.results.catalog import UnreadableRunWarning
from omlab.bench.results.redact import redact_text
from omlab.cli import cache, calibrate, calls, datasets, events, export, mastra_import, report, run, runs, sweep, view

_COMMANDS = (run, sweep, runs, report, view, events, calls, calibrate, datasets, cache, export, mastra_import)


def build_parser() -> argparse.ArgumentParser:
    """The ``omlab`` argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="omlab",
        description="Observational Memory lab: run, sweep and report memory benchmarks.",
        epilog="examples:\n  omlab run benchmarks/quickstart.toml\n  omlab runs\n  omlab report latest --plots\n"
        "  omlab COMMAND --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in _COMMANDS:
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``omlab`` script; returns the exit status."""
    from omlab.llm.env import prepare_environment

    prepare_environment()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", UnreadableRunWarning)
            warnings.showwarning = _one_line_warnings(warnings.showwarning)
            status = int(args.handler(args) or 0)
            sys.stdout.flush()
            return status
    except BrokenPipeError:
        # `omlab calls list RUN | head`: the reader has all it wanted; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("interrupted; resume with the same command (or --resume RUN_ID)", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError, RuntimeError) as error:
        if getattr(args, "debug", False):
            raise
        print(f"omlab {args.command}: {redact_text(str(error))}", file=sys.stderr)
        return 2


def _one_line_warnings(fallback: Callable[..., None]) -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints each skipped unreadable run once, as one line."""
    shown: set[str] = set()

    def show(message: Warning | str, category: type[Warning], *args: object, **kwargs: object) -> None:
        if not issubclass(category, UnreadableRunWarning):
            fallback(message, category, *args, **kwargs)
            return
        text = str(message)
        if text not in shown:
            shown.add(text)
            print(f"omlab: warning: {text}", file=sys.stderr)

    return show


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

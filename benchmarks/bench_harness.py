"""Throughput of the benchmark harness: conversations per minute and events written per second.

Run: ``.venv/bin/python benchmarks/bench_harness.py [--conversations 4] [--tokens 30000]``.

For 1, 2 and 4 conversations in parallel (worker processes; the work is CPU-bound with the offline
models), runs the full pipeline (prepare, answer, judge) on ``--conversations`` fresh synthetic
conversations with the response cache off and no prepared-memory reuse, and prints wall time,
conversations/min and result rows written per second (events, and all tables together). Then
measures the events-table write rate on its own: the event rows of one replay pushed through
``RunWriter.add_events`` (row checks, JSON, Arrow batches, DuckDB appends, live Parquet shards).
Numbers depend on the machine (``os.cpu_count()`` is printed): more workers than cores only adds
overhead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from omlab.bench.datasets import generate_synthetic
from omlab.bench.results import ResultsCatalog, RunWriter, calls_df, events_df, steps_df
from omlab.bench.run.options import RunOptions
from omlab.bench.run.replay import replay_conversation
from omlab.bench.run.runner import run_suite
from omlab.engine.scheduler import TokenRateLatency
from omlab.llm.client import ModelClient

SUITE = """
[suite]
name = "bench-harness"

[dataset]
kind = "synthetic"
seeds = {seeds}
target_tokens = {tokens}
n_questions = 12

[engine]
observation = {{ messageTokens = 4000, bufferTokens = 0.2, blockAfter = 1.2 }}
reflection = {{ observationTokens = 6000 }}

[latency]
default = {{ kind = "token-rate" }}

[cache]
mode = "off"
prepared = false
"""


def run_pipeline(folder: Path, conversations: int, tokens: int, workers: int) -> dict[str, float]:
    """One full run with ``workers`` processes; wall time and rows written."""
    suite = folder / f"bench-{workers}.toml"
    suite.write_text(SUITE.format(seeds=list(range(1, conversations + 1)), tokens=tokens), encoding="utf-8")
    results = folder / f"results-{workers}"
    started = time.perf_counter()
    (summary,) = run_suite(suite, RunOptions(results_dir=results, workers=workers, progress=False, auto_resume=False))
    wall = time.perf_counter() - started
    catalog = ResultsCatalog(results)
    events = len(events_df(catalog, summary.run_id))
    rows = events + len(steps_df(catalog, summary.run_id)) + len(calls_df(catalog, summary.run_id))
    return {"wall_s": wall, "events": events, "rows": rows}


def events_write_rate(tokens: int, copies: int) -> dict[str, float]:
    """Event rows of one replay, written ``copies`` times through a RunWriter."""
    conversation = generate_synthetic(1, tokens, n_questions=0)
    result = asyncio.run(
        replay_conversation(
            conversation,
            {
                "observation": {"model": "omlab/observer", "messageTokens": 4000},
                "reflection": {"model": "omlab/reflector", "observationTokens": 6000},
            },
            make_client=lambda on_call: ModelClient(on_call=on_call),
            latency=TokenRateLatency(),
        )
    )
    rows = result.rows.events
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        with RunWriter(folder, run_info={"suite": "bench-events"}) as writer:
            for copy in range(copies):
                writer.add_events([{**row, "conversation_id": f"c{copy}"} for row in rows])
        wall = time.perf_counter() - started
    return {"rows": len(rows) * copies, "wall_s": wall, "rows_per_s": len(rows) * copies / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=4, help="conversations per run (default 4)")
    parser.add_argument("--tokens", type=int, default=30_000, help="tokens per conversation (default 30000)")
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 2, 4], help="worker counts (default 1 2 4)")
    parser.add_argument("--event-copies", type=int, default=20, help="replays' worth of events to write")
    args = parser.parse_args()

    print(
        f"machine: {os.cpu_count()} CPUs; {args.conversations} synthetic conversations of ~{args.tokens:,} "
        "tokens, 12 questions each, offline models, cache off"
    )
    print(f"{'parallel':>8}  {'wall s':>7}  {'conv/min':>8}  {'events':>7}  {'events/s':>9}  {'rows/s':>8}")
    with tempfile.TemporaryDirectory() as folder:
        for workers in args.parallel:
            result = run_pipeline(Path(folder), args.conversations, args.tokens, workers)
            wall = result["wall_s"]
            per_minute = 60 * args.conversations / wall
            print(
                f"{workers:>8}  {wall:>7.1f}  {per_minute:>8.1f}  {result['events']:>7,}  "
                f"{result['events'] / wall:>9,.0f}  {result['rows'] / wall:>8,.0f}"
            )
    rate = events_write_rate(args.tokens, args.event_copies)
    print(
        f"events table alone: {rate['rows']:,} rows in {rate['wall_s']:.2f} s = "
        f"{rate['rows_per_s']:,.0f} rows/s (RunWriter.add_events + flushes + close)"
    )


if __name__ == "__main__":
    main()

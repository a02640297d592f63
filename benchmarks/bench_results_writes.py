"""Throughput of the results writer and readers.

Run: ``.venv/bin/python benchmarks/bench_results_writes.py [--events 1000000] [--per-call 1000]``.
Writes ``--events`` event rows (realistic columns and a small JSON payload) through
``RunWriter.add_events`` in calls of ``--per-call`` rows, and prints:

* rows/s of ``add_events`` + flush + close (row checks, JSON, Arrow batches, DuckDB appends and
  the live Parquet shards), with the DuckDB append share, and the time spent building the row
  dicts reported separately;
* rows/s of DuckDB's row-at-a-time ``executemany`` on a sample, for contrast;
* the time to read the run back into a DataFrame with ``events_df``, from the closed file and from
  the live snapshot (Parquet shards) while the writer is still open.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from omlab.bench.results import ResultsCatalog, RunWriter, events_df

_T0 = datetime(2024, 1, 1, tzinfo=UTC)
_TYPES = ("data-om-observation-start", "data-om-observation-end", "data-om-buffering-end", "step_progress")


def make_events(count: int, start: int = 0) -> list[dict]:
    return [
        {
            "conversation_id": f"conv-{i // 100_000}",
            "ts": _T0 + timedelta(seconds=i),
            "type": _TYPES[i % 4],
            "cycle_id": f"obs-{i // 4}",
            "operation_type": "observation",
            "tokens_in": 1000 + i % 5000,
            "tokens_out": 100 + i % 700,
            "duration_ms": 12.5,
            "thread_id": "thread-1",
            "payload": {
                "cycleId": f"obs-{i // 4}",
                "tokensToObserve": 1000 + i % 5000,
                "threadId": "thread-1",
                "operationType": "observation",
            },
        }
        for i in range(start, start + count)
    ]


def bench_writes(results_dir: Path, events: int, per_call: int) -> tuple[float, float]:
    build = write = 0.0
    appending = _time_appends()
    writer = RunWriter(results_dir, "bench-writes", provenance={}, flush_seconds=None)
    done = 0
    while done < events:
        count = min(per_call, events - done)
        started = time.perf_counter()
        rows = make_events(count, start=done)
        built = time.perf_counter()
        writer.add_events(rows)
        write += time.perf_counter() - built
        build += built - started
        done += count
    started = time.perf_counter()
    writer.flush()
    live_read = _timed(lambda: events_df(ResultsCatalog(results_dir)))
    write += time.perf_counter() - started - live_read[0]
    started = time.perf_counter()
    writer.close()
    write += time.perf_counter() - started
    print(
        f"add_events + close     {events:>10,} rows  {write:7.2f} s  {events / write:>12,.0f} rows/s"
        f"   (building the row dicts: {build:.2f} s, not counted)"
    )
    append = appending()
    print(
        f"  of which DuckDB appends                 {append:7.2f} s  {events / append:>12,.0f} rows/s"
        f"   (the rest: row checks, JSON, Arrow batches, Parquet shards)"
    )
    print(f"events_df, live        {len(live_read[1]):>10,} rows  {live_read[0]:7.2f} s  (Parquet snapshot)")
    return write, live_read[0]


def _time_appends():
    """Wrap RunWriter._append_batch to total the time spent in DuckDB appends."""
    spent = [0.0]
    original = RunWriter._append_batch

    def timed_append(self, table, batch):
        started = time.perf_counter()
        original(self, table, batch)
        spent[0] += time.perf_counter() - started

    RunWriter._append_batch = timed_append
    return lambda: spent[0]


def bench_executemany(sample: int) -> None:
    connection = duckdb.connect()
    connection.execute("CREATE TABLE e (conversation_id VARCHAR, seq BIGINT, type VARCHAR, payload VARCHAR)")
    rows = [(f"c{i}", i, "data-om-status", "{}") for i in range(sample)]
    started = time.perf_counter()
    connection.executemany("INSERT INTO e VALUES (?, ?, ?, ?)", rows)
    elapsed = time.perf_counter() - started
    print(f"executemany (contrast) {sample:>10,} rows  {elapsed:7.2f} s  {sample / elapsed:>12,.0f} rows/s")


def _timed(action):
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--per-call", type=int, default=1000, help="rows per add_events call")
    parser.add_argument("--executemany-sample", type=int, default=5000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        results_dir = Path(folder)
        bench_writes(results_dir, options.events, options.per_call)
        elapsed, frame = _timed(lambda: events_df(results_dir))
        print(f"events_df, closed file {len(frame):>10,} rows  {elapsed:7.2f} s")
        size = sum(p.stat().st_size for p in (results_dir / "runs").glob("*.duckdb"))
        print(f"run file size          {size / 1e6:10.1f} MB")
    bench_executemany(options.executemany_sample)


if __name__ == "__main__":
    main()

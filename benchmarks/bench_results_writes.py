"""Throughput of the results writer and readers.

Run: ``.venv/bin/python benchmarks/bench_results_writes.py [--events 1000000] [--per-call 1000]
[--columns-per-call 5000]``.
Writes ``--events`` event rows (realistic columns and a small JSON payload) through
``RunWriter.add_events``, and prints:

* the verdict: rows/s of column-wise ``add_events`` (Arrow tables of ``--columns-per-call`` rows,
  by default the writer's flush size, which is how a Ray driver hands over a worker's rows) + flush + close — column
  checks, JSON validation and credential screening, DuckDB appends and the live Parquet shards —
  against the raw rate of the same DuckDB appends alone (the same Arrow batches, the writer's
  batch size, one transaction each, nothing else), as a ratio (target: at least 0.50); the two
  are timed in alternating rounds (``--rounds``) because this VM's speed drifts;
* rows/s of the same rows as row dicts (the per-row path, for contrast), with the DuckDB append
  share, and the time spent building the row dicts reported separately;
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
from statistics import median

import duckdb
import numpy as np
import pyarrow as pa

from omlab.bench.results import ResultsCatalog, RunWriter, events_df
from omlab.bench.results.schema import ddl

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


def make_event_columns(count: int, start: int = 0) -> pa.Table:
    """The rows of :func:`make_events`, built column-wise (payload as JSON text)."""
    index = np.arange(start, start + count)
    t0 = int(_T0.timestamp() * 1_000_000)
    tokens_in = 1000 + index % 5000
    cycle = [f"obs-{i}" for i in (index // 4).tolist()]
    return pa.table(
        {
            "conversation_id": [f"conv-{i}" for i in (index // 100_000).tolist()],
            "ts": pa.array(t0 + index * 1_000_000, type=pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            "type": pa.array(np.array(_TYPES, dtype=object)[index % 4], type=pa.string()),
            "cycle_id": cycle,
            "operation_type": pa.array(["observation"] * count),
            "tokens_in": tokens_in,
            "tokens_out": 100 + index % 700,
            "duration_ms": np.full(count, 12.5),
            "thread_id": pa.array(["thread-1"] * count),
            "payload": [
                f'{{"cycleId": "{c}", "tokensToObserve": {t}, "threadId": "thread-1", "operationType": "observation"}}'
                for c, t in zip(cycle, tokens_in.tolist(), strict=True)
            ],
        }
    )


def bench_columnar(results_dir: Path, events: int, per_call: int, rounds: int) -> None:
    """Column-wise writes against raw DuckDB appends of the same batches, in alternating rounds."""
    calls = [make_event_columns(min(per_call, events - done), start=done) for done in range(0, events, per_call)]
    writer_rates, raw_rates = [], []
    for round_number in range(rounds):
        run_id = f"bench-columns-{round_number}"
        started = time.perf_counter()
        with RunWriter(results_dir, run_id, provenance={}, flush_seconds=None) as writer:
            batch_rows = writer._flush_rows
            for batch in calls:
                writer.add_events(batch)
        writer_rates.append(events / (time.perf_counter() - started))
        raw_rates.append(_raw_append_rate(results_dir / f"raw-{round_number}.duckdb", calls, batch_rows))
        (results_dir / f"raw-{round_number}.duckdb").unlink()
    writer_rate, raw_rate = median(writer_rates), median(raw_rates)
    ratios = [w / r for w, r in zip(writer_rates, raw_rates, strict=True)]
    print(f"column-wise add_events + close {events:>10,} rows  {writer_rate:>12,.0f} rows/s  (median of {rounds})")
    print(f"raw DuckDB appends, same data  {events:>10,} rows  {raw_rate:>12,.0f} rows/s  (median of {rounds})")
    print(
        f"writer / raw append rate: {median(ratios):.2f}  (rounds {min(ratios):.2f}-{max(ratios):.2f}; "
        f"target >= 0.50: {'met' if median(ratios) >= 0.5 else 'NOT met'})"
    )


def _raw_append_rate(path: Path, calls: list[pa.Table], batch_rows: int) -> float:
    """Rows/s of appending ``calls`` to a fresh run file in ``batch_rows`` batches, nothing else."""
    connection = duckdb.connect(str(path))
    for statement in ddl():
        connection.execute(statement)
    whole = pa.concat_tables(calls)
    filled = whole.append_column("run_id", pa.array(["raw"] * whole.num_rows)).append_column(
        "seq", pa.array(np.arange(whole.num_rows))
    )
    total = filled.num_rows
    started = time.perf_counter()
    for offset in range(0, total, batch_rows):
        connection.register("incoming", filled.slice(offset, batch_rows))
        connection.execute("BEGIN TRANSACTION")
        connection.execute("INSERT INTO events BY NAME SELECT * FROM incoming")
        connection.execute("COMMIT")
        connection.unregister("incoming")
    connection.execute("CHECKPOINT")
    elapsed = time.perf_counter() - started
    connection.close()
    return total / elapsed


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
        f"row dicts: add_events + close {events:>10,} rows  {write:7.2f} s  {events / write:>12,.0f} rows/s"
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
    parser.add_argument("--per-call", type=int, default=1000, help="rows per add_events call (row dicts)")
    parser.add_argument(
        "--columns-per-call",
        type=int,
        default=5000,
        help="rows per column-wise add_events call (default: the writer's flush size; smaller calls pay the "
        "per-call checks more often: about 0.5 of the raw rate at 1000 rows per call)",
    )
    parser.add_argument("--executemany-sample", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3, help="alternating writer/raw rounds")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bench_columnar(Path(folder), options.events, options.columns_per_call, options.rounds)
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

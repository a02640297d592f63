"""Throughput of the storage implementations.

Run: ``.venv/bin/python benchmarks/bench_storage.py [--messages 10000] [--steps 2000]``.
For InMemoryStorage, DuckDBStorage(":memory:") and DuckDBStorage on a temporary file, prints
rows/s for:

* ``save_messages``: one batch of N new messages, then the same batch again (a pure upsert);
* ``get_messages``: the whole thread, and the engine's pattern ``after=cursor`` with a cursor near
  the end (a handful of new rows);
* ``step``: the replay pattern, one ``save_messages([m])`` then ``get_messages(after=cursor)``
  per message (reported as steps/s).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from omlab.engine.messages import Message, Part
from omlab.engine.storage import Storage
from omlab.storage import DuckDBStorage, InMemoryStorage

_T0 = datetime(2024, 1, 1, tzinfo=UTC)


def make_messages(count: int, thread_id: str = "bench-thread", start: int = 0) -> list[Message]:
    """``count`` messages a second apart, alternating user/assistant, with a realistic text size."""
    return [
        Message(
            id=f"{thread_id}-m{i:07d}",
            role="user" if i % 2 == 0 else "assistant",
            parts=[Part(type="text", text=f"Message {i}: " + "some ordinary conversational text " * 6)],
            created_at=_T0 + timedelta(seconds=i),
            thread_id=thread_id,
            resource_id="bench-resource",
        )
        for i in range(start, start + count)
    ]


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def bench_store(name: str, store: Storage, messages: int, steps: int) -> None:
    batch = make_messages(messages)
    insert = timed(lambda: store.save_messages(batch))
    upsert = timed(lambda: store.save_messages(batch))
    read_all = timed(lambda: store.get_messages("bench-thread"))
    cursor = batch[-10].created_at
    repeats = 200
    read_tail = timed(lambda: [store.get_messages("bench-thread", after=cursor) for _ in range(repeats)])

    stepping = make_messages(steps, thread_id="step-thread")

    def replay() -> None:
        for message in stepping:
            store.save_messages([message])
            store.get_messages("step-thread", after=message.created_at - timedelta(seconds=5))

    step_time = timed(replay)
    print(
        f"{name:<22} save_messages {messages / insert:>10,.0f} rows/s   upsert {messages / upsert:>10,.0f} rows/s   "
        f"get_messages {messages / read_all:>10,.0f} rows/s   after=cursor {repeats / read_tail:>8,.0f} calls/s   "
        f"step {steps / step_time:>7,.0f} steps/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=10_000, help="size of the bulk batch (default 10000)")
    parser.add_argument("--steps", type=int, default=2_000, help="save+read steps to replay (default 2000)")
    args = parser.parse_args()

    bench_store("InMemoryStorage", InMemoryStorage(), args.messages, args.steps)
    with DuckDBStorage(":memory:") as store:
        bench_store("DuckDBStorage(:memory:)", store, args.messages, args.steps)
    with tempfile.TemporaryDirectory() as folder, DuckDBStorage(Path(folder) / "bench.duckdb") as store:
        bench_store("DuckDBStorage(file)", store, args.messages, args.steps)


if __name__ == "__main__":
    main()

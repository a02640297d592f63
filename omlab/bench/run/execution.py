"""Running conversation jobs concurrently while one process writes the results.

Two executors, chosen by the runner:

* **processes** (offline runs: every model is a built-in ``omlab/`` model, so the work is CPU
  bound): the :class:`~omlab.bench.run.executors.PoolExecutor` of worker processes (``forkserver`` start method where available, so workers
  never inherit the writer's threads or DuckDB connection). Each worker runs whole conversations
  and sends their records back; the parent applies them. One writer process per run file.
* **asyncio** (provider-bound runs): conversations in flight on one event loop, at most
  ``concurrency`` at a time, sharing provider rate limits; records are applied as they come, so
  each finished question is checkpointed at once.

:class:`RecordSink` applies records in the parent: rows to the :class:`RunWriter`, phase marks as
checkpoints, finished questions to the progress bar and the ``on_question`` hook.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Sequence
from contextlib import closing
from typing import Any, TypeVar

from omlab.bench.results import RunWriter
from omlab.bench.run.executors import PoolExecutor
from omlab.bench.run.phases import (
    ConversationJob,
    PhaseMark,
    QuestionDone,
    Record,
    RowGroup,
    TableRows,
    run_conversation,
)
from omlab.bench.run.progress import Progress
from omlab.bench.run.tasks import ConversationTask

T = TypeVar("T")
QuestionHook = Callable[[str, str], None]
"""Called as ``hook(phase, question_id)`` once a question's rows are handed to the writer."""


class RecordSink:
    """Applies job records to a run writer, a progress bar and an optional hook (parent side)."""

    def __init__(self, writer: RunWriter, progress: Progress | None = None, on_question: QuestionHook | None = None):
        self.writer = writer
        self.progress = progress
        self.on_question = on_question

    def __call__(self, record: Record) -> None:
        if isinstance(record, TableRows | RowGroup):
            parts = record.parts if isinstance(record, RowGroup) else (record,)
            self.writer.add_together([(part.table, part.rows) for part in parts])
        elif isinstance(record, PhaseMark):
            self.writer.mark_conversation(
                record.conversation_id,
                record.phase,
                record.status,
                started_at=record.started_at,
                error=record.error,
                n_messages=record.n_messages,
                n_message_tokens=record.n_message_tokens,
            )
            if record.phase == "prepare" and self.progress is not None:
                self.progress.advance(phase="prepare")
        elif isinstance(record, QuestionDone):
            if self.progress is not None:
                self.progress.advance(phase=record.phase)
            if self.on_question is not None:
                self.on_question(record.phase, record.question_id)
        else:  # pragma: no cover - Record is a closed union
            raise TypeError(f"unknown record {record!r}")


def run_in_processes(
    jobs: Sequence[ConversationJob],
    sink: Callable[[Record], None],
    workers: int,
    *,
    preload: Sequence[str] = (),
) -> None:
    """Run ``jobs`` in ``workers`` processes (:class:`~omlab.bench.run.executors.PoolExecutor`); apply
    each job's records when it finishes.

    ``preload`` names modules the fork server imports once for every worker (e.g. ``litellm``,
    whose import takes seconds, when offline models are priced as real ones)."""
    # closing(): a failing sink stops the pool at once, not when the generator is collected
    with closing(PoolExecutor(workers, preload=preload).run(ConversationTask(), jobs)) as results:
        for _, result in results:
            for record in result.records:
                sink(record)


def run_in_event_loop(
    jobs: Sequence[ConversationJob], sink: Callable[[Record], None], concurrency: int, limits: Any = None
) -> None:
    """Run ``jobs`` as asyncio tasks, ``concurrency`` at a time; records are applied as they come."""

    async def run_all() -> None:
        gate = asyncio.Semaphore(max(1, concurrency))
        # Offline models never suspend, so a cancelled task may not notice before it has run a
        # whole conversation: after a failure, waiting tasks must not start at all.
        failed = asyncio.Event()

        async def one(job: ConversationJob) -> None:
            async with gate:
                if failed.is_set():
                    return
                try:
                    await run_conversation(job, sink, limits=limits)
                except BaseException:
                    failed.set()
                    raise

        try:
            async with asyncio.TaskGroup() as group:
                for job in jobs:
                    group.create_task(one(job))
        except BaseExceptionGroup as group_error:
            # one failing task cancels the others; surface the first real error, not the group
            raise group_error.exceptions[0] from None

    run_coroutine(run_all)


def run_coroutine(factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion, also when called from a running loop (Jupyter): then on a
    private loop in a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())  # type: ignore[arg-type]
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(factory())  # type: ignore[arg-type]
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=target, name="omlab-runner")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def shared_provider_limits() -> Any:
    """One provider-limits object for a whole asyncio run, when the model layer offers them."""
    try:
        from omlab.llm.limits import ProviderLimits  # type: ignore[import-not-found]
    except ImportError:
        return None
    return ProviderLimits()


__all__ = [
    "QuestionHook",
    "RecordSink",
    "run_coroutine",
    "run_in_event_loop",
    "run_in_processes",
    "shared_provider_limits",
]

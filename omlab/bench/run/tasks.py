"""What one executor task does: run a conversation job and hand everything back to the driver.

:class:`ConversationTask` is the function an executor (:mod:`omlab.bench.run.executors`) maps over
the run's :class:`~omlab.bench.run.phases.ConversationJob`\\ s. It returns a :class:`TaskResult`: the
job's records in order (rows, phase marks, finished questions) and, on a cluster, the response
cache entries it recorded. The driver applies them through the run's one
:class:`~omlab.bench.results.RunWriter`; a task never opens a run file.

On a cluster (``cluster=True``) a task reads the driver's response cache from a read-only snapshot
(:mod:`omlab.llm.cache_snapshot`) and hands its rows over column-wise (the writer's Arrow path),
and provider calls share the cluster's limits actor (:mod:`omlab.llm.cluster_limits`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from omlab.bench.run.phases import ConversationJob, Record, RowGroup, TableRows, run_conversation


@dataclass(frozen=True, slots=True)
class TaskResult:
    """A finished task: its records and the new response cache entries (cluster only)."""

    records: list[Record]
    cache_entries: list[Any] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ConversationTask:
    """Run a job where the executor put it.

    Attributes:
        cluster: Read the cache from ``cache_snapshot`` and return new entries; rows column-wise.
        cache_snapshot: The driver's cache file as bytes, or a Ray reference to them (None: empty).
        limits: Provider limits shared by every task (a :class:`~omlab.llm.cluster_limits.ClusterLimits`).
        lifeline: The driver (:class:`~omlab.bench.run.ray_lifeline.DriverLifeline`): no provider
            request goes out once it is dead.
    """

    cluster: bool = False
    cache_snapshot: Any = None
    limits: Any = None
    lifeline: Any = None

    def __call__(self, job: ConversationJob) -> TaskResult:
        if not self.cluster:
            records: list[Record] = []
            asyncio.run(run_conversation(job, records.append, limits=self.limits))
            return TaskResult(records)
        settings = job.settings
        cache = None
        if settings.cache_mode != "off":
            from omlab.llm.cache_snapshot import LayeredCache, materialize

            data = self.cache_snapshot
            if data is not None and not isinstance(data, bytes):
                import ray

                data = ray.get(data)
            snapshot = str(materialize(data)) if data is not None else None
            settings = dataclasses.replace(settings, cache_path=snapshot, cache_layered=True)
            job = dataclasses.replace(job, settings=settings)
            cache = LayeredCache.for_process(snapshot, settings.cache_mode)  # type: ignore[arg-type]
        limits = self.limits
        if limits is not None and self.lifeline is not None:
            from omlab.bench.run.ray_lifeline import LifelineLimits

            limits = LifelineLimits(limits, self.lifeline)
        records = []
        asyncio.run(run_conversation(job, records.append, limits=limits))
        entries = cache.take_new_entries() if cache is not None else []
        return TaskResult([as_columns(record) for record in records], entries)


def as_columns(record: Record) -> Record:
    """``record`` with its rows as a mapping of columns (the writer's column-wise path)."""
    if isinstance(record, TableRows):
        return TableRows(record.table, _columns(record.rows))  # type: ignore[arg-type]
    if isinstance(record, RowGroup):
        return RowGroup(tuple(TableRows(p.table, _columns(p.rows)) for p in record.parts))  # type: ignore[arg-type]
    return record


def _columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]] | list[dict[str, Any]]:
    if not rows:
        return rows
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    return {name: [row.get(name) for row in rows] for name in names}


__all__ = ["ConversationTask", "TaskResult", "as_columns"]

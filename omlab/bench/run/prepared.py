"""Prepared memories: the OM state a conversation leaves behind, cached across runs.

Observing a long conversation is the expensive part of a benchmark, so the ``prepare`` phase
stores what answering needs and what the run's tables record, per (engine settings, conversation):

* the thread (its OM hints: current task, suggested response), every record generation (the
  observation log history, buffered chunks included) and the messages still unobserved, enough to
  rebuild the memory in an :class:`~omlab.storage.InMemoryStorage` and call ``build_context``;
* the replay's ``steps``, ``events`` and ``model_calls`` rows, so a run that reuses a prepared
  memory still has its sawtooth, events and (flagged ``cached``) observer/reflector calls.

One gzip JSON file per key under ``<results>/cache/om/<key[:2]>/<key>.json.gz`` (keys come from
:meth:`~omlab.bench.suite.run_settings.RunSettings.prepare_key`). One file per conversation rather than
one DuckDB file per config, so the processes of a pool never share a writable file; files appear
atomically (written under a temporary name, then renamed), so a reader never sees half of one.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from omlab.bench.run.replay import ReplayResult, ReplayRows
from omlab.engine.messages import Message
from omlab.engine.record import ObservationRecord, Thread
from omlab.storage import InMemoryStorage
from omlab.storage.serialize import (
    message_from_dict,
    message_to_dict,
    record_from_dict,
    record_to_dict,
    thread_from_dict,
    thread_to_dict,
)

FORMAT_VERSION = 1
_SUFFIX = ".json.gz"


@dataclass(slots=True)
class PreparedMemory:
    """A conversation's final OM state plus the rows its replay produced."""

    thread_id: str
    thread: Thread | None
    records: list[ObservationRecord]
    unobserved: list[Message]
    rows: ReplayRows
    summary: dict[str, Any] = field(default_factory=dict)
    #: resource scope: the resource and every thread of it (their per-thread cursors and hints)
    resource_id: str | None = None
    threads: list[Thread] = field(default_factory=list)

    @classmethod
    async def from_replay(cls, result: ReplayResult) -> PreparedMemory:
        """Capture the memory a replay left behind."""
        memory = result.memory
        rid = result.resource_id
        return cls(
            thread_id=result.thread_id,
            thread=memory.storage.get_thread(result.thread_id),
            records=await memory.get_history(result.thread_id, resource_id=rid),
            unobserved=await memory.get_unobserved_messages(result.thread_id, resource_id=rid),
            rows=result.rows,
            resource_id=rid,
            threads=memory.storage.list_threads(rid) if rid else [],
            summary={
                "n_messages": result.n_messages,
                "n_message_tokens": result.n_message_tokens,
                "n_steps": result.n_steps,
                "n_observed_messages": len(result.observed_message_ids),
                "blocked_s": result.blocked_s,
            },
        )

    def storage(self) -> InMemoryStorage:
        """A fresh in-memory storage holding this state (an engine over it resumes from here)."""
        storage = InMemoryStorage()
        for thread in self.threads:
            storage.save_thread(thread)
        if self.thread is not None:
            storage.save_thread(self.thread)
        for record in self.records:
            storage.save_record(record)
        storage.save_messages(list(self.unobserved))
        return storage

    @property
    def observations(self) -> str:
        """The active observation log (the head record's)."""
        heads = [r for r in self.records if r.superseded_by is None]
        return heads[-1].active_observations if heads else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "thread_id": self.thread_id,
            "thread": None if self.thread is None else thread_to_dict(self.thread),
            "records": [record_to_dict(r) for r in self.records],
            "unobserved": [message_to_dict(m) for m in self.unobserved],
            "rows": {
                "steps": self.rows.steps,
                "events": self.rows.events,
                "model_calls": self.rows.model_calls,
            },
            "summary": self.summary,
            "resource_id": self.resource_id,
            "threads": [thread_to_dict(t) for t in self.threads],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PreparedMemory:
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"prepared memory format {data.get('format')!r}, this omlab reads {FORMAT_VERSION}")
        rows = data["rows"]
        return cls(
            thread_id=data["thread_id"],
            thread=None if data["thread"] is None else thread_from_dict(data["thread"]),
            records=[record_from_dict(r) for r in data["records"]],
            unobserved=[message_from_dict(m) for m in data["unobserved"]],
            rows=ReplayRows(steps=rows["steps"], events=rows["events"], model_calls=rows["model_calls"]),
            summary=data.get("summary", {}),
            resource_id=data.get("resource_id"),
            threads=[thread_from_dict(t) for t in data.get("threads", [])],
        )


class PreparedStore:
    """Prepared memories on disk, one file per key (see the module docstring)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}{_SUFFIX}"

    def load(self, key: str) -> PreparedMemory | None:
        """The prepared memory stored under ``key``, or None (missing, unreadable or outdated)."""
        path = self.path(key)
        try:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                return PreparedMemory.from_dict(json.load(handle))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):  # a damaged or old file is a miss, not an error
            return None

    def save(self, key: str, prepared: PreparedMemory) -> Path:
        """Store ``prepared`` under ``key`` atomically; returns the file."""
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=_SUFFIX, dir=path.parent)
        try:
            with (
                os.fdopen(handle, "wb") as raw,
                gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=5) as packed,
            ):
                packed.write(json.dumps(prepared.to_dict(), ensure_ascii=False, default=_json_default).encode("utf-8"))
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return path

    def info(self) -> dict[str, Any]:
        """Where, how many prepared memories and how many bytes."""
        files = list(self.directory.glob(f"*/*{_SUFFIX}")) if self.directory.is_dir() else []
        return {
            "path": str(self.directory),
            "entries": len(files),
            "bytes": sum(f.stat().st_size for f in files),
        }

    def clear(self) -> int:
        """Delete every prepared memory; returns how many there were."""
        count = self.info()["entries"]
        shutil.rmtree(self.directory, ignore_errors=True)
        return count


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


__all__ = ["PreparedMemory", "PreparedStore"]

"""An in-process, dict-backed implementation of the engine's storage protocol."""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from datetime import datetime
from operator import itemgetter
from typing import Any, Self

from omlab.engine.messages import Message, utc
from omlab.engine.record import ObservationRecord, Thread
from omlab.storage.record_key import key_of_record, record_key
from omlab.storage.serialize import record_from_dict, record_to_dict, thread_from_dict, thread_to_dict

_MessageKey = tuple[datetime, str]
_created_at_of = itemgetter(0)


class _ThreadMessages:
    """One thread's messages, kept sorted by ``(created_at, id)`` so ``after`` is a bisection."""

    __slots__ = ("keys", "messages")

    def __init__(self) -> None:
        self.keys: list[_MessageKey] = []
        self.messages: list[Message] = []

    def insert(self, key: _MessageKey, message: Message) -> None:
        if not self.keys or key > self.keys[-1]:
            # the common case: messages arrive in time order
            self.keys.append(key)
            self.messages.append(message)
            return
        index = bisect_right(self.keys, key)
        self.keys.insert(index, key)
        self.messages.insert(index, message)

    def remove(self, key: _MessageKey) -> None:
        index = bisect_left(self.keys, key)
        del self.keys[index]
        del self.messages[index]

    def slice(self, after: datetime | None, limit: int | None) -> list[Message]:
        start = 0 if after is None else bisect_right(self.keys, after, key=_created_at_of)
        stop = len(self.messages) if limit is None else min(len(self.messages), start + limit)
        return self.messages[start:stop]


class InMemoryStorage:
    """Threads, messages and observation records held in dicts, for tests and single runs.

    Copy semantics (the engine relies on them):

    * **Messages are shared, not copied.** ``save_messages`` keeps the objects it is given and
      ``get_messages``/``get_message`` return those same objects (in a new list). The engine treats
      messages as immutable; to change one, build a new ``Message`` and save it. Re-saving a message
      whose ``created_at`` changed moves it to its new place in the order.
    * **Records and threads are copied** on save and on every read (through their JSON form, so
      the store rejects exactly the values :class:`~omlab.storage.duckdb_store.DuckDBStorage`
      would). Mutating a returned record or thread changes nothing until it is saved again.

    All methods are safe to call from several threads.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._threads: dict[str, dict[str, Any]] = {}
        self._messages: dict[str, Message] = {}
        #: where each message is filed: id -> (thread_id, (created_at, id)) as of its last save
        self._message_slots: dict[str, tuple[str | None, _MessageKey]] = {}
        self._by_thread: dict[str | None, _ThreadMessages] = {}
        self._records: dict[str, dict[str, Any]] = {}
        self._record_keys: dict[str, tuple[str, str]] = {}
        self._records_by_key: dict[tuple[str, str], set[str]] = {}

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Nothing to release; present so every storage can be closed the same way."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"InMemoryStorage(threads={len(self._threads)}, messages={len(self._messages)}, "
            f"records={len(self._records)})"
        )

    # ------------------------------------------------------------------ threads

    def get_thread(self, thread_id: str) -> Thread | None:
        """The thread with this id (a copy), or None."""
        with self._lock:
            stored = self._threads.get(thread_id)
        return None if stored is None else thread_from_dict(stored)

    def save_thread(self, thread: Thread) -> None:
        """Insert or replace the thread with ``thread.id``."""
        stored = thread_to_dict(thread)
        with self._lock:
            self._threads[thread.id] = stored

    def list_threads(self, resource_id: str) -> list[Thread]:
        """Threads of a resource, ordered by ``(created_at, id)``."""
        with self._lock:
            stored = [t for t in self._threads.values() if t["resource_id"] == resource_id]
        threads = [thread_from_dict(t) for t in stored]
        threads.sort(key=lambda t: (utc(t.created_at), t.id))
        return threads

    # ------------------------------------------------------------------ messages

    def save_messages(self, messages: list[Message]) -> None:
        """Insert or replace each message by id (the last one wins within a batch)."""
        with self._lock:
            for message in messages:
                previous = self._message_slots.get(message.id)
                if previous is not None:
                    old_thread, old_key = previous
                    self._by_thread[old_thread].remove(old_key)
                key = (utc(message.created_at), message.id)
                bucket = self._by_thread.get(message.thread_id)
                if bucket is None:
                    bucket = self._by_thread[message.thread_id] = _ThreadMessages()
                bucket.insert(key, message)
                self._messages[message.id] = message
                self._message_slots[message.id] = (message.thread_id, key)

    def get_messages(self, thread_id: str, *, after: datetime | None = None, limit: int | None = None) -> list[Message]:
        """Messages of a thread ordered by ``(created_at, id)``; only those with ``created_at``
        strictly after ``after`` when given (naive ``after`` is taken as UTC); at most ``limit``
        (the oldest ones)."""
        if limit is not None and limit < 0:
            raise ValueError(f"get_messages: limit must be >= 0 or None, got {limit}")
        cursor = None if after is None else utc(after)
        with self._lock:
            bucket = self._by_thread.get(thread_id)
            return [] if bucket is None else bucket.slice(cursor, limit)

    def get_message(self, message_id: str) -> Message | None:
        """The message with this id, or None."""
        with self._lock:
            return self._messages.get(message_id)

    # ------------------------------------------------------------------ records

    def save_record(self, record: ObservationRecord) -> None:
        """Insert or replace the record with ``record.id`` (a copy is stored)."""
        key = key_of_record(record)
        stored = record_to_dict(record)
        with self._lock:
            old_key = self._record_keys.get(record.id)
            if old_key is not None and old_key != key:
                self._records_by_key[old_key].discard(record.id)
            self._records[record.id] = stored
            self._record_keys[record.id] = key
            self._records_by_key.setdefault(key, set()).add(record.id)

    def get_head_record(self, scope: str, thread_id: str | None, resource_id: str | None) -> ObservationRecord | None:
        """The live generation: ``superseded_by`` None, highest ``generation_count`` (ties:
        ``created_at`` then ``id`` ascending). A copy; None when there is none."""
        live = [r for r in self._records_for(scope, thread_id, resource_id) if r.superseded_by is None]
        if not live:
            return None
        return min(live, key=lambda r: (-r.generation_count, utc(r.created_at), r.id))

    def get_history(self, scope: str, thread_id: str | None, resource_id: str | None) -> list[ObservationRecord]:
        """Every generation for the key, oldest first: ``(generation_count, created_at, id)``."""
        records = self._records_for(scope, thread_id, resource_id)
        records.sort(key=lambda r: (r.generation_count, utc(r.created_at), r.id))
        return records

    def clear(self, scope: str, thread_id: str | None, resource_id: str | None) -> None:
        """Delete every record for this key (threads and messages stay)."""
        key = record_key(scope, thread_id, resource_id)
        with self._lock:
            for record_id in self._records_by_key.pop(key, set()):
                del self._records[record_id]
                del self._record_keys[record_id]

    def _records_for(self, scope: str, thread_id: str | None, resource_id: str | None) -> list[ObservationRecord]:
        key = record_key(scope, thread_id, resource_id)
        with self._lock:
            stored = [self._records[i] for i in self._records_by_key.get(key, ())]
        return [record_from_dict(r) for r in stored]

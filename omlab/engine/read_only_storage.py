"""A storage view that reads through and writes nothing (``options.readOnly``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from omlab.engine.messages import Message
from omlab.engine.record import ObservationRecord, Thread
from omlab.engine.storage import Storage


class ReadOnlyStorage:
    """Reads go to ``inner``; saves and clears are dropped, so the engine can build context from
    existing memory without changing it."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner

    def get_thread(self, thread_id: str) -> Thread | None:
        return self.inner.get_thread(thread_id)

    def list_threads(self, resource_id: str) -> list[Thread]:
        return self.inner.list_threads(resource_id)

    def get_messages(self, thread_id: str, *, after: datetime | None = None, limit: int | None = None) -> list[Message]:
        return self.inner.get_messages(thread_id, after=after, limit=limit)

    def get_message(self, message_id: str) -> Message | None:
        return self.inner.get_message(message_id)

    def get_head_record(self, scope: str, thread_id: str | None, resource_id: str | None) -> ObservationRecord | None:
        return self.inner.get_head_record(scope, thread_id, resource_id)

    def get_history(self, scope: str, thread_id: str | None, resource_id: str | None) -> list[ObservationRecord]:
        return self.inner.get_history(scope, thread_id, resource_id)

    def save_thread(self, thread: Thread) -> None:
        return None

    def save_messages(self, messages: list[Message]) -> None:
        return None

    def save_record(self, record: ObservationRecord) -> None:
        return None

    def clear(self, scope: str, thread_id: str | None, resource_id: str | None) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        # other read helpers an implementation offers (search, listing) pass through
        if name.startswith(("save", "delete", "clear", "update", "write")):
            raise AttributeError(f"read-only storage has no {name!r}")
        return getattr(self.inner, name)

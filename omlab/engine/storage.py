"""The storage protocol the engine depends on. Implementations live in ``omlab.storage``."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

from omlab.engine.messages import Message
from omlab.engine.record import ObservationRecord, Thread


@runtime_checkable
class Storage(Protocol):
    """Threads, messages and OM records.

    Records are generations: ``get_head_record`` returns the live one (``superseded_by is None``,
    highest ``generation_count``); ``get_history`` returns all, oldest first. The key is
    ``(scope, thread_id, resource_id)``: thread scope looks up by thread id, resource scope by
    resource id (its records have ``thread_id=None``).
    """

    # threads
    def get_thread(self, thread_id: str) -> Thread | None: ...
    def save_thread(self, thread: Thread) -> None: ...
    def list_threads(self, resource_id: str) -> list[Thread]: ...

    # messages (upsert by id)
    def save_messages(self, messages: list[Message]) -> None: ...
    def get_messages(self, thread_id: str, *, after: datetime | None = None, limit: int | None = None) -> list[Message]:
        """Messages of a thread ordered by ``(created_at, id)``; only those strictly after
        ``after`` when given."""
        ...

    def get_message(self, message_id: str) -> Message | None: ...

    # OM records
    def get_head_record(
        self, scope: str, thread_id: str | None, resource_id: str | None
    ) -> ObservationRecord | None: ...
    def save_record(self, record: ObservationRecord) -> None:
        """Insert or replace the record with this id."""
        ...

    def get_history(self, scope: str, thread_id: str | None, resource_id: str | None) -> list[ObservationRecord]: ...
    def clear(self, scope: str, thread_id: str | None, resource_id: str | None) -> None:
        """Delete every record for this key (threads and messages stay)."""
        ...

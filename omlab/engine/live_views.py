"""The engine's live views (:class:`LiveMemory`), one per memory, built from storage on first use.

A memory is keyed by thread in thread scope and by resource in resource scope. The first use of a
key loads its head record (creating it when the memory is new), the messages after its cursor with
their token counts, and the last activity time and actor model from the stored messages, so idle
and provider-change activation survive a restart.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from omlab.engine.activity import last_activity_at, last_actor_model
from omlab.engine.config import OMConfig
from omlab.engine.errors import ObservationalMemoryError
from omlab.engine.live import LiveMemory
from omlab.engine.messages import Message
from omlab.engine.record import ObservationRecord, Thread, new_id
from omlab.engine.scheduler import Scheduler
from omlab.engine.storage import Storage
from omlab.engine.token_counter import TokenCounter


class LiveViews:
    """The live views of one engine, by memory key (``thread:<id>`` or ``resource:<id>``)."""

    def __init__(
        self, config: OMConfig, storage: Storage, scheduler: Scheduler, counter: TokenCounter, timezone: str
    ) -> None:
        self.config = config
        self.storage = storage
        self.scheduler = scheduler
        self.counter = counter
        self.timezone = timezone
        self._live: dict[str, LiveMemory] = {}

    def record_key(self, thread_id: str, resource_id: str | None) -> tuple[str, str | None, str | None]:
        """The storage key of the memory ``thread_id`` belongs to."""
        if self.config.scope == "resource":
            if resource_id is None:
                thread = self.storage.get_thread(thread_id)
                resource_id = thread.resource_id if thread is not None else None
            if not resource_id:
                raise ObservationalMemoryError(
                    f"scope 'resource' needs a resource id: pass resource_id=... for thread {thread_id!r}"
                )
            return ("resource", None, resource_id)
        return ("thread", thread_id, None)

    def forget(self, thread_id: str) -> None:
        """Drop the live view of ``thread_id``'s memory and its stored records (messages stay)."""
        scope, key_thread, key_resource = self.record_key(thread_id, None)
        self.storage.clear(scope, key_thread, key_resource)
        self._live.pop(f"resource:{key_resource}" if scope == "resource" else f"thread:{thread_id}", None)

    async def get(self, thread_id: str, resource_id: str | None = None) -> LiveMemory:
        """The live view of ``thread_id``'s memory, loaded from storage on first use."""
        if not thread_id:
            raise ObservationalMemoryError("a thread id is required")
        scope, key_thread, key_resource = self.record_key(thread_id, resource_id)
        key = f"resource:{key_resource}" if scope == "resource" else f"thread:{thread_id}"
        now = self.scheduler.clock.now()
        live = self._live.get(key)
        if live is not None:
            if scope == "resource" and live.thread_id != thread_id:
                self._ensure_thread(thread_id, key_resource, now)
                live.thread_id = thread_id
            return live
        thread = self._ensure_thread(thread_id, resource_id or key_resource, now)
        record = self.storage.get_head_record(scope, key_thread, key_resource)
        if record is None:
            record = ObservationRecord(
                id=new_id("omr"),
                scope=scope,  # type: ignore[arg-type]
                thread_id=key_thread,
                resource_id=key_resource if scope == "resource" else thread.resource_id,
                created_at=now,
                updated_at=now,
                observed_timezone=self.timezone,
                config=self.config.to_dict(include_runtime=False),
            )
            self.storage.save_record(record)
        if scope == "resource":
            unobserved = [
                m for t in self.storage.list_threads(key_resource) for m in self._load_thread_unobserved(t, record)
            ]
            unobserved.sort(key=lambda m: (m.created_at, m.id))
        else:
            unobserved = self._load_unobserved(thread_id, record)
        counts = {m.id: self.counter.count_message(m) for m in unobserved}
        live = LiveMemory(
            key, thread_id, key_resource or thread.resource_id, record, unobserved, counts, sum(counts.values())
        )
        self._restore_activity(live, thread_id)
        self._live[key] = live
        return live

    def _restore_activity(self, live: LiveMemory, thread_id: str) -> None:
        """A new engine over existing storage: read the last activity time and actor model back
        from the stored messages, so idle and provider-change activation survive a restart."""
        cfg = self.config
        wanted = (
            cfg.observation.activate_after_idle,
            cfg.observation.activate_on_provider_change,
            cfg.reflection.activate_after_idle,
            cfg.reflection.activate_on_provider_change,
        )
        if not any(value not in (None, False) for value in wanted):
            return
        stored = self.storage.get_messages(thread_id)
        live.last_activity_at = last_activity_at(stored)
        live.last_actor_model = last_actor_model(stored)

    def _ensure_thread(self, thread_id: str, resource_id: str | None, now: datetime) -> Thread:
        thread = self.storage.get_thread(thread_id)
        if thread is None:
            thread = Thread(id=thread_id, resource_id=resource_id, created_at=now, updated_at=now)
            self.storage.save_thread(thread)
        return thread

    def _load_thread_unobserved(self, thread: Thread, record: ObservationRecord) -> list[Message]:
        """Resource scope: a thread's messages after its own cursor (falling back to the record's,
        the fix of the reference's full reloads #15265)."""
        stamp = thread.om.get("lastObservedAt")
        cursor = datetime.fromisoformat(stamp) if stamp else None
        if cursor is None:
            messages = self.storage.get_messages(thread.id)
        else:
            messages = self.storage.get_messages(thread.id, after=cursor - timedelta(milliseconds=1))
        observed = set(thread.om.get("observedAtCursor") or ())
        return [
            m
            for m in messages
            if m.role != "system" and m.id not in observed and (cursor is None or m.created_at >= cursor)
        ]

    def _load_unobserved(self, thread_id: str, record: ObservationRecord) -> list[Message]:
        cursor = record.last_observed_at
        if cursor is None:
            messages = self.storage.get_messages(thread_id)
        else:
            # messages sharing the cursor's millisecond may or may not be observed: the id set decides
            messages = self.storage.get_messages(thread_id, after=cursor - timedelta(milliseconds=1))
        observed = set(record.observed_message_ids)
        return [
            m
            for m in messages
            if m.role != "system" and m.id not in observed and (cursor is None or m.created_at >= cursor)
        ]

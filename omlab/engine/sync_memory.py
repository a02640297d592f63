"""``SyncObservationalMemory``: a blocking facade over :class:`~omlab.engine.memory.ObservationalMemory`.

The facade knows the memory only through :class:`AsyncMemory` (the coroutines it wraps), so this
module imports nothing of the engine's public face and ``ObservationalMemory.sync()`` can build it
without an import circle.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Protocol

from omlab.engine.messages import Message
from omlab.engine.recall import RecallTool
from omlab.engine.record import ObservationRecord, Thread
from omlab.engine.status import Status
from omlab.engine.step_result import StepResult


class AsyncMemory(Protocol):
    """The coroutines of :class:`~omlab.engine.memory.ObservationalMemory` the facade wraps."""

    async def add_messages(
        self,
        thread_id: str,
        messages: Iterable[Message],
        *,
        resource_id: str | None = None,
        actor_model: str | None = None,
        actor_provider_options: Mapping[str, Any] | None = None,
        process: bool = True,
    ) -> StepResult | None: ...
    async def process(
        self,
        thread_id: str,
        *,
        actor_model: str | None = None,
        actor_provider_options: Mapping[str, Any] | None = None,
        trigger: str = "turn-sync",
    ) -> StepResult: ...
    async def observe(self, thread_id: str, *, force: bool = True) -> StepResult: ...
    async def reflect(self, thread_id: str, prompt: str | None = None) -> StepResult: ...
    async def status(self, thread_id: str) -> Status: ...
    async def build_context(
        self, thread_id: str, *, current_date: datetime | None = None, resource_id: str | None = None
    ) -> list[dict[str, Any]]: ...
    async def get_observations(self, thread_id: str) -> str: ...
    async def get_resolved_config(self, request_context: dict[str, Any] | None = None) -> dict[str, Any]: ...
    async def get_record(self, thread_id: str) -> ObservationRecord: ...
    async def get_history(self, thread_id: str, *, resource_id: str | None = None) -> list[ObservationRecord]: ...
    async def get_unobserved_messages(self, thread_id: str, *, resource_id: str | None = None) -> list[Message]: ...
    async def list_threads(self, thread_id: str) -> list[Thread]: ...
    async def clear(self, thread_id: str) -> None: ...
    async def finalize(self, thread_id: str) -> StepResult: ...
    async def end_turn(self, thread_id: str) -> None: ...
    async def settle(self) -> None: ...
    def recall_tool(self, thread_id: str, *, resource_id: str | None = None) -> RecallTool: ...


class SyncObservationalMemory:
    """Blocking versions of :class:`~omlab.engine.memory.ObservationalMemory`'s coroutines.

    The coroutines run on a private event loop in a daemon thread, so the facade works both in
    plain scripts and where an event loop is already running (Jupyter)."""

    def __init__(self, memory: AsyncMemory) -> None:
        self.memory = memory
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="omlab-sync", daemon=True)
        self._thread.start()

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def add_messages(self, thread_id: str, messages: Iterable[Message], **kwargs: Any) -> StepResult | None:
        return self._run(self.memory.add_messages(thread_id, messages, **kwargs))

    def process(self, thread_id: str, **kwargs: Any) -> StepResult:
        return self._run(self.memory.process(thread_id, **kwargs))

    def observe(self, thread_id: str, **kwargs: Any) -> StepResult:
        return self._run(self.memory.observe(thread_id, **kwargs))

    def reflect(self, thread_id: str, prompt: str | None = None) -> StepResult:
        return self._run(self.memory.reflect(thread_id, prompt))

    def status(self, thread_id: str) -> Status:
        return self._run(self.memory.status(thread_id))

    def build_context(self, thread_id: str, **kwargs: Any) -> list[dict[str, Any]]:
        return self._run(self.memory.build_context(thread_id, **kwargs))

    def get_observations(self, thread_id: str) -> str:
        return self._run(self.memory.get_observations(thread_id))

    def get_resolved_config(self, request_context: dict[str, Any] | None = None) -> dict[str, Any]:
        return self._run(self.memory.get_resolved_config(request_context))

    def get_record(self, thread_id: str) -> ObservationRecord:
        return self._run(self.memory.get_record(thread_id))

    def get_history(self, thread_id: str, **kwargs: Any) -> list[ObservationRecord]:
        return self._run(self.memory.get_history(thread_id, **kwargs))

    def get_unobserved_messages(self, thread_id: str, **kwargs: Any) -> list[Message]:
        return self._run(self.memory.get_unobserved_messages(thread_id, **kwargs))

    def list_threads(self, thread_id: str) -> list[Thread]:
        return self._run(self.memory.list_threads(thread_id))

    def clear(self, thread_id: str) -> None:
        self._run(self.memory.clear(thread_id))

    def finalize(self, thread_id: str) -> StepResult:
        return self._run(self.memory.finalize(thread_id))

    def end_turn(self, thread_id: str) -> None:
        self._run(self.memory.end_turn(thread_id))

    def settle(self) -> None:
        self._run(self.memory.settle())

    def recall_tool(self, thread_id: str, **kwargs: Any) -> RecallTool:
        return self.memory.recall_tool(thread_id, **kwargs)

    def close(self) -> None:
        """Stop the private loop (the memory itself stays usable from async code)."""
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        self._loop.close()

"""Events the engine emits.

Two streams, as in the reference (om-reference.md §6):

* **data parts** (``data-om-status``, ``data-om-observation-start|end|failed``,
  ``data-om-buffering-start|end|failed``, ``data-om-activation``, ``data-om-thread-update``): what a
  UI or a results database consumes, with every field the seed documents (camelCase keys, as on the
  wire);
* **debug events** (``observation_triggered``, ``observation_complete``, ``reflection_triggered``,
  ``reflection_complete``, ``step_progress``): passed to ``onDebugEvent``.

Listener errors are logged and never break a cycle.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

log = logging.getLogger("omlab.engine")

DATA_PART_TYPES = (
    "data-om-status",
    "data-om-observation-start",
    "data-om-observation-end",
    "data-om-observation-failed",
    "data-om-buffering-start",
    "data-om-buffering-end",
    "data-om-buffering-failed",
    "data-om-activation",
    "data-om-thread-update",
    "data-om-temporal-marker",  # omlab: a temporalMarkers gap reminder was inserted
)
DEBUG_EVENT_TYPES = (
    "observation_triggered",
    "observation_complete",
    "reflection_triggered",
    "reflection_complete",
    "step_progress",
)


def iso(dt: datetime) -> str:
    """Millisecond ISO-8601 in UTC with a trailing Z, the reference's timestamp format."""
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def new_cycle_id(kind: str = "obs") -> str:
    return f"{kind}-{uuid.uuid4().hex[:16]}"


@dataclass(slots=True)
class DataPart:
    """A ``data-om-*`` part: ``type`` and its ``data`` payload."""

    type: str
    data: dict[str, Any]


@dataclass(slots=True)
class DebugEvent:
    """An ``onDebugEvent`` event (``ObservationDebugEvent`` in the reference).

    Every field reads by its documented camelCase name or in snake_case, as an attribute or an
    item: ``event.pendingTokens``, ``event.pending_tokens``, ``event["threadId"]``.
    """

    type: str
    timestamp: datetime
    thread_id: str | None
    resource_id: str | None
    fields: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: a camelCase name, or a snake_case field name
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "threadId":
            return self.thread_id
        if name == "resourceId":
            return self.resource_id
        fields = object.__getattribute__(self, "fields")
        if name in fields:
            return fields[name]
        camel = _camel(name)
        if camel in fields:
            return fields[camel]
        raise AttributeError(f"debug event {self.type!r} has no field {name!r} (it has {sorted(fields)})")

    def __getitem__(self, name: str) -> Any:
        if name in ("type", "timestamp", "thread_id", "resource_id"):
            return getattr(self, name)
        try:
            return self.__getattr__(name)
        except AttributeError:
            raise KeyError(name) from None

    def get(self, name: str, default: Any = None) -> Any:
        """The field ``name`` (either spelling), or ``default``."""
        try:
            return self[name]
        except KeyError:
            return default

    def to_dict(self) -> dict[str, Any]:
        """The event as the reference's camelCase object."""
        return {
            "type": self.type,
            "timestamp": self.timestamp,
            "threadId": self.thread_id,
            "resourceId": self.resource_id,
            **self.fields,
        }


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


DataListener = Callable[[DataPart], None]
DebugListener = Callable[[DebugEvent], None]


class EventBus:
    """Fans events out to listeners and keeps nothing itself."""

    def __init__(self) -> None:
        self._data: list[DataListener] = []
        self._debug: list[DebugListener] = []

    def on_data(self, listener: DataListener) -> Callable[[], None]:
        """Subscribe to data parts; returns an unsubscribe function."""
        self._data.append(listener)
        return lambda: self._data.remove(listener)

    def on_debug(self, listener: DebugListener) -> Callable[[], None]:
        self._debug.append(listener)
        return lambda: self._debug.remove(listener)

    @property
    def wants_debug(self) -> bool:
        return bool(self._debug)

    def data(self, type: str, data: dict[str, Any]) -> DataPart:
        part = DataPart(type, data)
        for listener in list(self._data):
            try:
                listener(part)
            except Exception:  # a listener must never break a cycle
                log.exception("data-part listener failed on %s", type)
        return part

    def debug(self, type: str, when: datetime, thread_id: str | None, resource_id: str | None, **fields: Any) -> None:
        if not self._debug:
            return
        event = DebugEvent(type, when, thread_id, resource_id, fields)
        for listener in list(self._debug):
            try:
                listener(event)
            except Exception:
                log.exception("debug listener failed on %s", type)

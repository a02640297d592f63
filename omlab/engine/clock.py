"""Clocks the engine reads "now" from: the wall clock live, a virtual clock in replays."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...


class SystemClock:
    """The wall clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class VirtualClock:
    """A clock that only moves when told to (replays, tests). It never moves backwards."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = (start or datetime(2025, 1, 1, tzinfo=UTC)).astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime) -> None:
        """Move to ``when`` if it is later than now (a replay's message timestamps)."""
        when = when.astimezone(UTC)
        self._now = max(self._now, when)

    def advance(self, seconds: float) -> datetime:
        self._now += timedelta(seconds=seconds)
        return self._now

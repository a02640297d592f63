"""Temporal-gap markers (``temporalMarkers: true``, om-reference §4.6).

When a new user message arrives at least :data:`MIN_GAP` after the thread's previous message, a
synthetic reminder message is placed just before it, e.g.::

    <system-reminder>[2 hours later — Tue Mar 4 2025, 14:05 UTC]</system-reminder>

The marker is an ordinary stored message, so it is persisted, counted, observed and shown to the
actor. It has role ``user`` (the engine reloads no ``system`` messages from storage) and is
recognised by its id prefix ``__temporal_`` and by ``metadata["omlab"]["temporalMarker"]``; the
``<system-reminder>`` wrapper tells the actor it is not the user speaking, and
:func:`observer_view` relabels it for the Observer's transcript. Its id derives from the id of the
message it precedes, so inserting markers twice changes nothing.

The gap is rounded to the nearest bucket (15 and 30 minutes; 1, 2, 3, 6 and 12 hours; 1 day,
N days; 1 week, N weeks); a gap exactly half-way goes to the larger bucket. Boundaries:

==================  =====================
gap                 text
==================  =====================
< 10 min            no marker
[10, 22.5) min      15 minutes later
[22.5, 45) min      30 minutes later
[45, 90) min        1 hour later
[1.5, 2.5) h        2 hours later
[2.5, 4.5) h        3 hours later
[4.5, 9) h          6 hours later
[9, 18) h           12 hours later
[18, 36) h          1 day later
[1.5, 6.5) days     N days later (N = days rounded half up: 2…6)
[6.5, 10.5) days    1 week later
≥ 10.5 days         N weeks later (N = weeks rounded half up)
==================  =====================
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from omlab.engine.messages import Message, Part, utc

MIN_GAP = timedelta(minutes=10)
MARKER_ID_PREFIX = "__temporal_"
METADATA_NAMESPACE = "omlab"
METADATA_FLAG = "temporalMarker"

# (upper bound of the bucket, text); the bounds are the midpoints between consecutive buckets
_SUB_DAY_BUCKETS: tuple[tuple[timedelta, str], ...] = (
    (timedelta(minutes=22.5), "15 minutes later"),
    (timedelta(minutes=45), "30 minutes later"),
    (timedelta(minutes=90), "1 hour later"),
    (timedelta(hours=2.5), "2 hours later"),
    (timedelta(hours=4.5), "3 hours later"),
    (timedelta(hours=9), "6 hours later"),
    (timedelta(hours=18), "12 hours later"),
    (timedelta(hours=36), "1 day later"),
)


def _round_half_up(value: float) -> int:
    return math.floor(value + 0.5)


def gap_text(gap: timedelta) -> str | None:
    """The bucket text for a gap (``"2 hours later"``), or None below :data:`MIN_GAP`."""
    if gap < MIN_GAP:
        return None
    for bound, text in _SUB_DAY_BUCKETS:
        if gap < bound:
            return text
    days = gap / timedelta(days=1)
    if days < 6.5:
        return f"{_round_half_up(days)} days later"
    if days < 10.5:
        return "1 week later"
    return f"{_round_half_up(days / 7)} weeks later"


def _unit(value: int, unit: str) -> str:
    return f"{value} {unit}{'' if value == 1 else 's'}"


_MINUTE_MS = 60_000
_SPANS = (  # (span, unit, sub-span, sub-unit): the largest span the gap is below picks the wording
    (24 * 60 * _MINUTE_MS, ("hour", 60 * _MINUTE_MS), ("minute", _MINUTE_MS)),
    (7 * 24 * 60 * _MINUTE_MS, ("day", 24 * 60 * _MINUTE_MS), ("hour", 60 * _MINUTE_MS)),
    (30 * 24 * 60 * _MINUTE_MS, ("week", 7 * 24 * 60 * _MINUTE_MS), ("day", 24 * 60 * _MINUTE_MS)),
    (365 * 24 * 60 * _MINUTE_MS, ("month", 30 * 24 * 60 * _MINUTE_MS), ("week", 7 * 24 * 60 * _MINUTE_MS)),
)


def format_temporal_gap(gap: timedelta) -> str | None:
    """The reference's relative-span wording (``formatTemporalGap``): None below 10 minutes;
    ``"11 minutes later"`` (minutes rounded half up) under an hour; then the two largest units,
    floored, the second left out when 0: ``"2 hours 30 minutes later"``, ``"3 days 5 hours
    later"``, ``"2 weeks 2 days later"``, ``"1 month 2 weeks later"`` (30-day months),
    ``"2 years 2 months later"`` (365-day years). omlab's own markers use :func:`gap_text`'s
    buckets; ``compat="reference"`` uses this."""
    ms = gap // timedelta(milliseconds=1)
    if ms < 10 * _MINUTE_MS:
        return None
    if ms < 60 * _MINUTE_MS:
        return f"{_unit(max(1, math.floor(ms / _MINUTE_MS + 0.5)), 'minute')} later"
    primary, secondary = ("year", 365 * 24 * 60 * _MINUTE_MS), ("month", 30 * 24 * 60 * _MINUTE_MS)
    for span, major, minor in _SPANS:
        if ms < span:
            primary, secondary = major, minor
            break
    count, rest = divmod(ms, primary[1])
    parts = [_unit(count, primary[0])]
    if rest // secondary[1] > 0:
        parts.append(_unit(rest // secondary[1], secondary[0]))
    return f"{' '.join(parts)} later"


def format_reference_marker_time(dt: datetime, timezone: str = "UTC") -> str:
    """``03/04/2025, 2:05 PM UTC``: the reference's marker timestamp (``toLocaleString`` en-US)."""
    local = utc(dt).astimezone(ZoneInfo(timezone))
    hour = local.hour % 12 or 12
    return f"{local:%m/%d/%Y}, {hour}:{local:%M} {'AM' if local.hour < 12 else 'PM'} {local.tzname()}"


def format_marker_time(dt: datetime, timezone: str = "UTC") -> str:
    """``Tue Mar 4 2025, 14:05 UTC``: the moment in ``timezone`` with its abbreviation."""
    local = utc(dt).astimezone(ZoneInfo(timezone))
    return f"{local:%a %b} {local.day} {local.year}, {local:%H:%M} {local.tzname()}"


def gap_marker(previous: datetime, current: datetime, *, timezone: str = "UTC") -> str | None:
    """``"[2 hours later — Tue Mar 4 2025, 14:05 UTC]"`` for the time between two messages, or
    None when less than :data:`MIN_GAP` passed (or time went backwards). The timestamp is
    ``current`` in ``timezone``."""
    text = gap_text(utc(current) - utc(previous))
    if text is None:
        return None
    return f"[{text} — {format_marker_time(current, timezone)}]"


def marker_id(following_message_id: str) -> str:
    """The id of the marker placed before the message with this id."""
    return f"{MARKER_ID_PREFIX}{following_message_id}"


def is_temporal_marker(message: Message) -> bool:
    """Whether ``message`` is a temporal-gap marker."""
    if message.id.startswith(MARKER_ID_PREFIX):
        return True
    namespace = message.metadata.get(METADATA_NAMESPACE) if message.metadata else None
    return isinstance(namespace, dict) and bool(namespace.get(METADATA_FLAG))


def reference_gap_marker(previous: datetime, current: datetime, *, timezone: str = "UTC") -> str | None:
    """The reference's reminder text, ``"2 hours 30 minutes later — 03/04/2025, 2:05 PM UTC"``, or
    None below 10 minutes."""
    text = format_temporal_gap(utc(current) - utc(previous))
    if text is None:
        return None
    return f"{text} — {format_reference_marker_time(current, timezone)}"


def make_marker(
    previous: Message, following: Message, *, timezone: str = "UTC", reference: bool = False
) -> Message | None:
    """The marker to put before ``following`` (None when the gap is too small).

    The message is dated one millisecond before ``following`` so storage order (``created_at``,
    ``id``) places it right before; its text part carries ``following``'s time. It belongs to the
    same thread and resource. ``reference=True`` words it as the reference does
    (:func:`reference_gap_marker`) instead of omlab's bucketed ``[… later — …]``."""
    wording = reference_gap_marker if reference else gap_marker
    text = wording(previous.created_at, following.created_at, timezone=timezone)
    if text is None:
        return None
    return Message(
        id=marker_id(following.id),
        role="user",
        # the part carries the following message's time, so transcripts show the real moment
        parts=[
            Part(
                type="text",
                text=f"<system-reminder>{text}</system-reminder>",
                created_at=following.created_at,
            )
        ],
        created_at=following.created_at - timedelta(milliseconds=1),
        thread_id=following.thread_id,
        resource_id=following.resource_id,
        metadata={
            METADATA_NAMESPACE: {
                METADATA_FLAG: True,
                "gap": (format_temporal_gap if reference else gap_text)(following.created_at - previous.created_at),
                "text": text,
                "previousMessageId": previous.id,
                "messageId": following.id,
            }
        },
    )


def insert_temporal_markers(
    messages: Sequence[Message],
    previous_message: Message | None = None,
    *,
    timezone: str = "UTC",
    reference: bool = False,
) -> list[Message]:
    """``messages`` (new messages in time order) with a marker before every user message that
    comes at least :data:`MIN_GAP` after the message before it.

    ``previous_message`` is the thread's last message before ``messages`` (None for a new thread).
    Markers already present (same id) are not duplicated, and a marker inside ``messages`` never
    counts as the "previous message" of a later gap.
    """
    present = {m.id for m in messages}
    out: list[Message] = []
    last = previous_message
    for message in messages:
        if is_temporal_marker(message):
            out.append(message)
            continue
        if message.role == "user" and last is not None and marker_id(message.id) not in present:
            marker = make_marker(last, message, timezone=timezone, reference=reference)
            if marker is not None:
                out.append(marker)
        out.append(message)
        last = message
    return out


def observer_view(messages: Sequence[Message]) -> list[Message]:
    """``messages`` as the Observer's transcript should read them: markers become ``system``
    messages (labelled "System-reminder", never taken for user speech); others are unchanged."""
    return [dataclasses.replace(m, role="system") if is_temporal_marker(m) else m for m in messages]


__all__ = [
    "MARKER_ID_PREFIX",
    "MIN_GAP",
    "format_marker_time",
    "format_reference_marker_time",
    "format_temporal_gap",
    "gap_marker",
    "gap_text",
    "insert_temporal_markers",
    "is_temporal_marker",
    "make_marker",
    "marker_id",
    "observer_view",
    "reference_gap_marker",
]

"""``compat="reference"`` in resource scope: what ``@mastra/memory`` 1.31.0 counts and observes.

The reference's turn loads every unobserved message of the resource into the actor's list (all
threads, after the record's cursor) and, on top, renders the *other* threads' unobserved messages
as ``<other-conversation>`` blocks; its pending count is both together, so another thread's
messages count twice. Its resource cycle then puts everything in that list under the *current*
thread's ``<thread>`` section (after the current thread's own unobserved messages), while each
other thread still contributes its own messages since its own cursor: a message of another
thread can be observed in two sections. What it has handed the Observer once (an in-process set
of ids) is never handed again and leaves the other-conversation blocks. See the "Reference mode"
table in docs/divergences.md (resource scope).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from omlab.engine.config import OMConfig
from omlab.engine.live import LiveMemory
from omlab.engine.messages import Message
from omlab.engine.observation_text import format_boundary
from omlab.engine.record import Thread
from omlab.engine.storage import Storage
from omlab.engine.thread_sections import obscure_thread_id
from omlab.engine.token_counter import TokenCounter


class CycleContext(Protocol):
    """What these functions use of ``omlab.engine.cycle_context.CycleContext`` (which calls them)."""

    config: OMConfig
    storage: Storage
    counter: TokenCounter

    def threshold(self, live: LiveMemory) -> int: ...


OTHER_CONVERSATION_PART_CHARS = 500
_THREAD_OPEN = re.compile(r'<thread id="([^"]+)">')
_DATE = re.compile(r"Date:\s*([A-Za-z]+\s+[0-9]+,\s+[0-9]+)")
_CLOSE = "</thread>"


@dataclass(slots=True)
class ReferenceResourceState:
    """``sent``: every message id handed to the Observer (the engine's in-process set);
    ``observed``: the record's observed ids (a new generation starts with none)."""

    generation: int
    sent: set[str] = field(default_factory=set)
    observed: set[str] = field(default_factory=set)


def state_of(live: LiveMemory) -> ReferenceResourceState:
    state = live.reference_resource
    if state is None:
        state = live.reference_resource = ReferenceResourceState(live.record.generation_count)
    elif state.generation != live.record.generation_count:
        state.generation = live.record.generation_count
        state.observed.clear()
    return state


def thread_cursor(thread: Thread | None) -> datetime | None:
    value = thread.om.get("lastObservedAt") if thread is not None else None
    return datetime.fromisoformat(value) if value else None


def _threads(om: CycleContext, live: LiveMemory) -> list[Thread]:
    return om.storage.list_threads(live.resource_id) if live.resource_id else []


def window(om: CycleContext, live: LiveMemory) -> list[Message]:
    """The turn's unobserved list: messages of every thread after the record's cursor that are
    not among its observed ids, oldest first."""
    observed = state_of(live).observed
    cursor = live.record.last_observed_at
    messages = [
        m
        for thread in _threads(om, live)
        for m in om.storage.get_messages(thread.id, after=cursor)
        if m.id not in observed and m.role != "system"
    ]
    messages.sort(key=lambda m: m.created_at)
    return messages


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _truncate(text: str, limit: int) -> str:
    """The reference's ``maybeTruncate``: ``limit`` UTF-16 units (a cut surrogate pair dropped),
    then a note of how many were cut."""
    if _utf16_len(text) <= limit:
        return text
    units = text.encode("utf-16-le")[: limit * 2]
    if len(units) >= 2 and 0xD800 <= int.from_bytes(units[-2:], "little") <= 0xDBFF:
        units = units[:-2]
    cut = units.decode("utf-16-le")
    return f"{cut}\n... [truncated {_utf16_len(text) - _utf16_len(cut)} characters]"


def _clock(dt: datetime) -> str:
    return f"{dt.hour % 12 or 12}:{dt.minute:02d} {'AM' if dt.hour < 12 else 'PM'}"


def format_messages(messages: list[Message], timezone: str) -> str:
    """The reference's ``formatMessagesForObserver`` for text parts (``maxPartLength`` 500): a
    ``Mon D YYYY:`` line when the date changes, ``Role (h:mm AM): text`` with the time only when
    it changed."""
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(timezone)
    lines: list[str] = []
    last_date = last_time = None
    for message in messages:
        role = message.role[:1].upper() + message.role[1:]
        for part in message.parts:
            if part.type != "text" or not part.text:
                continue
            body = _truncate(part.text, OTHER_CONVERSATION_PART_CHARS)
            when = (part.created_at or message.created_at).astimezone(tz)
            date = f"{when:%b} {when.day} {when.year}"
            if date != last_date:
                lines.append(f"{date}:")
                last_date, last_time = date, None
            time = _clock(when)
            lines.append(f"{role} ({time}): {body}" if time != last_time else f"{role}: {body}")
            last_time = time
    return "\n".join(lines)


def other_conversations(om: CycleContext, live: LiveMemory, current_thread: str) -> str:
    """The ``<other-conversation>`` blocks of every other thread: its messages after its own
    cursor (the record's when it has none) that the Observer was never handed."""
    sent = state_of(live).sent
    blocks = []
    for thread in _threads(om, live):
        if thread.id == current_thread:
            continue
        since = thread_cursor(thread) or live.record.last_observed_at
        messages = [m for m in om.storage.get_messages(thread.id, after=since) if m.id not in sent]
        text = format_messages(messages, live.record.observed_timezone or "UTC")
        if text:
            shown = obscure_thread_id(thread.id) if om.config.obscure_thread_ids else thread.id
            blocks.append(f'<other-conversation id="{shown}">\n{text}\n</other-conversation>')
    return "\n\n".join(blocks)


def pending_tokens(om: CycleContext, live: LiveMemory) -> int:
    """The reference's pending count in resource scope: the unobserved list as a list, plus the
    other-conversation blocks as a string."""
    block = other_conversations(om, live, live.thread_id)
    return om.counter.count_messages(window(om, live)) + (om.counter.count_string(block) if block else 0)


@dataclass(slots=True)
class ReferencePlan:
    by_thread: dict[str, list[Message]]  # the threads to observe, oldest message first
    tokens: dict[str, int]
    batches: list[list[str]]


def plan_cycle(om: CycleContext, live: LiveMemory) -> ReferencePlan | None:
    """The reference's resource cycle: ``None`` when its own check (the stored pending count
    plus the unobserved list, without the other-conversation blocks) is under the threshold."""
    state = state_of(live)
    current = window(om, live)
    threshold = om.threshold(live)
    if live.record.pending_message_tokens + om.counter.count_messages(current) < threshold:
        return None
    by_thread: dict[str, list[Message]] = {}
    for thread in _threads(om, live):
        messages = [m for m in om.storage.get_messages(thread.id, after=thread_cursor(thread)) if m.role != "system"]
        if messages:
            by_thread[thread.id] = messages
    if current:
        merged = {m.id: m for m in by_thread.get(live.thread_id, [])}
        for message in current:
            merged[message.id] = message
        by_thread[live.thread_id] = list(merged.values())
    by_thread = {t: [m for m in msgs if m.id not in state.sent] for t, msgs in by_thread.items()}
    by_thread = {t: msgs for t, msgs in by_thread.items() if msgs}
    if not by_thread:
        return None
    tokens = {t: om.counter.count_messages(msgs) for t, msgs in by_thread.items()}
    message_tokens = om.config.observation.message_tokens
    limit = getattr(message_tokens, "max", message_tokens)
    chosen: list[str] = []
    total = 0
    for thread_id in sorted(by_thread, key=lambda t: -tokens[t]):  # stable: ties keep list order
        if total >= limit:
            break
        chosen.append(thread_id)
        total += tokens[thread_id]
    chosen.sort(key=lambda t: min(m.created_at for m in by_thread[t]))
    batches: list[list[str]] = []
    size = 0
    for thread_id in chosen:
        if batches and batches[-1] and size + tokens[thread_id] > om.config.observation.max_tokens_per_batch:
            batches.append([])
            size = 0
        if not batches:
            batches.append([])
        batches[-1].append(thread_id)
        size += tokens[thread_id]
    return ReferencePlan({t: by_thread[t] for t in chosen}, tokens, batches)


def merge_section(existing: str, section: str, boundary: datetime | None) -> str:
    """The reference's ``replaceOrAppendThreadSection``: a section whose first ``Date:`` is in
    the thread's *first* section is merged into it (its lines after its first ``Date:`` line);
    anything else is appended after a message boundary."""
    if not existing:
        return section
    appended = f"{existing}{format_boundary(boundary) if boundary else chr(10) * 2}{section}"
    opened, dated = _THREAD_OPEN.search(section), _DATE.search(section)
    if opened is None or dated is None:
        return appended
    tag, date = f'<thread id="{opened.group(1)}">', dated.group(1)
    start = existing.find(tag)
    if start == -1:
        return appended
    close = existing.find(_CLOSE, start)
    if close == -1:
        return appended
    end = close + len(_CLOSE)
    current = existing[start:end]
    if f"Date: {date}" not in current and f"Date:{date}" not in current:
        return appended
    date_line_end = section.find("\n", section.find("Date:"))
    new_close = section.rfind(_CLOSE)
    if date_line_end == -1 or new_close == -1:
        return appended
    content = section[date_line_end + 1 : new_close].strip()
    if not content:
        return appended
    merged = f"{current[: -len(_CLOSE)].rstrip()}\n{content}\n{_CLOSE}"
    return existing[:start] + merged + existing[end:]


__all__ = [
    "ReferencePlan",
    "ReferenceResourceState",
    "format_messages",
    "merge_section",
    "other_conversations",
    "pending_tokens",
    "plan_cycle",
    "state_of",
    "window",
]

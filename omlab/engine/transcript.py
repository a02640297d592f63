"""The message history as the Observer reads it.

Format (one line per part; continuation lines of a multi-line text follow as they are)::

    Dec 4 2025:
    User (2:30 PM): I just moved to Lisbon.
    Assistant: Welcome! …
    Tool Call web_search (2:31 PM): {"query": "dentist lisbon"}
    Tool Result web_search (2:31 PM): […]
    Image (2:32 PM): [Image #1: screenshot.png]

A message with a speaker's ``name`` (LoCoMo under the official protocol) is labelled with it
(``Caroline (2:30 PM): …``) instead of ``User``/``Assistant``. A date header is written whenever the local date changes; the time is shown only when it differs
from the previous line's, except on tool lines, which always show it. Tool calls are written once
per ``tool_call_id`` (a result carries its call). Tool results are cut to ``TOOL_RESULT_TOKEN_CAP``
estimated tokens for the Observer only; thresholds always count the full result.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from omlab.engine.messages import Message, Part
from omlab.tokens.tokenx import estimate_token_count, slice_by_tokens

TOOL_RESULT_TOKEN_CAP = 10_000

_ROLE_LABELS = {"user": "User", "assistant": "Assistant", "system": "System-reminder", "tool": "Tool"}


def as_text(value: object) -> str:
    """A tool argument or result as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _cap(text: str, tokens: int) -> str:
    if estimate_token_count(text) <= tokens:
        return text
    return slice_by_tokens(text, 0, tokens) + " … [truncated for the observer]"


def _date_header(dt: datetime) -> str:
    return f"{dt:%b} {dt.day} {dt.year}:"


def _clock(dt: datetime) -> str:
    hour = dt.hour % 12 or 12
    return f"{hour}:{dt.minute:02d} {'AM' if dt.hour < 12 else 'PM'}"


def format_history(
    messages: Sequence[Message],
    *,
    timezone: str = "UTC",
    attachment_counter: list[int] | None = None,
) -> str:
    """Render ``messages`` in the Observer's history format (see the module docstring)."""
    tz = ZoneInfo(timezone)
    lines: list[str] = []
    last_date: str | None = None
    last_clock: str | None = None
    seen_calls: set[str] = set()
    counter = attachment_counter if attachment_counter is not None else [0, 0]

    for message in messages:
        role_label = message.name or _ROLE_LABELS.get(message.role, message.role.capitalize())
        for part in message.parts:
            if part.is_data:
                continue
            rendered = list(_render_part(part, role_label, seen_calls, counter))
            if not rendered:
                continue
            when = (part.created_at or message.created_at).astimezone(tz)
            date = _date_header(when)
            if date != last_date:
                lines.append(date)
                last_date, last_clock = date, None
            clock = _clock(when)
            for label, body, always_time in rendered:
                if always_time or clock != last_clock:
                    lines.append(f"{label} ({clock}): {body}")
                else:
                    lines.append(f"{label}: {body}")
                last_clock = clock
    return "\n".join(lines)


def _render_part(
    part: Part, role_label: str, seen_calls: set[str], counter: list[int]
) -> Iterable[tuple[str, str, bool]]:
    kind = part.type
    if kind == "text":
        text = (part.text or "").strip()
        if text:
            yield role_label, text, False
    elif kind == "tool-invocation":
        name = part.tool_name or "tool"
        call_id = part.tool_call_id
        if call_id is None or call_id not in seen_calls:
            if call_id is not None:
                seen_calls.add(call_id)
            yield f"Tool Call {name}", as_text(part.args) if part.args is not None else "{}", True
        if part.state == "result":
            result = as_text(part.result) if part.result not in (None, "") else "[empty result]"
            yield f"Tool Result {name}", _cap(result, TOOL_RESULT_TOKEN_CAP), True
        elif part.state == "output-error":
            yield f"Tool Error {name}", part.error_text or "[unknown error]", True
        elif part.state == "output-denied":
            yield f"Tool Denied {name}", part.error_text or "[denied]", True
    elif kind == "reasoning":
        text = (part.text or "").strip()
        if text:
            yield "Reasoning", text, False
    elif kind in ("image", "file"):
        is_image = kind == "image" or (part.mime_type or "").startswith("image/")
        slot = 0 if is_image else 1
        counter[slot] += 1
        label = "Image" if is_image else "File"
        name = part.filename or part.mime_type or "attachment"
        yield label, f"[{label} #{counter[slot]}: {name}]", False
    else:
        yield role_label, as_text({"type": part.type, "text": part.text}), False

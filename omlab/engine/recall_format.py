"""How the ``recall`` tool writes messages and parts: headers, timestamps, the short ``low``-detail
lines of a part, and the part filters (``partType``, ``toolName``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from omlab.engine.attachment_tokens import is_image_part
from omlab.engine.messages import Message, Part, utc
from omlab.engine.transcript import as_text
from omlab.tokens.tokenx import estimate_token_count

LOW_TEXT_CHARS = 120
LOW_RESULT_TOKENS = 60
ELLIPSIS = "…"


def pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        return str(value)


def stamp(dt: datetime) -> str:
    return f"{utc(dt):%Y-%m-%d %H:%M:%S}Z"


def cut_chars(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rstrip() + ELLIPSIS


def thread_date(dt: datetime) -> str:
    return f"{utc(dt):%Y-%m-%d %H:%MZ}"


def message_header(message: Message) -> str:
    return f"**{message.role} ({stamp(message.created_at)})** [{message.id}]:"


@dataclass(frozen=True, slots=True)
class MessageView:
    """A visible message and the (index, part) pairs the filters keep."""

    message: Message
    parts: list[tuple[int, Part]]

    @property
    def key(self) -> tuple[datetime, str]:
        return (utc(self.message.created_at), self.message.id)


def part_matches(part: Part, part_type: str | None, tool_name: str | None) -> bool:
    if tool_name is not None and (part.type != "tool-invocation" or part.tool_name != tool_name):
        return False
    if part_type is None:
        return True
    if part_type == "tool-call":
        return part.type == "tool-invocation"
    if part_type == "tool-result":
        return part.type == "tool-invocation" and part.state in ("result", "output-error", "output-denied")
    if part_type == "image":
        return part.type in ("image", "file") and is_image_part(part)
    if part_type == "file":
        return part.type == "file" and not is_image_part(part)
    return part.type == part_type


def low_message(view: MessageView, part_type: str | None) -> str:
    lines = [message_header(view.message)]
    for index, part in view.parts:
        lines.append(f"[p{index}] {low_part(part, part_type)}")
    return "\n".join(lines)


def low_result(value: Any) -> str:
    text = " ".join(as_text(value).split())
    if estimate_token_count(text) > LOW_RESULT_TOKENS:
        text = prefix_within(text, LOW_RESULT_TOKENS, estimate_token_count).rstrip() + ELLIPSIS
    return cut_chars(text, LOW_TEXT_CHARS)


def low_part(part: Part, part_type: str | None) -> str:
    kind = part.type
    if kind == "text":
        return cut_chars(part.text or "", LOW_TEXT_CHARS)
    if kind == "reasoning":
        return f"[Reasoning] {cut_chars(part.text or '', LOW_TEXT_CHARS)}"
    if kind == "tool-invocation":
        name = part.tool_name or "tool"
        outcome = ""
        if part.state == "result":
            outcome = low_result(part.result) if part.result not in (None, "") else "[empty result]"
        elif part.state in ("output-error", "output-denied"):
            outcome = ("error: " if part.state == "output-error" else "denied: ") + cut_chars(
                part.error_text or "", LOW_TEXT_CHARS
            )
        if part_type == "tool-result":
            return f"[Tool Result: {name}] {outcome}".rstrip()
        if part_type == "tool-call" or not outcome:
            return f"[Tool Call: {name}]"
        return f"[Tool Call: {name}] → {outcome}"
    if kind in ("image", "file"):
        label = "Image" if is_image_part(part) else "File"
        return f"[{label}: {part.filename or part.mime_type or 'attachment'}]"
    return f"[{kind}]"


def prefix_within(text: str, limit: int, count: Callable[[str], int]) -> str:
    """The longest prefix of ``text`` whose count is at most ``limit`` (binary search; counts
    are monotone in the prefix length for every estimator omlab uses)."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(text[:mid]) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]

"""Per-thread sections of a resource-scoped observation log (om-reference §2.9).

In resource scope one record holds the observations of every thread of a resource, each batch
wrapped as::

    <thread id="9f3c2a1b">
    Date: May 3, 2026
    * 🔴 (10:02) User stated ...
    </thread>

A new batch for the same thread and the same date as that thread's latest section is merged
into it; anything else is appended after a message-boundary delimiter. Thread ids can be
obscured with xxHash32 so raw ids (which may leak benchmark evidence locations) never reach a
prompt.
"""

from __future__ import annotations

import re
from datetime import datetime

from omlab.engine.observation_text import format_boundary

_CLOSE = "</thread>"
_ANY_THREAD_TAG = re.compile(r"<thread(?:\s[^>]*)?>|</thread>", re.IGNORECASE)
_OPEN_TAG = re.compile(r'<thread id="([^"]*)">')
_DATE = re.compile(r"Date:\s*([A-Za-z]+\s+[0-9]+,\s+[0-9]+)")
_GROUP_OPEN = re.compile(r"<observation-group\b")
_BOUNDARY_LINE = re.compile(r"^--- message boundary \([^)]*\) ---$", re.MULTILINE)


def _check_thread_id(thread_id: str) -> None:
    if not thread_id or any(char in thread_id for char in '"<>\n\r'):
        raise ValueError(f"thread id {thread_id!r} must be non-empty and free of quotes, angle brackets, newlines")


def strip_thread_tags(observations: str) -> str:
    """Remove any ``<thread …>`` / ``</thread>`` tags (the Observer must not attribute threads itself)."""
    return _ANY_THREAD_TAG.sub("", observations).strip()


def wrap_thread_section(thread_id: str, observations: str) -> str:
    r"""Wrap *observations* as ``<thread id="{thread_id}">\n{observations}\n</thread>``.

    Stray thread tags inside *observations* are removed first.

    Raises:
        ValueError: the id is empty or holds a quote, angle bracket or newline.
    """
    _check_thread_id(thread_id)
    return f'<thread id="{thread_id}">\n{strip_thread_tags(observations)}\n{_CLOSE}'


def _normalised_date(match: re.Match[str]) -> str:
    return " ".join(match.group(1).split())


def _last_section_span(text: str, thread_id: str) -> tuple[int, int] | None:
    opening = f'<thread id="{thread_id}">'
    span = None
    search_from = 0
    while (start := text.find(opening, search_from)) != -1:
        close = text.find(_CLOSE, start)
        if close == -1:
            break
        span = (start, close + len(_CLOSE))
        search_from = span[1]
    return span


def merge_thread_section(existing_text: str, thread_id: str, observations: str, boundary_dt: datetime | None) -> str:
    """Add a batch of *observations* for *thread_id* to the resource log *existing_text*.

    If the thread's last section in *existing_text* ends in the same ``Date:`` group as the
    batch's first ``Date:`` line, the batch lines after that ``Date:`` line are inserted just
    before that section's ``</thread>`` (a batch that is one ``<observation-group>`` goes in
    whole, so the group stays well-formed). Otherwise the wrapped batch is appended after the
    message boundary for *boundary_dt* (after a blank line when *boundary_dt* is None). An
    empty *existing_text* gives the wrapped batch alone; blank *observations* change nothing.

    Args:
        existing_text: the current ``activeObservations``.
        thread_id: the id as it appears in the log (already obscured if that option is on).
        observations: the Observer's text for this thread.
        boundary_dt: the batch's ``lastObservedAt``.
    """
    if not strip_thread_tags(observations):
        return existing_text
    section = wrap_thread_section(thread_id, observations)
    if not existing_text:
        return section
    new_date = _DATE.search(section)
    span = _last_section_span(existing_text, thread_id)
    if new_date and span:
        existing_dates = list(_DATE.finditer(existing_text, span[0], span[1]))
        if existing_dates and _normalised_date(existing_dates[-1]) == _normalised_date(new_date):
            date_line_end = section.find("\n", new_date.start())
            added = section[date_line_end + 1 : section.rfind(_CLOSE)].strip()
            if _GROUP_OPEN.match(strip_thread_tags(observations)):
                # an observation group (retrieval) moves whole, its Date: line inside it: cutting
                # at the Date: line would leave its closing tag without the opening one
                added = strip_thread_tags(observations)
            if date_line_end != -1 and added:
                body = existing_text[span[0] : span[1] - len(_CLOSE)].rstrip()
                return f"{existing_text[: span[0]]}{body}\n{added}\n{_CLOSE}{existing_text[span[1] :]}"
    separator = format_boundary(boundary_dt) if boundary_dt else "\n\n"
    return f"{existing_text}{separator}{section}"


def split_thread_sections(text: str) -> list[tuple[str | None, str]]:
    """Split a resource log into ``(thread_id, content)`` pairs, in order.

    Content is the trimmed text inside a section (an unclosed section runs to the end). Text
    outside any section comes back as ``(None, text)`` with message-boundary delimiter lines
    removed; outside text that is then blank is dropped.
    """
    result: list[tuple[str | None, str]] = []

    def add_outside(chunk: str) -> None:
        cleaned = _BOUNDARY_LINE.sub("", chunk).strip()
        if cleaned:
            result.append((None, re.sub(r"\n{3,}", "\n\n", cleaned)))

    position = 0
    while (opening := _OPEN_TAG.search(text, position)) is not None:
        add_outside(text[position : opening.start()])
        close = text.find(_CLOSE, opening.end())
        end = len(text) if close == -1 else close
        result.append((opening.group(1), text[opening.end() : end].strip()))
        position = len(text) if close == -1 else close + len(_CLOSE)
    add_outside(text[position:])
    return result


# --- xxHash32 ------------------------------------------------------------------------------

_PRIME1 = 0x9E3779B1
_PRIME2 = 0x85EBCA77
_PRIME3 = 0xC2B2AE3D
_PRIME4 = 0x27D4EB2F
_PRIME5 = 0x165667B1
_MASK = 0xFFFFFFFF


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def _round(accumulator: int, lane: int) -> int:
    accumulator = (accumulator + lane * _PRIME2) & _MASK
    return (_rotl(accumulator, 13) * _PRIME1) & _MASK


def xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32 of *data* (the reference algorithm, pure Python)."""
    length = len(data)
    offset = 0
    if length >= 16:
        v1 = (seed + _PRIME1 + _PRIME2) & _MASK
        v2 = (seed + _PRIME2) & _MASK
        v3 = seed & _MASK
        v4 = (seed - _PRIME1) & _MASK
        limit = length - 16
        while offset <= limit:
            v1 = _round(v1, int.from_bytes(data[offset : offset + 4], "little"))
            v2 = _round(v2, int.from_bytes(data[offset + 4 : offset + 8], "little"))
            v3 = _round(v3, int.from_bytes(data[offset + 8 : offset + 12], "little"))
            v4 = _round(v4, int.from_bytes(data[offset + 12 : offset + 16], "little"))
            offset += 16
        acc = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK
    else:
        acc = (seed + _PRIME5) & _MASK
    acc = (acc + length) & _MASK
    while offset + 4 <= length:
        lane = int.from_bytes(data[offset : offset + 4], "little")
        acc = (_rotl((acc + lane * _PRIME3) & _MASK, 17) * _PRIME4) & _MASK
        offset += 4
    while offset < length:
        acc = (_rotl((acc + data[offset] * _PRIME5) & _MASK, 11) * _PRIME1) & _MASK
        offset += 1
    acc ^= acc >> 15
    acc = (acc * _PRIME2) & _MASK
    acc ^= acc >> 13
    acc = (acc * _PRIME3) & _MASK
    acc ^= acc >> 16
    return acc


def obscure_thread_id(thread_id: str) -> str:
    """The obscured form of a thread id: xxHash32 (seed 0) of its UTF-8 bytes, 8 lowercase hex digits."""
    return f"{xxh32(thread_id.encode('utf-8')):08x}"

"""The reference's ``addRelativeTimeToObservations`` (1.31.0), for ``compat="reference"``.

omlab's own annotator (:mod:`omlab.engine.relative_time`) reads more date forms (ranges with any
dash, periods, ISO dates, dates written in a line) and dates a range by its start. This module
reproduces the reference exactly, so a reference-mode actor sees what production Mastra shows:

* inline ``(estimated|meaning …YYYY)``: the first of "Month D, YYYY", "Month D-D, YYYY" (hyphen
  only; the first day), "early/mid/late Month YYYY" (day 7/15/23) and "Month to Month YYYY" (the
  1st of the *second* month) gets `` - <relative>``, plus ``, likely already happened`` for a
  past date on a line that states an intention;
* ``Date: Month D, YYYY`` headers (the whole line) get `` (<relative>)`` and a gap line before
  them when more than a day after the previous header.

The relative wording and the gap lines are the same as omlab's.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time

from omlab.engine.relative_time import format_gap, format_relative_days

# the reference's isFutureIntentObservation (omlab's own list also knows "scheduled")
_FUTURE_INTENT = re.compile(
    r"\bwill\s+(?:be\s+)?(?:\w+ing|\w+)\b|\bplans?\s+to\b|\bplanning\s+to\b|\blooking\s+forward\s+to\b"
    r"|\bgoing\s+to\b|\bintends?\s+to\b|\bwants?\s+to\b|\bneeds?\s+to\b|\babout\s+to\b",
    re.IGNORECASE,
)

_MONTH_PREFIXES = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "may": 5,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}

_SIMPLE = re.compile(r"([A-Z][a-z]+)\s+(\d{1,2}),?\s+(\d{4})")
_RANGE = re.compile(r"([A-Z][a-z]+)\s+(\d{1,2})-\d{1,2},?\s+(\d{4})")
_VAGUE = re.compile(r"(late|early|mid)[- ]?(?:to[- ]?(?:late|early|mid)[- ]?)?([A-Z][a-z]+)\s+(\d{4})", re.IGNORECASE)
_CROSS_MONTH = re.compile(r"([A-Z][a-z]+)\s+to\s+(?:early\s+)?([A-Z][a-z]+)\s+(\d{4})", re.IGNORECASE)
_INLINE = re.compile(r"\((estimated|meaning)\s+([^)]+\d{4})\)", re.IGNORECASE)
_HEADER = re.compile(r"^(Date:\s*)([A-Z][a-z]+ \d{1,2}, \d{4})$", re.MULTILINE)
_VAGUE_DAY = {"early": 7, "mid": 15, "late": 23}


def _js_date(month: str, day: int, year: str) -> date | None:
    """``new Date("Month D, YYYY")`` as V8 reads it: a month name is known by its first three
    letters; a day from 1 to 31 the month lacks rolls over into the next month ("Feb 30" is
    Mar 2), any other day is invalid."""
    number = _MONTH_PREFIXES.get(month[:3].lower())
    if number is None or not 1 <= day <= 31:
        return None
    try:
        return date.fromordinal(date(int(year), number, 1).toordinal() + day - 1)
    except ValueError:
        return None


def parse_reference_date(content: str) -> date | None:
    """The reference's ``parseDateFromContent``."""
    for pattern in (_SIMPLE, _RANGE):
        match = pattern.search(content)
        if match:
            parsed = _js_date(match.group(1), int(match.group(2)), match.group(3))
            if parsed:
                return parsed
    match = _VAGUE.search(content)
    if match:
        parsed = _js_date(match.group(2), _VAGUE_DAY[match.group(1).lower()], match.group(3))
        if parsed:
            return parsed
    match = _CROSS_MONTH.search(content)
    if match:
        return _js_date(match.group(2), 1, match.group(3))
    return None


def _is_past(target: date, current: date | datetime) -> bool:
    """``targetDate < currentDate``: a date is midnight, so today is past once the day began."""
    if isinstance(current, datetime):
        return datetime.combine(target, time(), tzinfo=current.tzinfo) < current
    return target < current


def _calendar_day(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def add_reference_relative_time(text: str, current_date: date | datetime) -> str:
    """``addRelativeTimeToObservations(text, currentDate)`` of @mastra/memory 1.31.0."""
    today = _calendar_day(current_date)

    def inline(match: re.Match[str]) -> str:
        target = parse_reference_date(match.group(2))
        if target is None:
            return match.group(0)
        days = (today - target).days
        relative = format_relative_days(days)
        line_start = text.rfind("\n", 0, match.start()) + 1
        if _is_past(target, current_date) and _FUTURE_INTENT.search(text[line_start : match.start()]):
            relative += ", likely already happened"
        return f"({match.group(1)} {match.group(2)} - {relative})"

    expanded = _INLINE.sub(inline, text)
    pieces: list[str] = []
    last_end = 0
    previous: date | None = None
    for match in _HEADER.finditer(expanded):
        header_date = parse_reference_date(match.group(2))
        if header_date is None:
            continue
        pieces.append(expanded[last_end : match.start()])
        gap = format_gap((header_date - previous).days) if previous else None
        if gap:
            pieces.append(f"\n{gap}\n\n")
        pieces.append(f"{match.group(1)}{match.group(2)} ({format_relative_days((today - header_date).days)})")
        last_end = match.end()
        previous = header_date
    pieces.append(expanded[last_end:])
    return "".join(pieces)

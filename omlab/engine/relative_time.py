"""Relative-time annotations for the observation log (``addRelativeTimeToObservations``).

At render time the actor sees, next to every absolute date, how far it lies from the current
date (the benchmark's question date in a replay), so it can reason about "last week" or "a
planned trip that should have happened by now".

Day counts are calendar days: ``current_date.date() - date`` (positive = in the past). Wording
cut-offs, identical for the past and (with "in …") for the future:

=============  ===========================================
days           wording
=============  ===========================================
0              today
1              yesterday / tomorrow
2–6            N days ago / in N days
7–13           1 week ago / in 1 week
14–29          N weeks ago (N = days // 7)
30–59          1 month ago / in 1 month
60–364         N months ago (N = days // 30, so 360–364 → 12 months)
≥ 365          1 year ago, N years ago (N = days // 365)
=============  ===========================================

Gap lines between consecutive ``Date:`` headers (days = later − earlier; none for ≤ 1 day or a
date going backwards): 2–6 → ``[N days later]``, 7–13 → ``[1 week later]``, 14–29 →
``[N weeks later]``, 30–59 → ``[1 month later]``, ≥ 60 → ``[N months later]`` (N = days // 30,
also past a year).

Range headers (``Date: Aug 13–27, 2024``) are dated by their first day; the gap before the next
header is counted from their last day. A full date written inside an observation line gets the
relative time after it, like a header, and so do an ISO date, a month and year, a range in plain
parentheses and a year after "in/since/during/by/until/from" (omlab; the reference annotates
only headers and inline ``(meaning …)``). Inline annotations also read ISO dates, spans of years
("approx. 2021–2026": the first), "end of 2023" (Dec 1) and "by late 2027".

The function is idempotent: an annotated header, an annotated inline date and an existing gap
line are recognised and left alone, so applying it twice changes nothing.
"""

from __future__ import annotations

import re
from datetime import date, datetime

_MONTHS = {
    name: number
    for number, full in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
    for name in (full, full[:3])
}
_MONTHS["sept"] = 9

_VAGUE_DAY = {"early": 7, "mid": 15, "late": 23}
#: "early/mid/late 2023": the same fractions of a year as 7/15/23 of a month
_VAGUE_MONTH_OF_YEAR = {"early": 3, "mid": 7, "late": 10}

_FUTURE_INTENT = re.compile(
    r"\bwill\s+(?:be\s+)?\w+"
    r"|\bplans?\s+to\b|\bplanning\s+to\b|\blooking\s+forward\s+to\b|\bgoing\s+to\b"
    r"|\bintends?\s+to\b|\bwants?\s+to\b|\bneeds?\s+to\b|\babout\s+to\b|\bscheduled\b",
    re.IGNORECASE,
)

# "(meaning Mar 22, 2025)", "(meaning Mar 22, 2025 at 18:08)", "(estimated 2023)"
_CLOCK_TIME = r"(?:,?\s+(?:at\s+)?[0-9]{1,2}:[0-9]{2}(?:\s*[AaPp]\.?[Mm]\.?)?)?"
_INLINE_DATE = re.compile(
    rf"\((estimated|meaning)\s+([^)]*?[0-9]{{4}}(?:-[0-9]{{2}}-[0-9]{{2}})?{_CLOCK_TIME})\)", re.IGNORECASE
)
_DASH = r"\s*(?:[-–—]|to|until|through)\s*"
_SIMPLE_DATE = re.compile(r"([A-Z][a-z]+)\.?\s+([0-9]{1,2})(?:st|nd|rd|th)?,?\s+([0-9]{4})")
# "Aug 13–27, 2024" and "Aug 28 – Sep 3, 2024": the range start
_DAY_RANGE = re.compile(
    rf"([A-Z][a-z]+)\.?\s+([0-9]{{1,2}})(?:st|nd|rd|th)?{_DASH}(?:[A-Z][a-z]+\.?\s+)?[0-9]{{1,2}}(?:st|nd|rd|th)?,?\s+([0-9]{{4}})"
)
_VAGUE_DATE = re.compile(
    r"(late|early|mid)[- ]?(?:to[- ]?(?:late|early|mid)[- ]?)?([A-Z][a-z]+)\s+([0-9]{4})", re.IGNORECASE
)
# "April to May 2023", "late April to early May 2023", "April–May 2023": the range start
_MONTH_RANGE = re.compile(
    rf"(?:(late|early|mid)[- ]?)?([A-Z][a-z]+){_DASH}(?:(?:late|early|mid)[- ]?)?([A-Z][a-z]+)\s+([0-9]{{4}})",
    re.IGNORECASE,
)
_MONTH_YEAR = re.compile(r"\b([A-Z][a-z]+)\.?\s+([0-9]{4})\b")
_YEAR = re.compile(r"(?:\b(late|early|mid)[- ]?)?\b((?:1[89]|2[0-9])[0-9]{2})\b", re.IGNORECASE)
_YEAR_LEAD_IN = re.compile(
    r"(?:(?:approx\.?|approximately|roughly|~|c\.)\s*)?"
    r"(?:(?:sometime|some time|around|circa|about|during|throughout|by|before|until|after|since)(?:\s+|$))?"
    r"(?:in\s*)?(?:the\s+year(?:\s+of)?\s*)?",
    re.IGNORECASE,
)
_YEAR_NUMBER = r"(?:1[89]|2[0-9])[0-9]{2}"
# "2024-01-10"
_ISO_DATE = re.compile(r"\b([0-9]{4})-([0-9]{2})-([0-9]{2})\b")
# "2021–2026", "2022–2023 or 2023–2024": a span of years means its first
_YEAR_SPAN = re.compile(
    rf"(?:\b(late|early|mid)[- ]?)?\b({_YEAR_NUMBER}){_DASH}{_YEAR_NUMBER}\b"
    rf"(?:\s+or\s+{_YEAR_NUMBER}(?:{_DASH}{_YEAR_NUMBER})?\b)*",
    re.IGNORECASE,
)
# "end of 2023", "the start of 2024", "beginning of 2022"
_YEAR_EDGE = re.compile(rf"(?:\bthe\s+)?\b(end|start|beginning)\s+of\s+({_YEAR_NUMBER})\b", re.IGNORECASE)
_YEAR_EDGE_MONTH = {"end": 12, "start": 1, "beginning": 1}
_MONTH_NAME = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
# a full date written inside an observation line, single or a range
_LINE_DATE = re.compile(
    rf"\b{_MONTH_NAME}\s+[0-9]{{1,2}}(?:st|nd|rd|th)?"
    rf"(?:(?:{_DASH})(?:{_MONTH_NAME}\s+)?[0-9]{{1,2}}(?:st|nd|rd|th)?)?,?\s+[0-9]{{4}}\b"
    rf"(?:{_DASH}{_MONTH_NAME}\s+[0-9]{{1,2}}(?:st|nd|rd|th)?,?\s+[0-9]{{4}}\b)?"
)
# the inline annotations ``expand_inline_dates`` handles: their dates are left to it
_PARENTHESISED = re.compile(r"\((?:meaning|estimated)\s[^()]*\)", re.IGNORECASE)
# looser dates inside a line: an ISO date, a month and year, a year after a preposition
_LINE_LOOSE_DATE = re.compile(
    rf"\b[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}\b"
    rf"|\b{_MONTH_NAME}\s+(?:1[89]|2[0-9])[0-9]{{2}}\b(?![-–—/:][0-9])"
    rf"|\b(?:in|since|during|by|until|from)\s+((?:1[89]|2[0-9])[0-9]{{2}})\b(?![-–—/:.,]?[0-9])"
)
_FUTURE_YEARS = 10
"""A bare year further in the future than this is more likely a number than a date."""

_RELATIVE_WORDING = r"today|yesterday|tomorrow|[0-9]+ (?:day|week|month|year)s? ago|in [0-9]+ (?:day|week|month|year)s?"
_ALREADY_RELATIVE = re.compile(rf"[ \t]*\((?:{_RELATIVE_WORDING})\)")
# "Date: May 1, 2023", and range headers "Date: Aug 13–27, 2024", "Date: Aug 28 – Sep 3, 2024",
# "Date: Aug 28, 2024 – Sep 3, 2024"
_HEADER = re.compile(
    rf"^(Date:[ \t]*)([A-Z][a-z]+ [0-9]{{1,2}}(?:[ \t]*[-–—][ \t]*(?:[A-Z][a-z]+ )?[0-9]{{1,2}})?, [0-9]{{4}}"
    rf"(?:[ \t]*[-–—][ \t]*[A-Z][a-z]+ [0-9]{{1,2}}, [0-9]{{4}})?)( \((?:{_RELATIVE_WORDING})\))?$",
    re.MULTILINE,
)
_GAP_LINE = re.compile(r"\[(?:[0-9]+ days|1 week|[0-9]+ weeks|1 month|[0-9]+ months) later\]")


def format_relative_days(days: int) -> str:
    """Word a distance of *days* calendar days (positive = past, negative = future).

    See the module docstring for the exact cut-offs.
    """
    if days == 0:
        return "today"
    span = abs(days)
    if span == 1:
        return "yesterday" if days > 0 else "tomorrow"
    if span < 7:
        amount = f"{span} days"
    elif span < 14:
        amount = "1 week"
    elif span < 30:
        amount = f"{span // 7} weeks"
    elif span < 60:
        amount = "1 month"
    elif span < 365:
        amount = f"{span // 30} months"
    else:
        years = span // 365
        amount = f"{years} year{'s' if years > 1 else ''}"
    return f"{amount} ago" if days > 0 else f"in {amount}"


def format_gap(days: int) -> str | None:
    """The gap line for two consecutive date headers *days* apart, or None when ≤ 1 day."""
    if days <= 1:
        return None
    if days < 7:
        return f"[{days} days later]"
    if days < 14:
        return "[1 week later]"
    if days < 30:
        return f"[{days // 7} weeks later]"
    if days < 60:
        return "[1 month later]"
    return f"[{days // 30} months later]"


def _make_date(month_name: str, day: int, year: str) -> date | None:
    month = _MONTHS.get(month_name.lower())
    if month is None:
        return None
    try:
        return date(int(year), month, day)
    except ValueError:
        return None


def parse_date_from_content(content: str) -> date | None:
    """Read the date an inline ``(meaning …)`` / ``(estimated …)`` annotation refers to.

    A range or a period means its start. Tried in this order: "Aug 13–27, 2024" and "Aug 28 –
    Sep 3, 2024" (the first day); "May 30, 2023" (a clock time after it is ignored); "April to May
    2023" and "late April to early May 2023" (the first month: its 1st, or day 7/15/23 with
    early/mid/late); "early/mid/late April 2023" (day 7/15/23, also "mid-to-late May 2023" → 15);
    "May 2023" (the 1st); "early/mid/late 2023" (Mar 1 / Jul 1 / Oct 1); "2023" (Jan 1). Month
    names may be full, three-letter or "Sept". Anything else (years such as "20XX", a day the
    month lacks) gives None.
    """
    match = _ISO_DATE.search(content)
    if match:
        try:
            return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            return None
    for pattern in (_DAY_RANGE, _SIMPLE_DATE):
        match = pattern.search(content)
        if match:
            parsed = _make_date(match.group(1), int(match.group(2)), match.group(3))
            if parsed:
                return parsed
    match = _MONTH_RANGE.search(content)
    if match and match.group(2).lower() in _MONTHS and match.group(3).lower() in _MONTHS:
        day = _VAGUE_DAY[match.group(1).lower()] if match.group(1) else 1
        parsed = _make_date(match.group(2), day, match.group(4))
        if parsed:
            return parsed
    match = _VAGUE_DATE.search(content)
    if match:
        parsed = _make_date(match.group(2), _VAGUE_DAY[match.group(1).lower()], match.group(3))
        if parsed:
            return parsed
    match = _MONTH_YEAR.search(content)
    if match:
        parsed = _make_date(match.group(1), 1, match.group(2))
        if parsed:
            return parsed
    for pattern in (_YEAR_EDGE, _YEAR_SPAN):
        match = pattern.search(content)
        rest = (content[: match.start()] + content[match.end() :]) if match else ""
        if match and _YEAR_LEAD_IN.fullmatch(rest.strip()):
            if pattern is _YEAR_EDGE:
                return date(int(match.group(2)), _YEAR_EDGE_MONTH[match.group(1).lower()], 1)
            month = _VAGUE_MONTH_OF_YEAR[match.group(1).lower()] if match.group(1) else 1
            return date(int(match.group(2)), month, 1)
    match = _YEAR.search(content)
    rest = (content[: match.start()] + content[match.end() :]) if match else ""
    # a year alone, at most with a vague lead-in ("sometime in 2023"); "Feb 30, 2023" is no year
    if match and _YEAR_LEAD_IN.fullmatch(rest.strip()):
        month = _VAGUE_MONTH_OF_YEAR[match.group(1).lower()] if match.group(1) else 1
        return date(int(match.group(2)), month, 1)
    return None


def is_future_intent(line: str) -> bool:
    """True when the line states an intention (will / plans to / going to / scheduled …)."""
    return _FUTURE_INTENT.search(line) is not None


def _calendar_day(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def expand_inline_dates(text: str, current_date: date | datetime) -> str:
    """Append the relative time to every parseable ``(meaning DATE)`` / ``(estimated DATE)``.

    ``(meaning May 30, 2023)`` becomes ``(meaning May 30, 2023 - 3 weeks ago)``. When the text of
    the line before the annotation shows future intent and the date is strictly before the
    current day, ``, likely already happened`` is added. Unparseable dates are left unchanged.
    """
    today = _calendar_day(current_date)

    def annotate(match: re.Match[str]) -> str:
        target = parse_date_from_content(match.group(2))
        if target is None:
            return match.group(0)
        days = (today - target).days
        relative = format_relative_days(days)
        line_start = text.rfind("\n", 0, match.start()) + 1
        if days > 0 and is_future_intent(text[line_start : match.start()]):
            relative += ", likely already happened"
        return f"({match.group(1)} {match.group(2)} - {relative})"

    return _INLINE_DATE.sub(annotate, text)


def _follows_gap_line(text: str, position: int) -> bool:
    end = position
    while end > 0 and text[end - 1].isspace():
        end -= 1
    start = text.rfind("\n", 0, end) + 1
    return _GAP_LINE.fullmatch(text[start:end].strip()) is not None


def add_relative_time(text: str, current_date: date | datetime) -> str:
    """Annotate the log with times relative to *current_date* (om-reference §4.6).

    * inline ``(meaning|estimated DATE)`` annotations get `` - <relative>`` (see
      ``expand_inline_dates``);
    * each ``Date: Mon D, YYYY`` header line becomes ``Date: Mon D, YYYY (<relative>)``;
    * between consecutive headers more than one day apart, a gap line such as
      ``[2 weeks later]`` is inserted (preceded by a newline and followed by a blank line).

    Apply it after ``optimize_for_context`` (which would delete bracketed gap lines). Already
    annotated text is recognised, so a second application changes nothing.
    """
    expanded = expand_inline_dates(text, current_date)
    today = _calendar_day(current_date)
    pieces: list[str] = []
    last_end = 0
    previous: date | None = None
    for match in _HEADER.finditer(expanded):
        span = _header_span(match.group(2))
        if span is None:
            continue
        header_date, header_end = span
        before = expanded[last_end : match.start()]
        pieces.append(_annotate_line_dates(before, today))
        gap = format_gap((header_date - previous).days) if previous else None
        if gap and not _follows_gap_line(expanded, match.start()):
            pieces.append(f"\n{gap}\n\n")
        if match.group(3):
            pieces.append(match.group(0))
        else:
            pieces.append(f"{match.group(1)}{match.group(2)} ({format_relative_days((today - header_date).days)})")
        last_end = match.end()
        previous = header_end
    pieces.append(_annotate_line_dates(expanded[last_end:], today))
    return "".join(pieces)


def _header_span(text: str) -> tuple[date, date] | None:
    """First and last day of a ``Date:`` header: one day, or a range ("Aug 13–27, 2024")."""
    start = parse_date_from_content(text)
    if start is None:
        return None
    pieces = re.split(r"\s*[-–—]\s*", text, maxsplit=1)
    if len(pieces) == 1:
        return start, start
    tail = pieces[1]
    end = parse_date_from_content(tail) if re.search(r"[A-Z][a-z]+", tail) else None
    if end is None:
        day = re.match(r"([0-9]{1,2})", tail)
        end = date(start.year, start.month, int(day.group(1))) if day and int(day.group(1)) >= start.day else None
    if end is None or end < start:
        return start, start
    return start, end


def _annotate_line_dates(text: str, today: date) -> str:
    """Dates written inside observation lines ("flight on Aug 13, 2024", "started 2024-01-10",
    "moved in Apr 2020", "paid $500 in 2024") get the relative time after them, as ``Date:``
    headers do; dates inside the inline ``(meaning …)`` / ``(estimated …)`` annotations, header
    lines and already annotated dates are left alone. A bare year more than ten years ahead is
    taken for a number, not a date."""
    if not (_LINE_DATE.search(text) or _LINE_LOOSE_DATE.search(text)):
        return text
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.lstrip().startswith("Date:"):
            continue
        found = [(m.start(), m.end(), m.group(0)) for m in _LINE_DATE.finditer(line)]
        for match in _LINE_LOOSE_DATE.finditer(line):
            start = match.start(1) if match.group(1) else match.start()
            found.append((start, match.end(), match.group(1) or match.group(0)))
        if not found:
            continue
        shielded = [m.span() for m in _PARENTHESISED.finditer(line)]
        out, position = [], 0
        for start, end, content in sorted(found):
            if start < position or any(low <= start < high for low, high in shielded):
                continue
            if _ALREADY_RELATIVE.match(line, end):
                continue
            target = parse_date_from_content(content)
            if target is None or target.year > today.year + _FUTURE_YEARS:
                continue
            out.append(line[position:end])
            out.append(f" ({format_relative_days((today - target).days)})")
            position = end
        out.append(line[position:])
        lines[index] = "".join(out)
    return "\n".join(lines)

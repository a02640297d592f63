"""Resolve relative date phrases ("yesterday", "last week", "in 3 days") against a message date.

The offline observer appends ``(meaning <DATE>)`` to an observation when its text contains one of
the phrases below; vague words ("recently", "soon", "a while ago") are never resolved, because
they name no real date. Conventions (weeks run Monday to Sunday, as in ISO 8601):

=========================  ==============================================================
phrase                     resolves to (message date D)
=========================  ==============================================================
today / tonight / this     D
morning|afternoon|evening
yesterday                  D - 1 day; "the day before yesterday" D - 2
tomorrow                   D + 1 day; "the day after tomorrow" D + 2
last / this / next week    the Monday-Sunday week before / containing / after D
last / this / next month   the calendar month before / containing / after D
last / this / next year    the calendar year before / containing / after D
last <weekday>             the most recent such weekday strictly before D (1-7 days back)
this <weekday>             that weekday inside D's Monday-Sunday week (may be past)
next <weekday>             the first such weekday strictly after D (1-7 days ahead)
last / this / next         Saturday-Sunday of the week before / containing / after D's week
weekend
in N days|weeks            D + N days | D + 7N days (N = digits, "a", "an", one..twenty)
N days|weeks ago           D - N days | D - 7N days
in N months|years,         the calendar month | year N away
N months|years ago
=========================  ==============================================================

A hedge right before the phrase ("about two years ago", "around next week") marks the result as
approximate, rendered ``(estimated …)`` instead of ``(meaning …)``.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import date, timedelta

MONTH_ABBREVIATIONS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
"""English month abbreviations, fixed so that output never depends on the process locale."""
_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
    "November", "December",
)  # fmt: skip
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
}  # fmt: skip
_COUNT = r"(?P<count>\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
_UNIT = r"(?P<unit>days?|weeks?|months?|years?)"

# Longer alternatives come first so "the day before yesterday" wins over "yesterday".
_PHRASE_RE = re.compile(
    r"\b(?:"
    r"(?P<day_before>the day before yesterday)"
    r"|(?P<day_after>the day after tomorrow)"
    r"|(?P<today>today|tonight|this (?:morning|afternoon|evening))"
    r"|(?P<yesterday>yesterday)"
    r"|(?P<tomorrow>tomorrow)"
    r"|(?P<rel>last|this|next) (?P<span>week|month|year|weekend|" + "|".join(_WEEKDAYS) + r")"
    r"|in "
    + _COUNT
    + " "
    + _UNIT
    + r"|"
    + _COUNT.replace("count", "ago_count")
    + " "
    + _UNIT.replace("unit", "ago_unit")
    + r" ago"
    r")\b",
    re.IGNORECASE,
)

_HEDGE_RE = re.compile(
    r"\b(?:about|around|roughly|almost|nearly|approximately|over|more than|less than|some)\s+$", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class ResolvedDate:
    """A relative phrase found in a text and the real date (or span) it refers to."""

    phrase: str
    """The phrase as written, e.g. ``"last week"``."""
    start: date
    end: date
    """Equal to ``start`` for a single day."""
    granularity: str
    """``"day"`` (start..end days), ``"month"`` or ``"year"``."""
    approximate: bool = False
    """True after a hedge such as "about" or "around" ("about two weeks ago")."""

    def render(self) -> str:
        """``Dec 3, 2025``, ``Nov 24-30, 2025``, ``November 2025`` or ``2025``."""
        if self.granularity == "year":
            return str(self.start.year)
        if self.granularity == "month":
            return f"{_MONTH_NAMES[self.start.month - 1]} {self.start.year}"
        return format_day_range(self.start, self.end)


def format_day(day: date) -> str:
    """``Dec 3, 2025`` (the observation log's date style)."""
    return f"{MONTH_ABBREVIATIONS[day.month - 1]} {day.day}, {day.year}"


def format_day_range(start: date, end: date) -> str:
    """A compact day range: ``Nov 24-30, 2025``, ``Nov 28-Dec 4, 2025``, ``Dec 29, 2025-Jan 4, 2026``."""
    if start == end:
        return format_day(start)
    if start.year != end.year:
        return f"{format_day(start)}-{format_day(end)}"
    if start.month != end.month:
        return f"{MONTH_ABBREVIATIONS[start.month - 1]} {start.day}-{format_day(end)}"
    return f"{MONTH_ABBREVIATIONS[start.month - 1]} {start.day}-{end.day}, {start.year}"


def has_date_phrase(text: str) -> bool:
    """True when ``text`` contains a phrase this module can resolve."""
    return _PHRASE_RE.search(text) is not None


def find_date_phrases(text: str, on: date) -> list[ResolvedDate]:
    """Every resolvable phrase in ``text``, in order of appearance, resolved against ``on``."""
    resolved = []
    for match in _PHRASE_RE.finditer(text):
        try:
            found = _resolve(match, on)
        except (ValueError, OverflowError):  # outside the calendar datetime can represent
            continue
        if _HEDGE_RE.search(text, max(0, match.start() - 20), match.start()):
            found = replace(found, approximate=True)
        resolved.append(found)
    return resolved


def meaning_suffix(text: str, on: date, *, limit: int = 3) -> str:
    """The ``" (meaning …)"`` annotation for ``text`` written on ``on``, or ``""`` if none applies.

    One distinct date gives ``" (meaning Dec 3, 2025)"``; several give
    ``' (meaning "yesterday" = Dec 3, 2025; "next Friday" = Dec 5, 2025)'`` (at most ``limit``).
    When every phrase is hedged ("about two years ago") the word is ``estimated`` instead.
    """
    seen: dict[str, ResolvedDate] = {}
    for resolved in find_date_phrases(text, on):
        seen.setdefault(resolved.phrase.lower(), resolved)
    if not seen:
        return ""
    word = "estimated" if all(r.approximate for r in seen.values()) else "meaning"
    distinct = {r.render(): r for r in seen.values()}
    if len(distinct) == 1:
        return f" ({word} {next(iter(distinct))})"
    parts = [f'"{r.phrase}" = {r.render()}' for r in list(seen.values())[:limit]]
    return f" ({word} {'; '.join(parts)})"


def _resolve(match: re.Match[str], on: date) -> ResolvedDate:
    phrase = match.group(0)
    groups = match.groupdict()
    if groups["day_before"]:
        return _day(phrase, on - timedelta(days=2))
    if groups["day_after"]:
        return _day(phrase, on + timedelta(days=2))
    if groups["today"]:
        return _day(phrase, on)
    if groups["yesterday"]:
        return _day(phrase, on - timedelta(days=1))
    if groups["tomorrow"]:
        return _day(phrase, on + timedelta(days=1))
    if groups["rel"]:
        return _resolve_relative(phrase, groups["rel"].lower(), groups["span"].lower(), on)
    if groups["count"]:
        return _shift(phrase, on, _count(groups["count"]), groups["unit"].lower())
    return _shift(phrase, on, -_count(groups["ago_count"]), groups["ago_unit"].lower())


def _resolve_relative(phrase: str, rel: str, span: str, on: date) -> ResolvedDate:
    step = {"last": -1, "this": 0, "next": 1}[rel]
    week_start = on - timedelta(days=on.weekday())
    if span == "week":
        start = week_start + timedelta(weeks=step)
        return ResolvedDate(phrase, start, start + timedelta(days=6), "day")
    if span == "weekend":
        saturday = week_start + timedelta(weeks=step, days=5)
        return ResolvedDate(phrase, saturday, saturday + timedelta(days=1), "day")
    if span == "month":
        return _month(phrase, on, step)
    if span == "year":
        return _year(phrase, on.year + step)
    target = _WEEKDAYS.index(span)
    if rel == "this":
        return _day(phrase, week_start + timedelta(days=target))
    if rel == "last":
        back = (on.weekday() - target) % 7 or 7
        return _day(phrase, on - timedelta(days=back))
    ahead = (target - on.weekday()) % 7 or 7
    return _day(phrase, on + timedelta(days=ahead))


def _shift(phrase: str, on: date, count: int, unit: str) -> ResolvedDate:
    if unit.startswith("day"):
        return _day(phrase, on + timedelta(days=count))
    if unit.startswith("week"):
        return _day(phrase, on + timedelta(weeks=count))
    if unit.startswith("month"):
        return _month(phrase, on, count)
    return _year(phrase, on.year + count)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()]


def _day(phrase: str, day: date) -> ResolvedDate:
    return ResolvedDate(phrase, day, day, "day")


def _month(phrase: str, on: date, offset: int) -> ResolvedDate:
    index = on.year * 12 + (on.month - 1) + offset
    first = date(index // 12, index % 12 + 1, 1)
    last = first.replace(day=calendar.monthrange(first.year, first.month)[1])
    return ResolvedDate(phrase, first, last, "month")


def _year(phrase: str, year: int) -> ResolvedDate:
    return ResolvedDate(phrase, date(year, 1, 1), date(year, 12, 31), "year")

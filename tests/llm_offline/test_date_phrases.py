"""Relative date phrases resolved against a message date (hand-computed; Dec 4 2025 is a Thursday)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omlab.llm.offline.date_phrases import (
    find_date_phrases,
    format_day_range,
    has_date_phrase,
    meaning_suffix,
)

THURSDAY = date(2025, 12, 4)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I saw it today", "Dec 4, 2025"),
        ("we met tonight", "Dec 4, 2025"),
        ("yesterday I ran", "Dec 3, 2025"),
        ("the day before yesterday", "Dec 2, 2025"),
        ("Tomorrow is fine", "Dec 5, 2025"),
        ("the day after tomorrow", "Dec 6, 2025"),
        ("I moved last week", "Nov 24-30, 2025"),
        ("busy this week", "Dec 1-7, 2025"),
        ("next week works", "Dec 8-14, 2025"),
        ("last month", "November 2025"),
        ("next month", "January 2026"),
        ("this month", "December 2025"),
        ("last year", "2024"),
        ("next year", "2026"),
        ("last Friday", "Nov 28, 2025"),
        ("next Friday", "Dec 5, 2025"),
        ("last Thursday", "Nov 27, 2025"),
        ("next Thursday", "Dec 11, 2025"),
        ("this Monday", "Dec 1, 2025"),
        ("this Sunday", "Dec 7, 2025"),
        ("last Monday", "Dec 1, 2025"),
        ("this weekend", "Dec 6-7, 2025"),
        ("last weekend", "Nov 29-30, 2025"),
        ("next weekend", "Dec 13-14, 2025"),
        ("in 3 days", "Dec 7, 2025"),
        ("in a week", "Dec 11, 2025"),
        ("in two weeks", "Dec 18, 2025"),
        ("10 days ago", "Nov 24, 2025"),
        ("a week ago", "Nov 27, 2025"),
        ("three weeks ago", "Nov 13, 2025"),
        ("2 months ago", "October 2025"),
        ("in 1 month", "January 2026"),
        ("5 years ago", "2020"),
    ],
)
def test_resolution_table(text: str, expected: str) -> None:
    (found,) = find_date_phrases(text, THURSDAY)
    assert found.render() == expected
    assert meaning_suffix(text, THURSDAY) == f" (meaning {expected})"


@pytest.mark.parametrize(
    ("on", "text", "expected"),
    [
        (date(2025, 12, 29), "next week", "Jan 5-11, 2026"),
        (date(2025, 12, 31), "this week", "Dec 29, 2025-Jan 4, 2026"),
        (date(2025, 10, 30), "this week", "Oct 27-Nov 2, 2025"),
        (date(2025, 1, 15), "last month", "December 2024"),
        (date(2024, 3, 1), "yesterday", "Feb 29, 2024"),
        (date(2025, 12, 7), "this weekend", "Dec 6-7, 2025"),  # a Sunday
        (date(2025, 12, 7), "last Sunday", "Nov 30, 2025"),
    ],
)
def test_ranges_across_months_and_years(on: date, text: str, expected: str) -> None:
    assert meaning_suffix(text, on) == f" (meaning {expected})"


@pytest.mark.parametrize(
    "text",
    [
        "I went there recently",
        "see you soon",
        "lately I've been tired",
        "a few days ago",
        "the other day",
        "a while back",
        "someday I will",
        "our weekly meeting",
        "yesterdays news is old",
        "on Friday",
    ],
)
def test_vague_words_are_never_resolved(text: str) -> None:
    assert not has_date_phrase(text)
    assert meaning_suffix(text, THURSDAY) == ""


def test_several_phrases_are_named() -> None:
    suffix = meaning_suffix("yesterday I booked it for next Friday", THURSDAY)
    assert suffix == ' (meaning "yesterday" = Dec 3, 2025; "next Friday" = Dec 5, 2025)'


def test_the_same_phrase_twice_is_one_date() -> None:
    assert meaning_suffix("today, yes today", THURSDAY) == " (meaning Dec 4, 2025)"


def test_hedged_phrase_is_an_estimate() -> None:
    assert meaning_suffix("I moved about two years ago", THURSDAY) == " (estimated 2023)"


def test_format_day_range_same_day() -> None:
    assert format_day_range(THURSDAY, THURSDAY) == "Dec 4, 2025"


days = st.dates(min_value=date(1900, 1, 8), max_value=date(2200, 12, 24))
weekdays = st.sampled_from(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])


@given(on=days)
def test_day_offsets(on: date) -> None:
    assert find_date_phrases("yesterday", on)[0].start == on - timedelta(days=1)
    assert find_date_phrases("tomorrow", on)[0].start == on + timedelta(days=1)
    week = find_date_phrases("last week", on)[0]
    assert week.start.weekday() == 0 and week.end - week.start == timedelta(days=6)
    assert week.end < on - timedelta(days=on.weekday()) <= week.end + timedelta(days=1)


@given(on=days, weekday=weekdays)
def test_last_and_next_weekday(on: date, weekday: str) -> None:
    last = find_date_phrases(f"last {weekday}", on)[0].start
    upcoming = find_date_phrases(f"next {weekday}", on)[0].start
    assert last.strftime("%A").lower() == weekday == upcoming.strftime("%A").lower()
    assert on - timedelta(days=7) <= last < on < upcoming <= on + timedelta(days=7)

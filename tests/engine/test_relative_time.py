"""Relative-time annotations: wording at every cut-off, gap lines, inline dates, idempotence."""

from __future__ import annotations

import itertools
from datetime import date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.engine.relative_time import (
    add_relative_time,
    expand_inline_dates,
    format_gap,
    format_relative_days,
    is_future_intent,
    parse_date_from_content,
)

NOW = datetime(2023, 6, 20, 14, 30)


@pytest.mark.parametrize(
    ("days", "wording"),
    [
        (0, "today"),
        (1, "yesterday"),
        (2, "2 days ago"),
        (6, "6 days ago"),
        (7, "1 week ago"),
        (13, "1 week ago"),
        (14, "2 weeks ago"),
        (20, "2 weeks ago"),
        (21, "3 weeks ago"),
        (29, "4 weeks ago"),
        (30, "1 month ago"),
        (59, "1 month ago"),
        (60, "2 months ago"),
        (89, "2 months ago"),
        (90, "3 months ago"),
        (364, "12 months ago"),
        (365, "1 year ago"),
        (729, "1 year ago"),
        (730, "2 years ago"),
        (-1, "tomorrow"),
        (-2, "in 2 days"),
        (-6, "in 6 days"),
        (-7, "in 1 week"),
        (-13, "in 1 week"),
        (-14, "in 2 weeks"),
        (-29, "in 4 weeks"),
        (-30, "in 1 month"),
        (-59, "in 1 month"),
        (-60, "in 2 months"),
        (-364, "in 12 months"),
        (-365, "in 1 year"),
        (-730, "in 2 years"),
    ],
)
def test_format_relative_days_cutoffs(days: int, wording: str) -> None:
    assert format_relative_days(days) == wording


@pytest.mark.parametrize(
    ("days", "gap"),
    [
        (-3, None),
        (0, None),
        (1, None),
        (2, "[2 days later]"),
        (6, "[6 days later]"),
        (7, "[1 week later]"),
        (13, "[1 week later]"),
        (14, "[2 weeks later]"),
        (29, "[4 weeks later]"),
        (30, "[1 month later]"),
        (59, "[1 month later]"),
        (60, "[2 months later]"),
        (400, "[13 months later]"),
    ],
)
def test_format_gap_cutoffs(days: int, gap: str | None) -> None:
    assert format_gap(days) == gap


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("May 30, 2023", date(2023, 5, 30)),
        ("May 30 2023", date(2023, 5, 30)),
        ("Saturday, May 30, 2023", date(2023, 5, 30)),
        ("Sept 3, 2023", date(2023, 9, 3)),
        ("Jan 3, 2023", date(2023, 1, 3)),
        ("May 27-28, 2023", date(2023, 5, 27)),
        ("the weekend of June 17–18, 2023", date(2023, 6, 17)),
        ("late April 2023", date(2023, 4, 23)),
        ("early April 2023", date(2023, 4, 7)),
        ("mid April 2023", date(2023, 4, 15)),
        ("mid-to-late May 2023", date(2023, 5, 15)),
        ("Late april 2023", date(2023, 4, 23)),
        ("April to May 2023", date(2023, 4, 1)),  # a range means its start
        ("late April to early May 2023", date(2023, 4, 23)),
        ("June 17-18, 20XX", None),
        ("May 2023", date(2023, 5, 1)),
        ("Feb 30, 2023", None),
        ("Foo 3, 2023", None),
        ("sometime in 2023", date(2023, 1, 1)),
        ("late 2023", date(2023, 10, 1)),
        ("2023", date(2023, 1, 1)),
        ("Aug 13–27, 2024", date(2024, 8, 13)),
        ("Aug 28 – Sep 3, 2024", date(2024, 8, 28)),
        ("Mar 22, 2025 at 18:08", date(2025, 3, 22)),
        ("nothing 2023", None),
    ],
)
def test_parse_date_from_content(content: str, expected: date | None) -> None:
    assert parse_date_from_content(content) == expected


@pytest.mark.parametrize(
    ("line", "intent"),
    [
        ("* 🔴 (09:15) User will visit their parents", True),
        ("User plans to buy a bike", True),
        ("User is planning to move", True),
        ("User is going to Rome", True),
        ("User wants to learn piano", True),
        ("User needs to renew passport", True),
        ("User is about to leave", True),
        ("User is looking forward to the concert", True),
        ("User intends to apply", True),
        ("Dentist appointment scheduled", True),
        ("User visited their parents", False),
        ("User bought a willow tree", False),
    ],
)
def test_is_future_intent(line: str, intent: bool) -> None:
    assert is_future_intent(line) is intent


def test_inline_dates_get_relative_time_and_intent_hint() -> None:
    text = (
        "* 🔴 (09:15) User will visit their parents this weekend. (meaning May 30, 2023)\n"
        "* 🟡 (09:20) User was given a gift last month. (estimated late May 2023)\n"
        "* 🔴 (09:25) User plans to travel. (meaning July 4, 2023)\n"
        "* 🔴 (09:30) User will call mom today. (meaning June 20, 2023)\n"
        "* 🔴 (09:35) User will go hiking. (meaning June 17-18, 20XX)\n"
        "* 🔴 (09:40) User (meaning nothing 2023)"
    )
    assert expand_inline_dates(text, NOW) == (
        "* 🔴 (09:15) User will visit their parents this weekend. "
        "(meaning May 30, 2023 - 3 weeks ago, likely already happened)\n"
        "* 🟡 (09:20) User was given a gift last month. (estimated late May 2023 - 4 weeks ago)\n"
        "* 🔴 (09:25) User plans to travel. (meaning July 4, 2023 - in 2 weeks)\n"
        "* 🔴 (09:30) User will call mom today. (meaning June 20, 2023 - today)\n"
        "* 🔴 (09:35) User will go hiking. (meaning June 17-18, 20XX)\n"
        "* 🔴 (09:40) User (meaning nothing 2023)"
    )


def test_intent_is_read_from_the_same_line_only() -> None:
    text = "* User will travel soon\n* User went out. (meaning June 1, 2023)"
    assert (
        expand_inline_dates(text, NOW)
        == "* User will travel soon\n* User went out. (meaning June 1, 2023 - 2 weeks ago)"
    )


def test_headers_get_relative_time_and_gap_lines() -> None:
    text = (
        "Date: May 1, 2023\n* 🔴 (10:00) a\n\n"
        "Date: May 2, 2023\n* 🔴 (10:00) b\n\n"
        "Date: May 9, 2023\n* 🔴 (10:00) c\n\n"
        "Date: Jun 20, 2023\n* 🔴 (10:00) d"
    )
    assert add_relative_time(text, NOW) == (
        "Date: May 1, 2023 (1 month ago)\n* 🔴 (10:00) a\n\n"
        "Date: May 2, 2023 (1 month ago)\n* 🔴 (10:00) b\n\n"
        "\n[1 week later]\n\n"
        "Date: May 9, 2023 (1 month ago)\n* 🔴 (10:00) c\n\n"
        "\n[1 month later]\n\n"
        "Date: Jun 20, 2023 (today)\n* 🔴 (10:00) d"
    )


@pytest.mark.parametrize(
    ("second", "gap"),
    [
        ("Jan 2, 2023", None),
        ("Jan 3, 2023", "[2 days later]"),
        ("Jan 15, 2023", "[2 weeks later]"),
        ("Mar 2, 2023", "[2 months later]"),
    ],
)
def test_gap_between_two_headers(second: str, gap: str | None) -> None:
    text = f"Date: Jan 1, 2023\n* a\nDate: {second}\n* b"
    out = add_relative_time(text, datetime(2023, 3, 2))
    expected_gap = f"\n{gap}\n\n" if gap else ""
    first_rel = "2 months ago"
    second_rel = format_relative_days((date(2023, 3, 2) - parse_date_from_content(second)).days)
    assert out == f"Date: Jan 1, 2023 ({first_rel})\n* a\n{expected_gap}Date: {second} ({second_rel})\n* b"


def test_headers_going_backwards_get_no_gap_and_odd_headers_are_ignored() -> None:
    text = "Date: Mar 10, 2023\nDate: Mar 1, 2023\n  Date: Mar 1, 2023\nDate: Foo 1, 2023\nDate: March 1, 2023 extra"
    out = add_relative_time(text, date(2023, 3, 10))
    assert out == (
        "Date: Mar 10, 2023 (today)\nDate: Mar 1, 2023 (1 week ago)\n"
        "  Date: Mar 1, 2023\nDate: Foo 1, 2023\nDate: March 1, 2023 extra"
    )


def test_future_header_and_full_month_names() -> None:
    out = add_relative_time("Date: July 4, 2023\n* plan", NOW)
    assert out == "Date: July 4, 2023 (in 2 weeks)\n* plan"


def test_inside_thread_sections() -> None:
    text = '<thread id="a">\nDate: Jun 1, 2023\n* x\n</thread>\n\n<thread id="b">\nDate: Jun 10, 2023\n* y\n</thread>'
    assert add_relative_time(text, NOW) == (
        '<thread id="a">\nDate: Jun 1, 2023 (2 weeks ago)\n* x\n</thread>\n\n'
        '<thread id="b">\n\n[1 week later]\n\nDate: Jun 10, 2023 (1 week ago)\n* y\n</thread>'
    )


def test_no_headers_only_inline() -> None:
    assert add_relative_time("* plain", NOW) == "* plain"
    assert add_relative_time("", NOW) == ""


def test_applying_twice_changes_nothing() -> None:
    text = (
        "Date: May 1, 2023\n* 🔴 (10:00) User will fly. (meaning May 3, 2023)\n\n"
        "Date: May 20, 2023\n* 🟡 (11:00) x (estimated mid May 2023)\n\n"
        "Date: Jun 19, 2023\n* y"
    )
    once = add_relative_time(text, NOW)
    assert "[2 weeks later]" in once and "(meaning May 3, 2023 - 1 month ago, likely already happened)" in once
    assert add_relative_time(once, NOW) == once
    assert add_relative_time(once, NOW + timedelta(days=40)) == once


_dates = st.dates(min_value=date(2020, 1, 1), max_value=date(2026, 12, 31))


@settings(max_examples=60, deadline=None)
@given(st.lists(_dates, min_size=1, max_size=6), _dates)
def test_idempotent_and_one_annotation_per_header(headers: list[date], today: date) -> None:
    text = "\n\n".join(f"Date: {d.strftime('%b')} {d.day}, {d.year}\n* 🔴 (10:00) obs" for d in headers)
    once = add_relative_time(text, today)
    assert add_relative_time(once, today) == once
    assert once.count("Date: ") == len(headers)
    assert once.count(" (") == len(headers) * 2  # one "(HH:MM)" and one annotation per group
    gaps = sum(1 for a, b in itertools.pairwise(headers) if (b - a).days > 1)
    assert once.count(" later]") == gaps


# --- the date forms of issue 20 item 9 (1.31.0 annotates none of them; omlab's extension does) ---

_TODAY_2026 = date(2026, 6, 1)


@pytest.mark.parametrize(
    ("line", "annotated"),
    [
        ("User started the job (meaning 2024-01-10)", "User started the job (meaning 2024-01-10 - 2 years ago)"),
        (
            "User studied there (estimated approx. 2021–2026)",
            "User studied there (estimated approx. 2021–2026 - 5 years ago)",
        ),
        (
            "User moved (estimated approx. 2022–2023 or 2023–2024)",
            "User moved (estimated approx. 2022–2023 or 2023–2024 - 4 years ago)",
        ),
        ("User adopted a cat in Apr 2020", "User adopted a cat in Apr 2020 (6 years ago)"),
        ("User traveled (Mar 1–15, 2025)", "User traveled (Mar 1–15, 2025 (1 year ago))"),
        (
            "User bought a car (estimated approx. late 2023)",
            "User bought a car (estimated approx. late 2023 - 2 years ago)",
        ),
        (
            "User finished the course (estimated end of 2023)",
            "User finished the course (estimated end of 2023 - 2 years ago)",
        ),
        (
            "User expects a promotion (estimated by late 2027)",
            "User expects a promotion (estimated by late 2027 - in 1 year)",
        ),
        (
            "User paid $500 in 2024; the rest is due later",
            "User paid $500 in 2024 (2 years ago); the rest is due later",
        ),
        ("User joined on 2024-01-10", "User joined on 2024-01-10 (2 years ago)"),
    ],
)
def test_more_date_forms_get_relative_time(line: str, annotated: str) -> None:
    text = f"* 🔴 (10:00) {line}"
    assert add_relative_time(text, _TODAY_2026) == f"* 🔴 (10:00) {annotated}"
    assert add_relative_time(f"* 🔴 (10:00) {annotated}", _TODAY_2026) == f"* 🔴 (10:00) {annotated}"


def test_numbers_that_look_like_far_future_years_are_left_alone() -> None:
    text = "* 🔴 (10:00) User set the context to 2048 tokens in 2048 slots"
    assert add_relative_time(text, _TODAY_2026) == text

"""Resource-scope thread sections: wrapping, merge rules, splitting, xxHash32 ids."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.engine.observation_text import format_boundary
from omlab.engine.thread_sections import (
    merge_thread_section,
    obscure_thread_id,
    split_thread_sections,
    strip_thread_tags,
    wrap_thread_section,
    xxh32,
)

T1 = datetime(2026, 5, 3, 10, 0, tzinfo=UTC)
T2 = datetime(2026, 5, 3, 11, 0, tzinfo=UTC)
BOUNDARY_T2 = "\n\n--- message boundary (2026-05-03T11:00:00.000Z) ---\n\n"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", 0x02CC5D05),
        (b"a", 0x550D7456),
        (b"abc", 0x32D153FF),
        (b"Nobody inspects the spammish repetition", 0xE2293B2F),
    ],
)
def test_xxh32_known_vectors(data: bytes, expected: int) -> None:
    assert xxh32(data) == expected


def test_obscure_thread_id_is_padded_lowercase_hex() -> None:
    assert obscure_thread_id("") == "02cc5d05"
    assert obscure_thread_id("a") == "550d7456"
    assert obscure_thread_id("answer_4be1b6b4_2") == obscure_thread_id("answer_4be1b6b4_2")
    assert obscure_thread_id("session_1") != obscure_thread_id("session_2")


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=60))
def test_obscured_ids_are_eight_hex_digits(thread_id: str) -> None:
    obscured = obscure_thread_id(thread_id)
    assert len(obscured) == 8 and int(obscured, 16) == xxh32(thread_id.encode("utf-8"))


def test_wrap_strips_stray_thread_tags_but_not_thread_title() -> None:
    obs = '<thread id="x">\n* 🔴 a\n</thread>\n<thread-title>T</thread-title>'
    assert wrap_thread_section("t1", obs) == '<thread id="t1">\n* 🔴 a\n\n<thread-title>T</thread-title>\n</thread>'
    assert strip_thread_tags('<THREAD id="y">x</thread>') == "x"


@pytest.mark.parametrize("bad", ["", 'a"b', "a<b", "a\nb"])
def test_wrap_rejects_bad_ids(bad: str) -> None:
    with pytest.raises(ValueError, match="thread id"):
        wrap_thread_section(bad, "x")


def test_merge_into_empty_text_is_the_section() -> None:
    assert merge_thread_section("", "t1", "Date: May 3, 2026\n* 🔴 (10:00) a", T1) == (
        '<thread id="t1">\nDate: May 3, 2026\n* 🔴 (10:00) a\n</thread>'
    )


def test_same_thread_same_date_is_merged_before_close() -> None:
    existing = '<thread id="t1">\nDate: May 3, 2026\n* 🔴 (10:00) a\n</thread>'
    merged = merge_thread_section(existing, "t1", "Date: May 3, 2026\n* 🔴 (10:30) b\n  * -> c", T2)
    assert merged == '<thread id="t1">\nDate: May 3, 2026\n* 🔴 (10:00) a\n* 🔴 (10:30) b\n  * -> c\n</thread>'


def test_same_thread_other_date_is_appended_after_boundary() -> None:
    existing = '<thread id="t1">\nDate: May 3, 2026\n* 🔴 (10:00) a\n</thread>'
    merged = merge_thread_section(existing, "t1", "Date: May 4, 2026\n* 🔴 (09:00) b", T2)
    assert merged == existing + BOUNDARY_T2 + '<thread id="t1">\nDate: May 4, 2026\n* 🔴 (09:00) b\n</thread>'


def test_other_thread_same_date_is_appended() -> None:
    existing = '<thread id="t1">\nDate: May 3, 2026\n* a\n</thread>'
    merged = merge_thread_section(existing, "t2", "Date: May 3, 2026\n* b", T2)
    assert merged == existing + BOUNDARY_T2 + '<thread id="t2">\nDate: May 3, 2026\n* b\n</thread>'


def test_merge_targets_the_threads_last_section_and_its_last_date() -> None:
    existing = (
        '<thread id="t1">\nDate: May 1, 2026\n* a\n</thread>'
        + format_boundary(T1)
        + '<thread id="t2">\nDate: May 3, 2026\n* other\n</thread>'
        + format_boundary(T1)
        + '<thread id="t1">\nDate: May 2, 2026\n* b\nDate: May 3, 2026\n* c\n</thread>'
    )
    merged = merge_thread_section(existing, "t1", "Date: May 3, 2026\n* d", T2)
    assert merged == existing.replace("* c\n</thread>", "* c\n* d\n</thread>")
    # May 1 is in an older t1 section and May 2 is not the last date group: both append.
    for date_line in ("Date: May 1, 2026", "Date: May 2, 2026"):
        assert merge_thread_section(existing, "t1", f"{date_line}\n* e", T2).startswith(existing + BOUNDARY_T2)


def test_date_spacing_is_normalised_and_extra_dates_travel_along() -> None:
    existing = '<thread id="t1">\nDate:  May 3,  2026\n* a\n</thread>'
    merged = merge_thread_section(existing, "t1", "Date: May 3, 2026\n* b\nDate: May 4, 2026\n* c", T2)
    assert merged == '<thread id="t1">\nDate:  May 3,  2026\n* a\n* b\nDate: May 4, 2026\n* c\n</thread>'


def test_batch_without_date_or_boundary_time_is_appended_with_blank_line() -> None:
    existing = '<thread id="t1">\nDate: May 3, 2026\n* a\n</thread>'
    assert merge_thread_section(existing, "t1", "* b", None) == existing + '\n\n<thread id="t1">\n* b\n</thread>'


def test_blank_batch_or_date_only_batch() -> None:
    existing = '<thread id="t1">\nDate: May 3, 2026\n* a\n</thread>'
    assert merge_thread_section(existing, "t1", "  \n", T2) == existing
    # A batch holding only the shared Date line adds nothing to merge, so it is appended as-is.
    only_date = merge_thread_section(existing, "t1", "Date: May 3, 2026", T2)
    assert only_date == existing + BOUNDARY_T2 + '<thread id="t1">\nDate: May 3, 2026\n</thread>'


def test_text_after_the_merged_section_is_preserved() -> None:
    existing = '<thread id="t1">\nDate: May 3, 2026\n* a\n</thread>\n\ntrailing note'
    merged = merge_thread_section(existing, "t1", "Date: May 3, 2026\n* b", T2)
    assert merged == '<thread id="t1">\nDate: May 3, 2026\n* a\n* b\n</thread>\n\ntrailing note'


def test_split_thread_sections() -> None:
    text = (
        "preface\n"
        + '<thread id="t1">\nDate: May 3, 2026\n* a\n</thread>'
        + format_boundary(T1)
        + '<thread id="t2">\n* b\n</thread>\n\n'
        + '<thread id="t3">\n* unclosed'
    )
    assert split_thread_sections(text) == [
        (None, "preface"),
        ("t1", "Date: May 3, 2026\n* a"),
        ("t2", "* b"),
        ("t3", "* unclosed"),
    ]
    assert split_thread_sections("") == []
    assert split_thread_sections("just text") == [(None, "just text")]


def test_merge_then_split_round_trip() -> None:
    text = ""
    text = merge_thread_section(text, "a", "Date: May 3, 2026\n* 1", T1)
    text = merge_thread_section(text, "b", "Date: May 3, 2026\n* 2", T1)
    text = merge_thread_section(text, "b", "Date: May 3, 2026\n* 3", T2)
    text = merge_thread_section(text, "a", "Date: May 4, 2026\n* 4", T2)
    assert split_thread_sections(text) == [
        ("a", "Date: May 3, 2026\n* 1"),
        ("b", "Date: May 3, 2026\n* 2\n* 3"),
        ("a", "Date: May 4, 2026\n* 4"),
    ]

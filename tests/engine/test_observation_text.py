"""Parsing, cleaning, sorting, context optimisation and boundaries of the observation log."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.engine.observation_text import (
    ObserverOutput,
    append_with_boundary,
    chunks_with_boundary_times,
    format_boundary,
    observation_lines,
    optimize_for_context,
    parse_multi_thread_output,
    parse_observer_output,
    sanitize_observation_lines,
    sort_observations_by_time,
    split_at_boundaries,
    strip_observation_group_tags,
)

WELL_FORMED = """Here is my analysis.
<observations>
Date: Dec 4, 2025
* 🔴 (14:30) User stated has two kids
* 🟡 (14:33) Agent debugging auth issue
  * -> ran git status, found 3 modified files
</observations>

<current-task>
Primary: fix the auth bug
Secondary: none
</current-task>

<suggested-response>
Ask whether the tests pass now.
</suggested-response>
<thread-title>Auth bug fix</thread-title>
"""


# --- parse_observer_output ----------------------------------------------------------------


def test_well_formed_output_is_fully_parsed() -> None:
    out = parse_observer_output(WELL_FORMED)
    assert out == ObserverOutput(
        observations=(
            "Date: Dec 4, 2025\n"
            "* 🔴 (14:30) User stated has two kids\n"
            "* 🟡 (14:33) Agent debugging auth issue\n"
            "  * -> ran git status, found 3 modified files"
        ),
        current_task="Primary: fix the auth bug\nSecondary: none",
        suggested_response="Ask whether the tests pass now.",
        thread_title="Auth bug fix",
        extracted={},
        degenerate=False,
        raw=WELL_FORMED,
    )


def test_several_observation_blocks_are_joined_with_newline() -> None:
    text = "<observations>\n* 🔴 (10:00) A\n</observations>\nnoise\n<observations>\n* 🔴 (11:00) B\n</observations>"
    assert parse_observer_output(text).observations == "* 🔴 (10:00) A\n* 🔴 (11:00) B"


def test_observations_tag_mid_line_is_not_a_block() -> None:
    text = "User discussed <observations> tags </observations> today\n- 🔴 (10:00) User likes XML\n"
    out = parse_observer_output(text)
    assert out.observations == "- 🔴 (10:00) User likes XML"


def test_closing_tag_at_end_of_last_line_is_accepted() -> None:
    text = "<observations>\n* 🔴 (10:00) User owns a cat</observations>\n"
    assert parse_observer_output(text).observations == "* 🔴 (10:00) User owns a cat"


def test_unclosed_observations_block_runs_to_next_section() -> None:
    text = (
        "<observations>\n* 🔴 (10:00) User owns a cat\n* 🟡 (10:05) Agent noted it\n"
        "<current-task>\n- Primary: x\n</current-task>"
    )
    out = parse_observer_output(text)
    assert out.observations == "* 🔴 (10:00) User owns a cat\n* 🟡 (10:05) Agent noted it"
    assert out.current_task == "- Primary: x"


def test_no_observations_tag_falls_back_to_list_items() -> None:
    text = (
        "Sure! Here you go:\n- 🔴 (10:00) User lives in Lyon\n  * -> nested detail\n"
        "1. 🟡 (10:05) Numbered item\nplain prose line\n*not a list item\n"
        "<current-task>\n- Primary: answer the question\n</current-task>"
    )
    out = parse_observer_output(text)
    assert out.observations == ("- 🔴 (10:00) User lives in Lyon\n  * -> nested detail\n1. 🟡 (10:05) Numbered item")
    assert out.current_task == "- Primary: answer the question"


@pytest.mark.parametrize("text", ["", "   \n\n", "I have nothing to add."])
def test_empty_or_prose_output_gives_empty_result(text: str) -> None:
    out = parse_observer_output(text)
    assert (out.observations, out.current_task, out.suggested_response, out.thread_title) == (
        "",
        None,
        None,
        None,
    )
    assert out.degenerate is False and out.raw == text


def test_hint_tags_mid_line_are_ignored_and_empty_hints_are_none() -> None:
    text = (
        "<observations>\n* 🔴 (10:00) A\n</observations>\n"
        "We mention <current-task>inline</current-task> here\n"
        "<suggested-response>\n   \n</suggested-response>"
    )
    out = parse_observer_output(text)
    assert out.current_task is None
    assert out.suggested_response is None


def test_first_current_task_wins() -> None:
    text = "<current-task>\nfirst\n</current-task>\n<current-task>\nsecond\n</current-task>"
    assert parse_observer_output(text).current_task == "first"


def test_inline_extractor_sections_are_collected_and_stripped() -> None:
    text = (
        "<observations>\n* 🔴 (10:00) User likes tea\n</observations>\n"
        "<user-mood>\ncalm\n</user-mood>\n"
        "<current-task>\nkeep chatting\n</current-task>"
    )
    out = parse_observer_output(text, inline_slugs=["user-mood", "absent"])
    assert out.extracted == {"user-mood": "calm"}
    assert out.observations == "* 🔴 (10:00) User likes tea"


def test_extractor_section_inside_fallback_is_not_an_observation() -> None:
    text = "- 🔴 (10:00) User likes tea\n<todo-list>\n- buy milk\n</todo-list>"
    out = parse_observer_output(text, inline_slugs=["todo-list"])
    assert out.observations == "- 🔴 (10:00) User likes tea"
    assert out.extracted == {"todo-list": "- buy milk"}


def test_built_in_slug_as_inline_extractor_feeds_the_hint() -> None:
    text = "<observations>\n* a\n</observations>\n<current-task>\ntask via extractor\n</current-task>"
    out = parse_observer_output(text, inline_slugs=["current-task"])
    assert out.current_task == "task via extractor"
    assert out.extracted == {"current-task": "task via extractor"}


def test_bad_slug_is_rejected() -> None:
    with pytest.raises(ValueError, match="kebab-case"):
        parse_observer_output("x", inline_slugs=["Bad Slug"])


def test_degenerate_output_is_flagged_and_not_parsed() -> None:
    line = "* 🟡 (10:00) Agent checked the same file again for the same reason"
    text = "<observations>\n" + "\n".join([line] * 200) + "\n</observations>\n<current-task>\nx\n</current-task>"
    out = parse_observer_output(text)
    assert out.degenerate is True
    assert (out.observations, out.current_task) == ("", None)
    assert out.raw == text


def test_giant_single_line_is_truncated_not_degenerate() -> None:
    # a line that does not loop (a line of one repeated character would be a loop: degenerate)
    text = "<observations>\n* 🔴 (10:00) " + " ".join(f"item{i}" for i in range(4_000)) + "\n</observations>"
    out = parse_observer_output(text)
    assert not out.degenerate
    assert out.observations.endswith(" … [truncated]")
    assert len(out.observations) == 10_000 + len(" … [truncated]")


def test_parsed_observations_are_sorted_by_time() -> None:
    text = "<observations>\nDate: Jan 1, 2026\n* 🔴 (10:30) later\n* 🔴 (09:15) earlier\n</observations>"
    assert parse_observer_output(text).observations == "Date: Jan 1, 2026\n* 🔴 (09:15) earlier\n* 🔴 (10:30) later"


# --- parse_multi_thread_output ------------------------------------------------------------


MULTI = """<observations>
<thread id="a1">
Date: Jan 1, 2026
* 🔴 (10:05) second
* 🔴 (10:01) first
<current-task>
task A
</current-task>
<suggested-response>reply A</suggested-response>
<thread-title>Title A</thread-title>
</thread>
<thread id="b2">
Date: Jan 1, 2026
* 🟡 (11:00) only B
</thread>
<thread id="c3">
</thread>
</observations>"""


def test_multi_thread_output_splits_per_thread() -> None:
    outputs = parse_multi_thread_output(MULTI)
    assert set(outputs) == {"a1", "b2"}
    a = outputs["a1"]
    assert a.observations == "Date: Jan 1, 2026\n* 🔴 (10:01) first\n* 🔴 (10:05) second"
    assert (a.current_task, a.suggested_response, a.thread_title) == ("task A", "reply A", "Title A")
    b = outputs["b2"]
    assert b.observations == "Date: Jan 1, 2026\n* 🟡 (11:00) only B"
    assert (b.current_task, b.suggested_response, b.thread_title) == (None, None, None)
    assert outputs.degenerate is False and outputs.raw == MULTI


def test_reference_mode_keeps_the_bullets_as_written() -> None:
    """``sort_lines=False`` (``compat="reference"``): the reference never reorders the bullets."""
    text = "<observations>\nDate: Jan 1, 2026\n* 🔴 (10:05) second\n* 🔴 (10:01) first\n</observations>"
    assert parse_observer_output(text).observations.endswith("(10:01) first\n* 🔴 (10:05) second")
    assert parse_observer_output(text, sort_lines=False).observations.endswith("(10:05) second\n* 🔴 (10:01) first")
    threads = '<observations>\n<thread id="a">\n' + text.split("\n", 1)[1].replace(
        "</observations>", "</thread>\n</observations>"
    )
    assert parse_multi_thread_output(threads)["a"].observations.endswith("(10:05) second")
    assert parse_multi_thread_output(threads, sort_lines=False)["a"].observations.endswith("(10:01) first")


def test_multi_thread_without_observations_wrapper_and_without_threads() -> None:
    assert list(parse_multi_thread_output('<thread id="x">\n* 🔴 (1:00) hi\n</thread>')) == ["x"]
    assert dict(parse_multi_thread_output("* 🔴 (10:00) no thread tags")) == {}


def test_multi_thread_degenerate() -> None:
    line = "* 🟡 (10:00) Agent checked the same file again for the same reason"
    text = '<observations>\n<thread id="a">\n' + "\n".join([line] * 200) + "\n</thread>\n</observations>"
    outputs = parse_multi_thread_output(text)
    assert outputs.degenerate is True and dict(outputs) == {}


# --- sanitize / sort ----------------------------------------------------------------------


def test_sanitize_cuts_only_long_lines() -> None:
    text = "short\n" + "y" * 12 + "\nok"
    assert sanitize_observation_lines(text, max_chars=10) == "short\n" + "y" * 10 + " … [truncated]\nok"
    assert sanitize_observation_lines("exactly10!", max_chars=10) == "exactly10!"
    with pytest.raises(ValueError, match="max_chars"):
        sanitize_observation_lines("x", max_chars=0)


def test_sort_moves_children_with_their_parent() -> None:
    text = (
        "Date: Jan 2, 2026\n"
        "* 🔴 (14:10) User said the fix worked\n"
        "  * ✅ confirmed\n"
        "* 🟡 (13:50) Agent patched auth.ts\n"
        "  * -> edited line 45\n"
        "\n"
        "* 🟡 (09:00) Agent started"
    )
    assert sort_observations_by_time(text) == (
        "Date: Jan 2, 2026\n"
        "* 🟡 (09:00) Agent started\n"
        "* 🟡 (13:50) Agent patched auth.ts\n"
        "  * -> edited line 45\n"
        "\n"
        "* 🔴 (14:10) User said the fix worked\n"
        "  * ✅ confirmed"
    )


def test_sort_works_per_date_group_and_keeps_preamble() -> None:
    text = "preamble line\nDate: Jan 1, 2026\n* (10:00) b\n* (09:00) a\n\nDate: Jan 2, 2026\n* (08:00) d\n* (07:00) c"
    assert sort_observations_by_time(text) == (
        "preamble line\nDate: Jan 1, 2026\n* (09:00) a\n* (10:00) b\n\nDate: Jan 2, 2026\n* (07:00) c\n* (08:00) d"
    )


def test_sort_leaves_group_with_missing_time_untouched() -> None:
    text = "Date: Jan 1, 2026\n* 🔴 (10:00) b\n* 🔴 no time here\n* 🔴 (09:00) a"
    assert sort_observations_by_time(text) == text


def test_sort_leaves_group_with_unindented_prose_untouched() -> None:
    text = "Date: Jan 1, 2026\n* (10:00) b\nloose prose\n* (09:00) a"
    assert sort_observations_by_time(text) == text


def test_sort_handles_am_pm() -> None:
    text = "Date: Jan 1, 2026\n* (2:30 PM) b\n* (11:45 a.m.) a\n* (12:05 AM) first\n* (12:10 PM) noon"
    assert sort_observations_by_time(text) == (
        "Date: Jan 1, 2026\n* (12:05 AM) first\n* (11:45 a.m.) a\n* (12:10 PM) noon\n* (2:30 PM) b"
    )


@pytest.mark.parametrize(
    "times",
    [
        ["(2:30 PM)", "(11:00)"],  # AM/PM on some only
        ["(9:15)", "(10:30)"],  # 12-hour-looking hour with another hour: ambiguous
        ["(1:35)", "(13:00)"],  # 12-hour and 24-hour readings mixed
    ],
)
def test_sort_leaves_ambiguous_times_untouched(times: list[str]) -> None:
    text = "Date: Jan 1, 2026\n" + "\n".join(f"* {t} item" for t in reversed(times))
    assert sort_observations_by_time(text) == text


def test_sort_orders_unambiguous_24h_and_single_12h_hour() -> None:
    assert sort_observations_by_time("Date: Jan 1, 2026\n- (13:35) b\n- (09:15) a") == (
        "Date: Jan 1, 2026\n- (09:15) a\n- (13:35) b"
    )
    assert sort_observations_by_time("Date: Jan 1, 2026\n- (9:40) b\n- (9:15) a") == (
        "Date: Jan 1, 2026\n- (9:15) a\n- (9:40) b"
    )


_item = st.tuples(st.integers(0, 23), st.integers(0, 59), st.lists(st.sampled_from(["x", "y"]), max_size=2))


@settings(max_examples=80, deadline=None)
@given(st.lists(_item, min_size=1, max_size=12))
def test_sort_is_a_stable_permutation_and_idempotent(items: list[tuple[int, int, list[str]]]) -> None:
    lines = ["Date: Jan 1, 2026"]
    for hour, minute, children in items:
        lines.append(f"* 🔴 ({hour:02d}:{minute:02d}) event")
        lines.extend(f"  * -> {child}" for child in children)
    text = "\n".join(lines)
    once = sort_observations_by_time(text)
    assert sorted(once.split("\n")) == sorted(text.split("\n"))
    assert sort_observations_by_time(once) == once
    times = [line[5:10] for line in once.split("\n") if line.startswith("* ")]
    assert times == sorted(times)


# --- optimize_for_context -----------------------------------------------------------------


def test_optimize_for_context() -> None:
    text = (
        "[O1] Date: Jan 1, 2026\n"
        "[O2-N1] * 🔴 (10:00) User [preference, food] likes [pizza](https://p.example)\n"
        "  [O1.2] * 🟡 (10:01) Agent ran   tests -> all green\n"
        "* 🟢 (10:02) minor [72 items collapsed - ID: b1fa]\n"
        "* ✅ (10:03) Done\n\n\n\n"
        "* 🔴 (10:04) end"
    )
    assert optimize_for_context(text) == (
        "Date: Jan 1, 2026\n"
        "* 🔴 (10:00) User likes [pizza](https://p.example)\n"
        " * (10:01) Agent ran tests all green\n"
        "* (10:02) minor [72 items collapsed - ID: b1fa]\n"
        "* ✅ (10:03) Done\n\n"
        "* 🔴 (10:04) end"
    )


def test_optimize_mid_line_anchor_is_a_tag_and_indentation_collapses() -> None:
    assert optimize_for_context("* x [O1] y") == "* x y"  # mid-line [O1] is a tag, removed as such
    assert optimize_for_context("a\n  * -> child") == "a\n * child"


# --- boundaries ---------------------------------------------------------------------------


def test_format_boundary_matches_iso_milliseconds_z() -> None:
    dt = datetime(2026, 1, 15, 12, 10, 0, tzinfo=UTC)
    assert format_boundary(dt) == "\n\n--- message boundary (2026-01-15T12:10:00.000Z) ---\n\n"
    paris = datetime(2026, 1, 15, 13, 10, 0, 123999, tzinfo=timezone(timedelta(hours=1)))
    assert format_boundary(paris) == "\n\n--- message boundary (2026-01-15T12:10:00.123Z) ---\n\n"
    assert "2026-01-15T12:10:00.000Z" in format_boundary(datetime(2026, 1, 15, 12, 10))


def test_append_and_split_round_trip() -> None:
    t1 = datetime(2026, 1, 15, 12, 10, tzinfo=UTC)
    t2 = datetime(2026, 1, 16, 9, 0, 0, 500000, tzinfo=UTC)
    text = append_with_boundary("", "chunk one", t1)
    assert text == "chunk one"
    text = append_with_boundary(text, "chunk two\nline", t1)
    text = append_with_boundary(text, "chunk three", t2)
    assert append_with_boundary(text, "", t2) == text
    assert split_at_boundaries(text) == ["chunk one", "chunk two\nline", "chunk three"]
    assert chunks_with_boundary_times(text) == [
        (None, "chunk one"),
        (t1, "chunk two\nline"),
        (t2, "chunk three"),
    ]


def test_split_ignores_inline_boundary_mentions_and_empty_chunks() -> None:
    text = "a --- message boundary (2026-01-15T12:10:00.000Z) --- b"
    assert split_at_boundaries(text) == [text]
    assert split_at_boundaries("") == []
    empty_middle = "a" + format_boundary(datetime(2026, 1, 1)) + "  " + format_boundary(datetime(2026, 1, 2)) + "b"
    assert split_at_boundaries(empty_middle) == ["a", "b"]


# --- line views ---------------------------------------------------------------------------


def test_observation_lines_skip_scaffolding() -> None:
    text = (
        '<thread id="abc">\nDate: Jan 1, 2026\n* 🔴 (10:00) a\n  * -> b\n\n</thread>'
        + format_boundary(datetime(2026, 1, 1))
        + "[3 observations truncated here]\n[2 weeks later]\n- c"
    )
    assert observation_lines(text) == ["* 🔴 (10:00) a", "  * -> b", "- c"]


def test_strip_observation_group_tags() -> None:
    text = (
        '<observation-group id="abcd" range="m1:m4">\n* 🔴 a\n</observation-group>\n\n\n\n'
        '<observation-group id="ef01" range="m5:m9" kind="reflection">\n\n* 🟡 b\n\n</observation-group>\n'
    )
    assert strip_observation_group_tags(text) == "* 🔴 a\n\n* 🟡 b"
    assert strip_observation_group_tags("") == ""
    assert strip_observation_group_tags("plain") == "plain"


# --- block finding matches the single-pattern definition ------------------------------------

_ONE_PATTERN_BLOCK = re.compile(
    r"^[ \t]*<observations>(.*?)(?:^[ \t]*</observations>|</observations>[ \t]*$)",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)
_FRAGMENTS = st.sampled_from(
    [
        "<observations>",
        "</observations>",
        "<OBSERVATIONS>",
        "</Observations>",
        "\n",
        " ",
        "\t",
        "x",
        "* 🔴 a",
        "<current-task>t</current-task>",
        "Thread-Title",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=14).map("".join))
def test_blocks_are_those_of_the_single_pattern(text: str) -> None:
    from omlab.engine.observation_text import _ANY_HINT_TAG, _first_section, _observation_blocks

    assert _observation_blocks(text) == [m.group(1) for m in _ONE_PATTERN_BLOCK.finditer(text)]
    if _ANY_HINT_TAG.search(text) is None:  # the pre-check never hides a section
        assert all(_first_section(tag, text) is None for tag in ("current-task", "suggested-response", "thread-title"))


def test_a_sort_that_moves_nothing_returns_the_text_itself():
    # a reflection parses the whole log back: when every group is already in order, no rebuild
    text = "Date: Mar 3, 2025\n* 🔴 (09:15) a\n  * child\n* 🟡 (10:30) b\n\nDate: Mar 4, 2025\n* 🔴 (1:05 PM) c"
    assert sort_observations_by_time(text) is text
    swapped = "Date: Mar 3, 2025\n* 🟡 (10:30) b\n* 🔴 (09:15) a\n  * child"
    assert sort_observations_by_time(swapped) == "Date: Mar 3, 2025\n* 🔴 (09:15) a\n  * child\n* 🟡 (10:30) b"

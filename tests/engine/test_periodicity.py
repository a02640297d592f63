"""find_loop: a periodic stretch of any period and line structure is found, nothing else is."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from omlab.engine.periodicity import MIN_LOOP_CHARS, MIN_LOOP_REPEATS, find_loop

_TEXT = st.text(alphabet=st.sampled_from("abcdefgh ijk-*.\n🔴()0123456789"), max_size=3_000)


def _is_periodic(text: str, start: int, end: int, period: int) -> bool:
    return text[start + period : end] == text[start : end - period]


@settings(max_examples=300, deadline=None)
@given(
    unit=st.text(alphabet=st.sampled_from("ab c-\n*🔴(7)x"), min_size=1, max_size=1_200),
    extra=st.integers(min_value=0, max_value=5),
    prefix=_TEXT,
    suffix=_TEXT,
)
def test_any_unit_repeated_into_a_long_stretch_is_found_wherever_it_is(unit, extra, prefix, suffix):
    copies = max(MIN_LOOP_REPEATS, -(-MIN_LOOP_CHARS // len(unit))) + extra
    text = prefix + unit * copies + suffix
    loop = find_loop(text)
    assert loop is not None
    assert _is_periodic(text, loop.start, loop.end, loop.period)
    assert loop.chars >= MIN_LOOP_CHARS and loop.repeats >= MIN_LOOP_REPEATS


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("abcdefghij klmnop\n-*"), max_size=400), max_size=40))
def test_whatever_is_reported_is_a_real_loop(pieces):
    text = "".join(pieces) * 2  # some texts with one repeat of everything, most with none
    loop = find_loop(text)
    if loop is not None:
        assert _is_periodic(text, loop.start, loop.end, loop.period)
        assert loop.chars >= MIN_LOOP_CHARS and loop.repeats >= MIN_LOOP_REPEATS


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(alphabet=st.sampled_from("abcdefghij klmnop"), min_size=20, max_size=120), min_size=1, max_size=60)
)
def test_numbered_distinct_lines_are_never_a_loop(lines):
    text = "\n".join(f"* 🟡 ({i // 60:02d}:{i % 60:02d}) item {i}: {line}" for i, line in enumerate(lines))
    assert find_loop(text) is None


@settings(max_examples=50, deadline=None)
@given(unit=st.text(alphabet="xyz\n", min_size=1, max_size=50), copies=st.integers(2, 200))
def test_a_stretch_under_the_thresholds_is_not_a_loop(unit, copies):
    assume(len(unit) * copies < MIN_LOOP_CHARS)
    text = "".join(f"line {i} of a varied preface\n" for i in range(80)) + unit * copies
    loop = find_loop(text)
    assert loop is None or loop.start >= 0 and _is_periodic(text, loop.start, loop.end, loop.period)
    assert loop is None or loop.chars >= MIN_LOOP_CHARS


def test_a_long_run_of_one_character_inside_a_long_unit_does_not_hide_the_unit():
    loop = find_loop(("a" * 600 + "b") * 5)
    assert loop is not None and loop.period == 601


def test_a_one_line_phrase_loop_is_found_with_its_period():
    unit = "and the user said that the trip to Lisbon was in May 2023, "
    text = "Answer: " + unit * 120
    loop = find_loop(text)
    assert loop is not None and loop.period == len(unit) and loop.end == len(text)


def test_a_thresholds_too_small_for_the_anchors_are_refused():
    with pytest.raises(ValueError, match="min_chars"):
        find_loop("x", min_chars=100)
    with pytest.raises(ValueError, match="min_repeats"):
        find_loop("x", min_repeats=1)

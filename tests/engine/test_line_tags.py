"""find_tag finds exactly what the multi-line, case-insensitive patterns it replaces find."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.engine.line_tags import find_tag

FLAGS = re.IGNORECASE | re.MULTILINE
TAGS = ["<observations>", "</observations>", "<suggested-response>", "</current-task>"]


def reference(text: str, tag: str, pos: int, at_line_start: bool, at_line_end: bool) -> tuple[int, int] | None:
    escaped = re.escape(tag)
    patterns = ([rf"^[ \t]*{escaped}"] if at_line_start else []) + ([rf"{escaped}[ \t]*$"] if at_line_end else [])
    match = re.compile("|".join(patterns), FLAGS).search(text, pos)
    return match.span() if match else None


# texts made of the pieces that matter: tags in any case, blanks, newlines, words
pieces = st.sampled_from(
    ["<observations>", "</observations>", "</OBSERVATIONS>", "<Observations>", "<suggested-response>"]
    + ["</current-task>", " ", "\t", "\n", "\r\n", "x", "note ", "* ", "<", ">", "/"]
)
texts = st.lists(pieces, max_size=30).map("".join)
modes = st.sampled_from([(True, False), (False, True), (True, True)])


@settings(max_examples=600, deadline=None)
@given(texts, st.sampled_from(TAGS), st.integers(0, 40), modes)
def test_find_tag_matches_the_regular_expression(text, tag, pos, mode):
    pos = min(pos, len(text))
    assert find_tag(text, tag, pos, at_line_start=mode[0], at_line_end=mode[1]) == reference(text, tag, pos, *mode)


@pytest.mark.parametrize(
    ("text", "pos", "mode", "span"),
    [
        ("a\n  </observations>\nb", 0, (True, False), (2, 19)),  # the span holds the indentation
        ("* last line</observations>  \nmore", 0, (False, True), (11, 28)),  # and the trailing blanks
        ("say </observations> here", 0, (True, True), None),  # inside a sentence: not a tag
        ("  <observations>", 1, (True, False), None),  # its line starts before pos
        ("\n<OBSERVATIONS>", 1, (True, False), (1, 15)),
    ],
)
def test_find_tag_edge_cases(text, pos, mode, span):
    tag = "<observations>" if "</" not in text else "</observations>"
    assert find_tag(text, tag, pos, at_line_start=mode[0], at_line_end=mode[1]) == span
    assert reference(text, tag, pos, *mode) == span


def test_find_tag_needs_a_position_to_look_for():
    with pytest.raises(ValueError, match="at_line_start"):
        find_tag("text", "<observations>")

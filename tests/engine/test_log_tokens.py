"""Observation-log counts memoised per ``Date:`` group equal tokenx's count of the whole text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.engine import log_tokens
from omlab.engine.log_tokens import LogTokenMemo
from omlab.engine.token_counter import TokenCounter
from omlab.tokens.tokenx import estimate_token_count

LOG = (
    "Date: Jan 8, 2024\n"
    "* 🔴 (09:00) User stated they're stuck on a merge conflict in a Rust crate.\n"
    "* 🟡 (09:01) Assistant replied: start from the common ancestor …\n"
    "Date: Jan 11, 2024\n"
    "* 🔴 (16:13) User asked: what makes The Salt Orchard stand out?\n"
    "  * ✅ (16:15) resolved: the audiobook\n"
)

TEXTS = [
    "",
    "Date:",
    "\nDate:",
    "Date:Date:",
    LOG,
    LOG + "\n\n" + LOG.replace("Jan", "Feb"),
    "preamble line\n" + LOG,
    "\n" + LOG,
    # a head whose text equals a group body ("\nX" after a header is the body of "Date:\nX")
    "\nX y z",
    "Date:\nX y z",
    "no header here\njust lines 123 4567",
    "  Date: indented is not a header\nxDate: nor this",
    "日本語のテキスト\nDate: Mar 3, 2025\n* 🔴 (10:00) naïve café",
]


@pytest.mark.parametrize("text", TEXTS)
def test_memoised_count_equals_whole_text_count(text: str) -> None:
    memo = LogTokenMemo()
    assert memo.count(text) == estimate_token_count(text)
    assert memo.count(text) == estimate_token_count(text)  # from the memo


def test_one_memo_over_many_texts_stays_exact() -> None:
    memo = LogTokenMemo()
    for text in TEXTS + TEXTS[::-1]:
        assert memo.count(text) == estimate_token_count(text), text


def test_memo_is_emptied_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(log_tokens, "MEMO_CHARS", 60)
    memo = LogTokenMemo()
    for _ in range(3):
        for text in TEXTS:
            assert memo.count(text) == estimate_token_count(text)
    assert memo._chars <= 60 or len(memo._groups) == 1


def test_token_counter_counts_logs_and_their_lines_exactly() -> None:
    counter = TokenCounter()
    assert counter.count_log(LOG) == estimate_token_count(LOG)
    assert counter.count_log(None) == 0
    assert counter.log_leading_lines(LOG, 20) == LogTokenMemo().leading_lines(LOG, 20)


def _walk(text: str, budget: float) -> tuple[int, int, int]:
    """What leading_lines must equal: count line by line until the budget is reached."""
    total = seen = 0
    lines = text.split("\n")
    for line in lines:
        total += estimate_token_count(line)
        seen += 1
        if total >= budget:
            break
    return seen, total, len("\n".join(lines[:seen]))


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("budget", [-1, 0, 1, 5, 12, 20, 31, 45, 10_000])
def test_leading_lines_equal_a_line_by_line_walk(text: str, budget: int) -> None:
    memo = LogTokenMemo()
    assert memo.leading_lines(text, budget) == _walk(text, budget)
    assert memo.leading_lines(text, budget) == _walk(text, budget)  # from the memo
    covered, tokens, chars = memo.leading_lines(text, budget)
    assert tokens == estimate_token_count(text[:chars]) and text[:chars].count("\n") == covered - 1


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(LOG.split("\n") + ["", "Date:", "x Date: y", "Date: Feb 2"]), max_size=25),
    st.integers(-2, 80),
)
def test_leading_lines_on_any_log(lines: list[str], budget: int) -> None:
    text = "\n".join(lines)
    assert LogTokenMemo().leading_lines(text, budget) == _walk(text, budget)

"""Observation-log counts memoised per ``Date:`` group equal tokenx's count of the whole text."""

from __future__ import annotations

import pytest

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
    assert all(counter.count_log_line(line) == estimate_token_count(line) for line in LOG.split("\n"))

"""The Observer's previous-observations window: reflection swap, budget edge cases, truncation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.engine import observer_window
from omlab.engine.observer_window import prepare_previous_observations, truncate_to_budget, truncation_marker


def words(text: str) -> int:
    """Stand-in token counter: one token per whitespace-separated word (additive over lines)."""
    return len(text.split())


def _reference_truncate(observations: str, budget: int, count) -> str:
    """Direct transcription of the reference's quadratic search, used as an oracle."""
    if budget == 0:
        return ""
    if count(observations) <= budget:
        return observations
    lines = observations.split("\n")
    n = len(lines)
    tok = [count(line) for line in lines]
    important = ["🔴" in line or "✅" in line for line in lines]
    head: list[int] = []

    def build(tail_start: int, selected: list[int]) -> str:
        kept = sorted(selected + list(range(tail_start, n)))
        out: list[str] = []
        prev = -1
        for index in kept:
            hidden = index - prev - 1
            if hidden == 1:
                out.append(lines[prev + 1])
            elif hidden > 1:
                out.append(f"[{hidden} observations truncated here]")
            out.append(lines[index])
            prev = index
        return "\n".join(out)

    best, best_k, best_len = None, -1, -1
    for tail_start in range(1, n):
        if important[tail_start - 1]:
            head.append(tail_start - 1)
        length = n - tail_start
        k = min(len(head), length)

        def cost(kk: int, tail_start: int = tail_start) -> int:
            chosen = head[len(head) - kk :] if kk else []
            return sum(tok[tail_start:]) + sum(tok[i] for i in chosen)

        while k > 0 and cost(k) > budget:
            k -= 1
        if cost(k) > budget:
            continue
        if k > best_k or (k == best_k and length > best_len):
            candidate = build(tail_start, head[len(head) - k :] if k else [])
            if count(candidate) <= budget:
                best, best_k, best_len = candidate, k, length
    return best if best is not None else f"[{n} observations truncated here]"


# --- prepare_previous_observations --------------------------------------------------------


def test_budget_none_returns_active_unchanged_even_with_a_buffered_reflection() -> None:
    active = "a b\nc d"
    assert prepare_previous_observations(
        active, budget=None, buffered_reflection="R", reflected_line_count=1, count=words
    ) == (active, False)


def test_budget_zero_gives_empty_and_truncated() -> None:
    assert prepare_previous_observations("a b c", budget=0, count=words) == ("", True)
    assert prepare_previous_observations("", budget=0, count=words) == ("", False)


def test_fitting_text_is_returned_unchanged() -> None:
    assert prepare_previous_observations("a b\nc d", budget=4, count=words) == ("a b\nc d", False)
    assert prepare_previous_observations("", budget=10, count=words) == ("", False)


def test_buffered_reflection_replaces_reflected_lines() -> None:
    active = "l1\nl2\nl3\nl4\nl5"
    out = prepare_previous_observations(
        active, budget=100, buffered_reflection="REFLECTED", reflected_line_count=3, count=words
    )
    assert out == ("REFLECTED\n\nl4\nl5", False)


def test_buffered_reflection_covering_everything_or_nothing() -> None:
    args = {"budget": 100, "buffered_reflection": "R", "count": words}
    assert prepare_previous_observations("l1\nl2", reflected_line_count=5, **args) == ("R", False)
    assert prepare_previous_observations("l1\nl2", reflected_line_count=0, **args) == ("l1\nl2", False)
    assert prepare_previous_observations("", reflected_line_count=2, **args) == ("R", False)


def test_reflection_result_is_then_truncated() -> None:
    active = "\n".join(f"old {i}" for i in range(10)) + "\n" + "\n".join(f"new {i}" for i in range(10))
    text, truncated = prepare_previous_observations(
        active, budget=9, buffered_reflection="summary of old", reflected_line_count=10, count=words
    )
    assert truncated
    # "summary of old", "", new 0..9: 12 lines; a tail of 2 (4) + marker (4) fits.
    assert text == "[10 observations truncated here]\nnew 8\nnew 9"


def test_invalid_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="budget"):
        prepare_previous_observations("x", budget=-1, count=words)
    with pytest.raises(ValueError, match="reflected_line_count"):
        prepare_previous_observations("x", budget=5, reflected_line_count=-2, count=words)


# --- truncation (hand-computed with the word counter) -------------------------------------


def test_plain_tail_with_one_marker() -> None:
    lines = [f"l{i} w" for i in range(10)]  # 2 tokens each, 20 in total
    text, truncated = prepare_previous_observations("\n".join(lines), budget=9, count=words)
    assert truncated
    # tail of 2 lines (4) + marker (4) = 8 <= 9; a tail of 3 would be 10.
    assert text == "[8 observations truncated here]\nl8 w\nl9 w"


def test_exact_budget_boundaries() -> None:
    text = "a b\nc d\ne f"
    assert prepare_previous_observations(text, budget=6, count=words) == (text, False)
    assert prepare_previous_observations(text, budget=5, count=words) == (
        "[3 observations truncated here]",
        True,
    )


def test_important_head_line_is_kept_before_the_tail() -> None:
    lines = ["🔴 a", "x x", "x x", "x x", "y y", "z z"]
    assert truncate_to_budget("\n".join(lines), 10, count=words) == ("🔴 a\n[3 observations truncated here]\ny y\nz z")


def test_single_hidden_line_is_kept_instead_of_a_marker() -> None:
    lines = ["x", "🔴 a", "b", "c c c c c", "d"]
    assert truncate_to_budget("\n".join(lines), 8, count=words) == "x\n🔴 a\n[2 observations truncated here]\nd"


def test_nothing_fits_gives_the_marker_alone() -> None:
    lines = ["x", "🔴 a b c", "q", "w w w w", "t"]
    assert truncate_to_budget("\n".join(lines), 8, count=words) == "[5 observations truncated here]"
    assert truncate_to_budget("one two three", 2, count=words) == "[1 observations truncated here]"


def test_more_important_lines_beat_a_longer_tail_and_are_capped_by_tail_length() -> None:
    lines = ["✅ old1", "🔴 old2", "🔴 old3", "f f f f f f", "f f f f f f", "t1", "t2"]
    # Tail "t1 t2" could carry 2 important lines, but then "✅ old1" (a single hidden line) is kept
    # and the cost is 12 > 11. The tail "t2" alone allows 1 important line (the newest, old3): 11.
    # A plain tail (0 important lines) would have fitted earlier, but 1 important line wins.
    out = truncate_to_budget("\n".join(lines), 11, count=words)
    assert out == "[2 observations truncated here]\n🔴 old3\n[3 observations truncated here]\nt2"


def test_truncation_marker_wording() -> None:
    assert truncation_marker(12) == "[12 observations truncated here]"


# --- equivalence with the reference search -----------------------------------------------

_line = st.tuples(
    st.sampled_from(["", "🔴 ", "✅ ", "", ""]),
    st.integers(min_value=0, max_value=6),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_line, min_size=1, max_size=30), st.integers(min_value=1, max_value=40))
def test_matches_the_reference_search(spec: list[tuple[str, int]], budget: int) -> None:
    text = "\n".join(f"{mark}{' '.join(['w'] * size)}".rstrip() for mark, size in spec)
    expected = _reference_truncate(text, budget, words)
    assert truncate_to_budget(text, budget, count=words) == expected
    if words(text) > budget:
        assert words(expected) <= budget or expected == truncation_marker(len(spec))


def chars(text: str) -> int:
    """A non-additive counter: every character, newlines included, costs 1/4 token."""
    return (len(text) + 3) // 4


@settings(max_examples=150, deadline=None)
@given(st.lists(_line, min_size=2, max_size=25), st.integers(min_value=1, max_value=40))
def test_non_additive_counter_still_respects_the_budget(spec: list[tuple[str, int]], budget: int) -> None:
    text = "\n".join(f"{mark}{' '.join(['word'] * size)}" for mark, size in spec)
    out = truncate_to_budget(text, budget, count=chars)
    assert chars(out) <= budget or out == truncation_marker(len(spec))


# --- cost ---------------------------------------------------------------------------------


def test_large_log_counts_only_the_lines_a_fitting_window_can_hold() -> None:
    lines = []
    for i in range(6000):
        mark = "🔴 " if i % 7 == 0 else ("✅ " if i % 11 == 0 else "🟡 ")
        lines.append(f"* {mark}(10:{i % 60:02d}) observation number {i} about topic {i % 13}")
    text = "\n".join(lines)
    counted: list[str] = []

    def counting(s: str) -> int:
        counted.append(s)
        return words(s)

    out, truncated = prepare_previous_observations(text, budget=2000, count=counting)
    assert truncated and words(out) <= 2000
    assert out.endswith(lines[-1])
    # 8 words a line: 250 tail lines and 250 important lines fill 2,000 tokens each, plus a few
    # single hidden lines between kept ones; older lines are never counted.
    per_line = [s for s in counted if "\n" not in s and s in lines]
    assert len(per_line) < len(lines) // 10
    assert lines[0] not in counted


def test_default_counter_is_tokenx_and_matches_the_reference() -> None:
    tokenx = pytest.importorskip("omlab.tokens.tokenx")
    lines = [
        f"* {'🔴' if i % 4 == 0 else '🟡'} ({9 + i // 60:02d}:{i % 60:02d}) User said {i}, about dog Rex"
        for i in range(400)
    ]
    text = "\n".join(lines)
    out, truncated = prepare_previous_observations(text, budget=500)
    assert truncated
    assert out == _reference_truncate(text, 500, tokenx.estimate_token_count)
    assert tokenx.estimate_token_count(out) <= 500


def test_large_log_is_scanned_for_important_lines_only_as_far_back_as_the_budget_reaches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = [f"* {'🔴' if i % 3 == 0 else '🟡'} (10:{i % 60:02d}) observation number {i}" for i in range(6000)]
    text = "\n".join(lines)
    scanned: list[str] = []
    is_important = observer_window._is_important

    def counting(line: str) -> bool:
        scanned.append(line)
        return is_important(line)

    monkeypatch.setattr(observer_window, "_is_important", counting)
    out, truncated = prepare_previous_observations(text, budget=2000, count=words)
    monkeypatch.undo()
    assert truncated and out == _reference_truncate(text, 2000, words)
    assert len(scanned) < len(lines) // 3  # the whole log before

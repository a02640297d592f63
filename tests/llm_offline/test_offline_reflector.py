"""The condensing reflector: request parsing, dedup, the condensing ladder, targets, threads."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.llm.offline import get_offline_model
from omlab.llm.offline.observer import OfflineObserver
from omlab.llm.offline.reflector import OfflineReflector, parse_reflector_request, reflect
from omlab.tokens.tokenx import estimate_token_count
from tests.llm_offline.synthetic_chat import observer_message, synthetic_history


def request(observations: str, target: int | None = None, guidance: str = "") -> str:
    text = (
        f"## OBSERVATIONS TO REFLECT ON\n\n{observations}\n\n---\n\n"
        "Please analyse these observations and produce a refined, condensed version.\n"
    )
    if target is not None:
        text += (
            f"\n## COMPRESSION TARGET\nKeep the whole output under {target} tokens "
            f"(the input is {estimate_token_count(observations)} tokens).\n"
        )
    return text + (f"\n{guidance}\n" if guidance else "")


def run(observations: str, target: int | None = None, **kwargs: int) -> str:
    return OfflineReflector().generate([{"role": "user", "content": request(observations, target)}], **kwargs).text


def bullets(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("* ")]


def large_log(days: int = 60, seed: int = 5) -> str:
    history = synthetic_history(seed=seed, days=days, exchanges_per_day=5)
    out = OfflineObserver().generate([{"role": "user", "content": observer_message(history)}]).text
    return out.split("<observations>\n")[1].split("\n</observations>")[0]


SMALL_LOG = """Date: Dec 1, 2025
* 🟢 (09:00) User said: hi
* 🔴 (09:01) User stated they have two kids, aged 5 and 8, and live in Lisbon.
* 🟡 (09:02) Assistant called web_search {"query": "schools"}
  * -> found 3 schools near Alfama
* 🟡 (09:03) Assistant suggested three schools: Escola A; Escola B; Escola C, with long details about each.
Date: Dec 2, 2025
* 🟢 (10:00) User said: ok thanks
* 🟡 (10:02) Assistant replied: The visit is confirmed for Monday morning at the main office, bring ID.
* ✅ (10:05) User confirmed it is done ("thanks") — the request: book a visit
Date: Dec 3, 2025
* 🔴 (11:00) User asked: what's the weather tomorrow? (meaning Dec 4, 2025)
* 🟡 (11:01) Assistant replied: Sunny, 18C in Lisbon."""


# --- parsing ------------------------------------------------------------------------------------


def test_parse_request() -> None:
    parsed = parse_reflector_request(request(SMALL_LOG, 1200) + "\n## SPECIFIC GUIDANCE\n\nKeep under 5 tokens?")
    assert parsed.observations == SMALL_LOG
    assert parsed.target_tokens == 1200


def test_parse_the_engines_own_prompt() -> None:
    from omlab.engine.prompts import reflector_user_prompt

    text = reflector_user_prompt(
        observations=SMALL_LOG,
        target_tokens=900,
        input_tokens=1200,
        level=2,
        guidance="Stay under 5 tokens per line.",
    )
    parsed = parse_reflector_request(text)
    assert parsed.observations == SMALL_LOG
    assert parsed.target_tokens == 900


def test_parse_target_with_thousands_separator() -> None:
    text = request(SMALL_LOG).replace("condensed version.", "condensed version.\n\nKeep it under 12,000 tokens.")
    assert parse_reflector_request(text).target_tokens == 12000


def test_missing_section_is_named() -> None:
    with pytest.raises(ValueError, match="## OBSERVATIONS TO REFLECT ON"):
        parse_reflector_request("## COMPRESSION TARGET\nKeep the whole output under 10 tokens")


def test_default_target_is_three_quarters_of_the_input() -> None:
    log = large_log(days=10)
    out = run(log)
    assert estimate_token_count(out) < round(0.75 * estimate_token_count(log))
    assert estimate_token_count(out) > 0.6 * estimate_token_count(log)  # condensed only as far as needed


def test_registered_by_name() -> None:
    assert isinstance(get_offline_model("reflector"), OfflineReflector)


# --- output and targets ---------------------------------------------------------------------------


def test_under_target_output_is_the_log_itself() -> None:
    out = run(SMALL_LOG, 10_000)
    assert out == f"<observations>\n{SMALL_LOG}\n</observations>"
    assert "<current-task>" not in out


@pytest.mark.parametrize("target", [12_000, 6_000, 3_000, 2_000])
def test_meets_target_on_a_large_log(target: int) -> None:
    log = large_log()
    assert estimate_token_count(log) > 15_000
    result = OfflineReflector().generate([{"role": "user", "content": request(log, target)}])
    assert result.output_tokens == estimate_token_count(result.text) < target
    assert result.text.startswith("<observations>\nDate: ") and result.text.endswith("\n</observations>")


def test_meets_target_with_a_non_additive_estimator(monkeypatch: pytest.MonkeyPatch) -> None:
    import omlab.llm.offline.reflector as reflector_module

    def by_characters(text: str | None) -> int:
        return -(-len(text) // 4) if text else 0  # rounds per call, so line sums overshoot/undershoot

    monkeypatch.setattr(reflector_module, "estimate_token_count", by_characters)
    log = large_log(days=20)
    for target in (4_000, 1_500):
        assert by_characters(reflect(log, target)) < target


def test_max_output_tokens_caps_the_target() -> None:
    out = run(large_log(days=10), 100_000, max_output_tokens=1_000)
    assert estimate_token_count(out) <= 1_000


def test_exact_and_near_duplicates_are_merged() -> None:
    log = (
        "Date: Dec 1, 2025\n* 🔴 (09:00) User stated they have two kids, aged 5 and 8.\n"
        "* 🟡 (09:05) Assistant ran the tests\n  * -> 3 failed\n"
        "Date: Dec 2, 2025\n* 🔴 (10:00) User stated they have two kids, aged 5 and 8.\n"
        "* 🔴 (10:01) User stated that they have two kids aged 5 and 8\n"
        "* ✅ (10:05) Assistant ran the tests!\n  * -> all pass\n"
        "* 🔴 (10:06) User stated they have three kids, aged 5 and 8."
    )
    assert run(log, 10_000) == (
        "<observations>\nDate: Dec 1, 2025\n"
        "* 🔴 (09:00) User stated that they have two kids aged 5 and 8\n"  # first position, newest wording
        "* ✅ (09:05) Assistant ran the tests\n  * -> 3 failed\n  * -> all pass\n"  # higher priority wins
        "Date: Dec 2, 2025\n* 🔴 (10:06) User stated they have three kids, aged 5 and 8.\n</observations>"
    )  # the knowledge update ("three kids") is a different line and stays


def test_same_date_groups_and_boundaries_are_merged() -> None:
    log = (
        "Date: Dec 1, 2025\n* 🔴 (09:00) User stated A is 1.\n\n--- message boundary (2025-12-01T09:00:00.000Z) ---\n\n"
        "Date: Dec 1, 2025\n* 🔴 (09:30) User stated B is 2."
    )
    assert bullets(run(log, 10_000)) == [
        "* 🔴 (09:00) User stated A is 1.",
        "* 🔴 (09:30) User stated B is 2.",
    ]
    assert run(log, 10_000).count("Date: ") == 1


def test_condensing_order_green_then_yellow_then_red() -> None:
    full = estimate_token_count(f"<observations>\n{SMALL_LOG}\n</observations>")
    greens = sum(estimate_token_count(line) for line in SMALL_LOG.splitlines() if "🟢" in line)
    # Just enough pressure to drop the small talk: everything else stays word for word.
    out = run(SMALL_LOG, full - greens + 1)
    assert "🟢" not in out
    assert bullets(out) == [line for line in bullets(SMALL_LOG) if "🟢" not in line]
    assert "  * -> found 3 schools near Alfama" in out
    # More pressure: old 🟡 lines are collapsed, shortened and dropped before any 🔴 line changes.
    out = run(SMALL_LOG, full - greens - 25)
    assert "  * -> found 3 schools" not in out
    assert "* 🔴 (09:01) User stated they have two kids, aged 5 and 8, and live in Lisbon." in out
    assert "* 🔴 (11:00) User asked: what's the weather tomorrow? (meaning Dec 4, 2025)" in out


def test_yellow_lines_are_shortened_before_they_are_dropped() -> None:
    full = estimate_token_count(f"<observations>\n{SMALL_LOG}\n</observations>")
    greens = sum(estimate_token_count(line) for line in SMALL_LOG.splitlines() if "🟢" in line)
    child = estimate_token_count("  * -> found 3 schools near Alfama")
    out = run(SMALL_LOG, full - greens - child - 3)
    assert (
        bullets(out)
        == [
            "* 🔴 (09:01) User stated they have two kids, aged 5 and 8, and live in Lisbon.",
            '* 🟡 (09:02) Assistant called web_search {"query" …',  # first clause, the cut marked with …
            "* 🟡 (09:03) Assistant suggested three schools …",
            *bullets(SMALL_LOG)[5:],  # later lines untouched: condensing goes oldest first
        ]
    )


def test_newest_lines_are_kept_longest() -> None:
    log = large_log(days=30)
    lines = bullets(log)
    newest = lines[-len(lines) // 5 :]
    out = run(log, estimate_token_count(log) // 2)
    kept = set(bullets(out))
    assert all(line in kept for line in newest)
    assert sum(line in kept for line in lines[: len(lines) // 2]) < len(lines) // 4


def test_done_lines_survive_longer_than_red_lines() -> None:
    log = "\n".join(
        f"Date: Dec {day}, 2025\n* 🔴 (09:00) User stated fact number {day} about the garden.\n"
        f"* ✅ (09:30) User confirmed task {day} is done."
        for day in range(1, 21)
    )
    out = run(log, estimate_token_count(log) * 55 // 100)
    assert out.count("✅") == 20
    assert out.count("🔴") < 20


def test_thread_sections_are_preserved() -> None:
    log = (
        '<thread id="t1">\nDate: Dec 1, 2025\n* 🟢 (09:00) User said: hi\n* 🔴 (09:01) User stated they love jazz.\n'
        "</thread>\n"
        '<thread id="t2">\nDate: Dec 2, 2025\n* 🟡 (10:00) Assistant replied: 4.\n* 🔴 (10:01) User asked: what is 2+2?\n'
        "</thread>\n"
        '<thread id="t1">\nDate: Dec 3, 2025\n* 🔴 (11:00) User stated they play the sax.\n</thread>'
    )
    out = run(log, estimate_token_count(log) - 8)
    assert out == (
        '<observations>\n<thread id="t1">\nDate: Dec 1, 2025\n* 🔴 (09:01) User stated they love jazz.\n'
        "Date: Dec 3, 2025\n* 🔴 (11:00) User stated they play the sax.\n</thread>\n"
        '<thread id="t2">\nDate: Dec 2, 2025\n* 🟡 (10:00) Assistant replied: 4.\n* 🔴 (10:01) User asked: what is 2+2?\n'
        "</thread>\n</observations>"
    )


def test_impossible_target_returns_one_short_line_per_date() -> None:
    log = large_log(days=8)
    out = run(log, 5)
    groups = re.split(r"^Date: .*$", out, flags=re.MULTILINE)[1:]
    assert len(groups) == 8
    assert all(len(bullets(group)) == 1 for group in groups)


@pytest.mark.parametrize(
    "observations", ["", "Date: Dec 1, 2025\nDate: Dec 2, 2025", "<observations>\n</observations>"]
)
def test_degenerate_inputs(observations: str) -> None:
    assert run(observations, 100) == "<observations>\n</observations>"
    assert run(observations) == "<observations>\n</observations>"


def test_continuation_hints_in_the_input_are_dropped() -> None:
    log = "Date: Dec 1, 2025\n* 🔴 (09:00) User stated A.\n<current-task>\nPrimary: x\n</current-task>"
    assert run(log, 1_000) == "<observations>\nDate: Dec 1, 2025\n* 🔴 (09:00) User stated A.\n</observations>"


def test_deterministic() -> None:
    log = large_log(days=20)
    assert run(log, 3_000) == run(log, 3_000)


entries = st.tuples(
    st.integers(min_value=1, max_value=5),
    st.sampled_from(["🔴", "🟡", "🟢", "✅"]),
    st.lists(
        st.sampled_from(["cats", "dogs", "Lisbon", "42", "booked", "tests", "passed", "failed", "the", "a,", "and."]),
        min_size=1,
        max_size=14,
    ),
    st.booleans(),
)


@settings(max_examples=80, deadline=None)
@given(items=st.lists(entries, min_size=1, max_size=30), fraction=st.floats(min_value=0.05, max_value=1.2))
def test_target_met_or_floor_reached(items: list[tuple[int, str, list[str], bool]], fraction: float) -> None:
    days: dict[int, list[str]] = {}
    for day, emoji, words, child in sorted(items, key=lambda item: item[0]):
        days.setdefault(day, []).append(f"* {emoji} (09:00) {' '.join(words)}")
        if child:
            days[day].append(f"  * -> {' '.join(reversed(words))}")
    log = "\n".join(f"Date: Dec {day}, 2025\n" + "\n".join(lines) for day, lines in days.items())
    target = max(1, int(fraction * estimate_token_count(log)))
    out = reflect(log, target)
    assert out == reflect(log, target)
    groups = re.split(r"^Date: .*$", out, flags=re.MULTILINE)[1:]
    floor = all(len(bullets(group)) == 1 and "  * ->" not in group for group in groups)
    assert estimate_token_count(out) < target or floor


def test_the_line_memo_holds_nothing_the_garbage_collector_tracks():
    # issue 20: the memo keeps an entry per log line; tracked entries (a frozenset of words) pushed
    # a 1M-token replay over the full-collection threshold, a cost billed to the engine
    import gc

    from omlab.llm.offline.reflector import _item_line

    entry = _item_line("* 🔴 (10:00) User mentioned the quarterly budget review moved to Thursday")
    gc.collect()
    gc.collect()  # a tuple is untracked once the tuples it holds are: the inner one first
    assert not gc.is_tracked(entry)
    assert entry[4] == tuple(sorted(set(entry[4])))  # content words: distinct and sorted, so equal sets compare equal

"""Degenerate-output detection: real-looking loops fire, real long outputs do not."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.engine.degenerate import is_degenerate
from omlab.engine.observation_text import parse_observer_output


def _varied_observations(count: int) -> str:
    topics = ["auth middleware", "billing page", "search index", "CSV export", "login flow", "cache layer"]
    lines = ["<observations>", "Date: Mar 3, 2026"]
    for i in range(count):
        hour, minute = divmod(8 * 60 + i, 60)
        lines.append(
            f"* 🟡 ({hour:02d}:{minute:02d}) Agent inspected {topics[i % len(topics)]} step {i}: "
            f"found {i * 7 % 13} warnings in module_{i}.py"
        )
        if i % 5 == 0:
            lines.append(f"  * -> ran pytest tests/test_module_{i}.py, {i % 4} failures")
    lines.append("</observations>")
    return "\n".join(lines)


def test_short_text_never_fires() -> None:
    looping = "* 🔴 (10:00) User repeated the same thing\n" * 40
    assert len(looping) < 2000
    assert not is_degenerate(looping)


def test_same_long_line_repeated_200_times_fires() -> None:
    line = "* 🟡 (14:02) Agent ran the build command again and it failed with the same error"
    text = "Date: Jan 2, 2026\n" + "\n".join([line] * 200)
    assert is_degenerate(text)


def test_repeating_three_line_loop_fires() -> None:
    block = [
        "* 🟡 (09:10) Agent opened src/app.ts to look for the router setup",
        "  * -> found createRouter call on line 42 with default options",
        "* 🟡 (09:11) Agent decided to re-check the router configuration",
    ]
    text = "Date: Feb 1, 2026\n" + "\n".join(block * 100)
    assert is_degenerate(text)


def test_long_period_block_loop_fires_via_duplicate_lines() -> None:
    # A 21-line block repeated: window sampling can alias, the duplicate-line ratio catches it.
    block = [f"* 🟡 (10:{i:02d}) Agent examined configuration entry number {i} in settings" for i in range(21)]
    text = "\n".join(block * 30)
    assert is_degenerate(text)


def test_short_repeated_lines_over_10k_chars_fire() -> None:
    text = "Date: Jan 5, 2026\n* 🟡 (10:00) Agent started the deployment loop now\n" + "\n".join(
        ["- ok", "- retry"] * 1500
    )
    assert is_degenerate(text)


def test_single_run_of_short_line_over_bound_fires() -> None:
    text = "\n".join(["  * -> ok"] * 1500)  # 10 chars x 1500 = 15,000 > 10,000
    assert is_degenerate(text)


def test_short_run_of_identical_lines_is_not_degenerate() -> None:
    # A faithful transcript of a repetitive tool loop: one run of about 1,000 characters.
    tool_line = "  * -> pnpm --filter web build: ok"
    text = _varied_observations(20) + "\n" + "\n".join([tool_line] * 30)
    assert len(tool_line) * 30 < 2_000
    assert not is_degenerate(text)


def test_one_bulleted_line_repeated_120_times_fires() -> None:
    # The collapse of back-to-back identical lines (bounded by 10k characters) used to hide it.
    line = "- The user said the very same thing again, and again, and again."
    text = "<observations>\nDate: Jan 1, 2026\n" + "\n".join([line] * 120) + "\n</observations>"
    assert len(text) < 10_000
    assert is_degenerate(text)


def test_one_line_loop_with_a_59_character_period_fires() -> None:
    # 7,080 characters on one line: under the length limit, and window sampling missed it.
    unit = "and then the user said the trip to Lisbon was in May 2023, "
    assert len(unit) == 59
    text = unit * 120
    assert "\n" not in text and len(text) == 7_080
    assert is_degenerate(text)


def test_a_single_looping_line_of_11k_characters_is_degenerate_not_truncated() -> None:
    # issue 20 item 2: the reference flags it; sanitising cut it to 10,000 characters and kept it.
    text = "<observations>\n* 🟡 (10:00) " + "User repeated the request once more; " * 300 + "\n</observations>"
    assert len(text) > 11_000
    parsed = parse_observer_output(text)
    assert parsed.degenerate and parsed.observations == ""


def test_varied_long_observations_do_not_fire() -> None:
    text = _varied_observations(400)
    assert len(text) > 30_000
    assert not is_degenerate(text)


def test_long_code_block_does_not_fire() -> None:
    functions = []
    for i in range(120):
        functions.append(
            "\n".join(
                [
                    f"def handle_request_{i}(request, session, cache_timeout={i}):",
                    f"    payload = request.json().get('item_{i}', {{}})",
                    "    if not payload:",
                    "        return None",
                    f"    result = session.execute(build_query_{i}(payload), timeout={i + 3})",
                    "    return result",
                    "",
                ]
            )
        )
    text = "* 🟡 (10:00) Agent wrote the request handlers:\n```python\n" + "\n".join(functions) + "```"
    assert len(text) > 20_000
    assert not is_degenerate(text)


def test_multi_thread_scaffolding_does_not_fire() -> None:
    # Many thread blocks repeat tag-only lines and Date headers; that is format, not a loop.
    blocks = []
    for i in range(300):
        blocks.append(
            f'<thread id="t{i}">\nDate: Jan 1, 2026\n* 🔴 (10:00) User {i} mentioned pet number {i * 3}\n</thread>'
        )
    text = "<observations>\n" + "\n".join(blocks) + "\n</observations>"
    assert len(text) > 10_000
    assert not is_degenerate(text)


def test_result_is_deterministic() -> None:
    text = _varied_observations(300) + "\n" + "\n".join(["* 🟡 (11:00) Agent retried the same failing step"] * 60)
    assert is_degenerate(text) == is_degenerate(text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abcdefghij klmnop", min_size=30, max_size=80), min_size=1, max_size=40, unique=True))
def test_distinct_lines_never_fire(lines: list[str]) -> None:
    # Lines that are all distinct (and not short-line loops) can never be degenerate by (b)/(c);
    # long, distinct random lines do not share 200-char windows either.
    unique = [f"{i:04d} {line}" for i, line in enumerate(lines)]
    assert not is_degenerate("\n".join(unique))


def _short_lines_budget_by_recount(lines: list[str]) -> bool:
    """Signal (c) as its definition reads: at every substantial line and at the end, the run's
    repeated short lines (all their occurrences, newlines included) against the budget."""
    from omlab.engine.degenerate import _TAG_ONLY_LINE, MAX_OBSERVATION_LINE_CHARS, MIN_SUBSTANTIAL_LINE_CHARS

    run: list[str] = []

    def over() -> bool:
        trimmed = [line.strip() for line in run]
        repeated = sum(len(line) + 1 for line, key in zip(run, trimmed, strict=True) if trimmed.count(key) > 1)
        return repeated - 1 > MAX_OBSERVATION_LINE_CHARS

    for line in lines:
        trimmed = line.strip()
        if not trimmed:
            continue
        if len(trimmed) >= MIN_SUBSTANTIAL_LINE_CHARS:
            if over():
                return True
            run = []
        elif not (_TAG_ONLY_LINE.match(trimmed) or trimmed.startswith("Date:")):
            run.append(line)
    return over()


# indentation makes a short line (short once trimmed) long: a few repeats reach the budget
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["- ok", " " * 2500 + "- ok", "- retry", " " * 1800 + "- retry", "x" * 30, ""])
        | st.sampled_from(["Date: Jan 1", "<thread>", "  * a substantial observation line"]),
        max_size=40,
    )
)
def test_short_lines_signal_counts_as_defined(lines: list[str]) -> None:
    from omlab.engine.degenerate import _short_lines_loop

    assert _short_lines_loop(lines) == _short_lines_budget_by_recount(lines)

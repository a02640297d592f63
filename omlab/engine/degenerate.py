"""Detect degenerate (looping) model output before it is committed as memory.

Observer, Reflector, actor and judge models sometimes fall into a repetition loop and emit the
same line, block or phrase until they run out of output tokens. Such output must never become
memory, an answer or a verdict. The check below fires on four independent signals, and only for
outputs of at least 2,000 characters:

(p) a periodic stretch: at least 2,000 characters that repeat one unit (any period up to 10,000
    characters, any line structure: a line, a block of lines, a phrase inside one long line) at
    least three times back to back (:func:`omlab.engine.periodicity.find_loop`; no sampling);

(a) repeated 200-character windows, sampled at ~50 evenly spaced, deterministic positions over
    the substantial lines (more than 40 % of the samples are repeats);
(b) exact duplicates among substantial lines (at least 20 such lines, more than 50 % repeats);
(c) short lines repeated inside one contiguous run of short lines whose repeated occurrences add
    up to more than one maximum-size observation line (10,000 characters).

Before (a)-(c), a run of back-to-back identical lines is collapsed to one line when that run is
the line's only occurrence and is no bigger than one maximum-size observation line, as the
reference does; (p) sees the text as it is, so such a run is a loop once it reaches 2,000
characters (a faithful "30 x build -> ok" of about 1,000 characters is not).
"""

from __future__ import annotations

import re

from omlab.engine.periodicity import find_loop

MIN_DEGENERATE_CHECK_CHARS = 2_000
"""Outputs shorter than this are never judged degenerate."""

MAX_OBSERVATION_LINE_CHARS = 10_000
"""Longest observation line kept verbatim; also the size bound used by the collapse and by (c)."""

MIN_SUBSTANTIAL_LINE_CHARS = 24
"""Trimmed lines at least this long count as substantial for strategies (a) and (b)."""

_WINDOW_CHARS = 200
_WINDOW_SAMPLES = 50
_WINDOW_DUPLICATE_RATIO = 0.4
_MIN_WINDOWS = 5
_MIN_COUNTED_LINES = 20
_LINE_DUPLICATE_RATIO = 0.5

# Format scaffolding (a line holding only an XML tag, or a `Date:` header) legitimately repeats
# once per thread block, so strategy (c) leaves it out of the repetition budget.
_TAG_ONLY_LINE = re.compile(r"^</?[A-Za-z][\w-]*(?:\s[^<>]*)?>$")


def is_degenerate(text: str) -> bool:
    """Return True when *text* looks like a model repetition loop.

    Args:
        text: the whole model output (callers pass it through ``sanitize_observation_lines``
            first, so single giant lines are already bounded).

    Returns:
        True if any of the four strategies described in the module docstring fires. Texts shorter
        than 2,000 characters always return False.
    """
    if len(text) < MIN_DEGENERATE_CHECK_CHARS:
        return False
    if find_loop(text) is not None:
        return True
    lines = _collapse_bounded_line_runs(text.split("\n"))
    return _windows_repeat(lines) or _substantial_lines_repeat(lines) or _short_lines_loop(lines)


def _collapse_bounded_line_runs(lines: list[str]) -> list[str]:
    if all(map(str.__ne__, lines, lines[1:])):  # no line repeats the one before it: nothing to collapse
        return lines
    runs: list[list] = []
    for line in lines:
        if runs and runs[-1][0] == line:
            runs[-1][1] += 1
        else:
            runs.append([line, 1])
    runs_per_line: dict[str, int] = {}
    for line, _ in runs:
        runs_per_line[line] = runs_per_line.get(line, 0) + 1
    collapsed: list[str] = []
    for line, count in runs:
        bounded = count * (len(line) + 1) <= MAX_OBSERVATION_LINE_CHARS
        collapsed.extend([line] * (1 if runs_per_line[line] == 1 and bounded else count))
    return collapsed


def _windows_repeat(lines: list[str]) -> bool:
    # Short lines are left out (legitimately repetitive tool summaries would collide) and so are
    # truncated giant lines (one periodic line would fill the whole sample on its own).
    window_text = "\n".join(
        line
        for line in lines
        if len(line.strip()) >= MIN_SUBSTANTIAL_LINE_CHARS and len(line) <= MAX_OBSERVATION_LINE_CHARS
    )
    if len(window_text) < MIN_DEGENERATE_CHECK_CHARS:
        return False
    step = max(1, len(window_text) // _WINDOW_SAMPLES)
    seen: set[str] = set()
    total = duplicates = 0
    for start in range(0, len(window_text) - _WINDOW_CHARS + 1, step):
        window = window_text[start : start + _WINDOW_CHARS]
        total += 1
        if window in seen:
            duplicates += 1
        else:
            seen.add(window)
    return total > _MIN_WINDOWS and duplicates / total > _WINDOW_DUPLICATE_RATIO


def _substantial_lines_repeat(lines: list[str]) -> bool:
    # Window sampling aliases on long-period loops (a 21-line block repeated 62 times can yield
    # zero colliding windows), so exact duplicate lines are counted as well.
    seen: set[str] = set()
    total = duplicates = 0
    for line in lines:
        trimmed = line.strip()
        if len(trimmed) < MIN_SUBSTANTIAL_LINE_CHARS:
            continue
        total += 1
        if trimmed in seen:
            duplicates += 1
        else:
            seen.add(trimmed)
    return total >= _MIN_COUNTED_LINES and duplicates / total > _LINE_DUPLICATE_RATIO


def _short_lines_loop(lines: list[str]) -> bool:
    # The budget is shared by all short lines of one contiguous run and resets at every
    # substantial line: a looping model emits short lines back to back, while short status
    # lines that legitimately recur are separated by real observations.
    counts: dict[str, list[int]] = {}  # short line -> [occurrences, characters] in this run
    repeated = 0  # characters of this run's short lines that occur more than once
    for line in lines:
        trimmed = line.strip()
        if not trimmed:
            continue
        if len(trimmed) >= MIN_SUBSTANTIAL_LINE_CHARS:
            # The newline after the very last occurrence is not part of the output.
            if repeated - 1 > MAX_OBSERVATION_LINE_CHARS:
                return True
            if counts:
                counts, repeated = {}, 0
            continue
        if _TAG_ONLY_LINE.match(trimmed) or trimmed.startswith("Date:"):
            continue
        chars = len(line) + 1
        entry = counts.get(trimmed)
        if entry is None:
            counts[trimmed] = [1, chars]
            continue
        entry[0] += 1
        entry[1] += chars
        # a second occurrence makes the first one count as repeated too
        repeated += entry[1] if entry[0] == 2 else chars
    return repeated - 1 > MAX_OBSERVATION_LINE_CHARS

"""Find a repetition loop in text: a stretch that repeats one unit back to back, of any period.

A model stuck in a loop writes the same unit again and again until its output budget runs out:
one line 120 times, a three-line block, or a 59-character phrase inside one endless line. What
they share is not their line structure but exact periodicity: over a long stretch ``[start, end)``
every character equals the one ``period`` characters further on. :func:`find_loop` finds such a
stretch whatever the period (1 to :data:`MAX_LOOP_PERIOD` characters) and wherever it is.

How, in near-linear time: an *anchor* (the :data:`ANCHOR_CHARS` characters at a position) is
taken every :data:`ANCHOR_STEP` characters and looked up again within the next
``MAX_LOOP_PERIOD`` characters; each distance to a later occurrence is a candidate period, and
the stretch around the anchor that is periodic with it is measured with a handful of slice
comparisons (binary search on ``text[s:e] == text[s + p:e + p]``). Anchors that are periodic
themselves (a run of dashes, ``"ababab"``) are moved to where their own run ends, so a long run of
one character inside a long unit does not hide the unit. Whenever a loop of at least
``min_chars`` characters and ``min_repeats`` units exists, some anchor lies far enough inside it
(``min_chars × (1 - 1/min_repeats) > ANCHOR_STEP + ANCHOR_CHARS``): there is no sampling to miss.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_LOOP_CHARS = 2_000
"""A periodic stretch shorter than this is not a loop (a few repeated tool lines are not)."""

MIN_LOOP_REPEATS = 3
"""A periodic stretch must hold at least this many units back to back."""

MAX_LOOP_PERIOD = 10_000
"""The longest unit looked for (one maximum-size observation line)."""

ANCHOR_CHARS = 32
ANCHOR_STEP = 512
_CANDIDATES_PER_ANCHOR = 8


@dataclass(frozen=True, slots=True)
class Loop:
    """A periodic stretch of a text: ``text[start:end]`` repeats its first ``period`` characters."""

    start: int
    end: int
    period: int

    @property
    def chars(self) -> int:
        """The stretch's length in characters."""
        return self.end - self.start

    @property
    def repeats(self) -> float:
        """How many units the stretch holds (the last one may be partial)."""
        return self.chars / self.period


def find_loop(
    text: str,
    *,
    min_chars: int = MIN_LOOP_CHARS,
    min_repeats: int = MIN_LOOP_REPEATS,
    max_period: int = MAX_LOOP_PERIOD,
) -> Loop | None:
    """The first periodic stretch of ``text`` with at least ``min_chars`` characters and
    ``min_repeats`` units of at most ``max_period`` characters, or None.

    Pure and deterministic. Any period and any line structure: the unit may be a line, a block of
    lines, or a phrase inside one long line.

    Raises:
        ValueError: ``min_repeats`` below 2, or ``min_chars`` too small for the anchors to cover
            every loop (see the module docstring).
    """
    if min_repeats < 2:
        raise ValueError(f"min_repeats must be at least 2, got {min_repeats}")
    if min_chars * (min_repeats - 1) <= (ANCHOR_STEP + ANCHOR_CHARS) * min_repeats:
        raise ValueError(f"min_chars={min_chars} is too small for min_repeats={min_repeats}")
    n = len(text)
    if n < min_chars:
        return None
    for position in range(0, n - ANCHOR_CHARS, ANCHOR_STEP):
        for anchor in _anchors(text, position):
            loop = _loop_at(text, anchor, min_chars, min_repeats, max_period)
            if loop is not None:
                return loop
    return None


def _anchors(text: str, position: int) -> list[int]:
    """``position``, and when the anchor there is periodic itself, the start of the anchor that
    straddles the end of that run (the first that is not)."""
    anchor = text[position : position + ANCHOR_CHARS]
    inner = text.find(anchor, position + 1, position + 2 * ANCHOR_CHARS - 1)
    if inner < 0:
        return [position]
    run_end = _extend_forward(text, position, inner - position) + (inner - position)
    moved = run_end - ANCHOR_CHARS + 1
    return [position, moved] if moved + ANCHOR_CHARS <= len(text) and moved > position else [position]


def _loop_at(text: str, position: int, min_chars: int, min_repeats: int, max_period: int) -> Loop | None:
    anchor = text[position : position + ANCHOR_CHARS]
    limit = min(len(text), position + max_period + ANCHOR_CHARS)
    search_from = position + 1
    for _ in range(_CANDIDATES_PER_ANCHOR):
        found = text.find(anchor, search_from, limit)
        if found < 0:
            return None
        period = found - position
        start = _extend_backward(text, position, period)
        end = _extend_forward(text, position, period) + period
        if end - start >= max(min_chars, min_repeats * period):
            return Loop(start, end, period)
        search_from = found + 1
    return None


def _extend_forward(text: str, position: int, period: int) -> int:
    """The largest ``e`` with ``text[position:e] == text[position + period:e + period]``."""
    most = len(text) - period  # e can go no further than this
    good, step = position, 1
    while good < most:  # gallop: double the stretch checked until it breaks or hits the end
        probe = min(most, good + step)
        if text[good:probe] != text[good + period : probe + period]:
            break
        good, step = probe, step * 2
    else:
        return good
    bad = min(most, good + step)  # text[good:bad] breaks: binary search the first mismatch
    while bad - good > 1:
        middle = (good + bad) // 2
        if text[good:middle] == text[good + period : middle + period]:
            good = middle
        else:
            bad = middle
    return good


def _extend_backward(text: str, position: int, period: int) -> int:
    """The smallest ``s`` with ``text[s:position] == text[s + period:position + period]``."""
    good, step = position, 1
    while good > 0:
        probe = max(0, good - step)
        if text[probe:good] != text[probe + period : good + period]:
            break
        good, step = probe, step * 2
    else:
        return good
    bad = max(0, good - step)
    while good - bad > 1:
        middle = (good + bad) // 2
        if text[middle:good] == text[middle + period : good + period]:
            good = middle
        else:
            bad = middle
    return good


__all__ = ["MAX_LOOP_PERIOD", "MIN_LOOP_CHARS", "MIN_LOOP_REPEATS", "Loop", "find_loop"]

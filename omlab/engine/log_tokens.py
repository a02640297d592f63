"""Token counts of observation logs, remembered by date group.

The engine recounts the observation log after every cycle: an activation appends to it, a
reflection replaces its oldest groups, a background reflection counts its slice, the Reflector
its input. From one count to the next almost every ``Date:`` group is unchanged. Counting line by
line (each line memoised) still splits, hashes and looks up every one of a log's thousands of
lines each time, so these counts cost in proportion to the log at every cycle. Here a log is cut
at its ``Date:`` headers and each group's count is remembered: a count hashes the text once and
looks up a few hundred groups, and only new or changed groups are counted line by line.

Exact for tokenx: a newline is whitespace and always ends a segment, so the count of a text is the
sum over its lines, and therefore over any partition of its lines. Text without ``Date:`` headers
is counted line by line, as before.
"""

from __future__ import annotations

from typing import NamedTuple

from omlab.tokens.tokenx import estimate_line_cached

#: Cut a log before each line starting with this (the newline itself is the cut).
GROUP_HEADER = "Date:"
#: Characters of groups remembered; the memo is emptied when it would hold more.
MEMO_CHARS = 4_000_000

_SEPARATOR = "\n" + GROUP_HEADER


class LeadingLines(NamedTuple):
    """The head of a log: its first ``lines`` lines, ``tokens`` long, ``text[:chars]``."""

    lines: int
    tokens: int
    chars: int


def count_lines(text: str) -> int:
    """tokenx count of ``text``, line by line with the per-line memo."""
    return sum(map(estimate_line_cached, text.split("\n")))


class LogTokenMemo:
    """tokenx counts of observation logs, memoised per ``Date:`` group (see the module docstring)."""

    __slots__ = ("_chars", "_groups")

    def __init__(self) -> None:
        # group body (the text after its "Date:" header's "Date:") -> tokens of the whole group
        self._groups: dict[str, int] = {}
        self._chars = 0

    def count(self, text: str) -> int:
        """The tokenx count of ``text`` (equal to ``estimate_token_count(text)``)."""
        # the leading newline makes a text that starts with a header cut there too (head == "")
        head, *bodies = ("\n" + text).split(_SEPARATOR)
        total = count_lines(head) if head else 0
        groups = self._groups
        for body in bodies:
            tokens = groups.get(body)
            if tokens is None:
                tokens = self._remember(body)
            total += tokens
        return total

    def leading_lines(self, text: str, budget: float) -> LeadingLines:
        """The leading lines of ``text`` it takes for their count to reach ``budget`` (all of them
        when it never does): how many, their count and their length in characters.

        Equal to walking the lines and counting each, but whole groups are passed by their
        remembered count and the text is cut no further than the group where the budget is
        reached: a background reflection takes the oldest part of the log this way every time."""
        total = seen = 0
        position = 0  # where the line after the ones seen starts
        if not text.startswith(GROUP_HEADER):  # lines before the first header: one by one
            first = text.find(_SEPARATOR)
            for line in (text if first < 0 else text[:first]).split("\n"):
                total += estimate_line_cached(line)
                seen += 1
                position += len(line) + 1
                if total >= budget:
                    return LeadingLines(seen, total, position - 1)
            if first < 0:
                return LeadingLines(seen, total, position - 1)
        groups = self._groups
        length = len(text)
        while position < length:
            end = text.find(_SEPARATOR, position + 1)
            end = length if end < 0 else end
            body = text[position + len(GROUP_HEADER) : end]
            tokens = groups.get(body)
            if tokens is None:
                tokens = self._remember(body)
            if total + tokens < budget:  # line counts are never negative: no line of it reaches it
                total += tokens
                seen += body.count("\n") + 1
                position = end + 1
                continue
            for line in text[position:end].split("\n"):
                total += estimate_line_cached(line)
                seen += 1
                position += len(line) + 1
                if total >= budget:
                    return LeadingLines(seen, total, position - 1)
        return LeadingLines(seen, total, position - 1)

    def _remember(self, body: str) -> int:
        tokens = count_lines(GROUP_HEADER + body)
        self._chars += len(body)
        if self._chars > MEMO_CHARS:
            self._groups.clear()
            self._chars = len(body)
        self._groups[body] = tokens
        return tokens

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

from omlab.tokens.tokenx import estimate_line_cached

#: Cut a log before each line starting with this (the newline itself is the cut).
GROUP_HEADER = "Date:"
#: Characters of groups remembered; the memo is emptied when it would hold more.
MEMO_CHARS = 4_000_000

_SEPARATOR = "\n" + GROUP_HEADER


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
                tokens = count_lines(GROUP_HEADER + body)
                self._chars += len(body)
                if self._chars > MEMO_CHARS:
                    groups.clear()
                    self._chars = len(body)
                groups[body] = tokens
            total += tokens
        return total

"""Finding a tag that opens or closes a line of model output, fast on long replies.

The Observer and Reflector formats accept a section tag only where it starts a line (after
spaces or tabs) or, for closing tags, where it ends one: the regular expressions
``^[ \\t]*<tag>`` and ``</tag>[ \\t]*$`` (multi-line, case-insensitive). Python's ``re`` tries such
a pattern at every character of the text, which on a Reflector reply of 50,000 characters costs
about half a millisecond per search, several times per reply. :func:`find_tag` finds the same
matches by looking for the tag itself (a literal search) and then checking its line.
"""

from __future__ import annotations

import functools
import re

__all__ = ["find_tag"]

_BLANKS = " \t"


@functools.lru_cache(maxsize=64)
def _literal(tag: str) -> re.Pattern[str]:
    return re.compile(re.escape(tag), re.IGNORECASE)


def find_tag(
    text: str, tag: str, pos: int = 0, *, at_line_start: bool = False, at_line_end: bool = False
) -> tuple[int, int] | None:
    """The span of the first match at or after ``pos`` of ``^[ \\t]*tag`` (``at_line_start``),
    ``tag[ \\t]*$`` (``at_line_end``) or either (both), as ``re`` with ``IGNORECASE | MULTILINE``
    would find it: a line-start match begins at its line's start, so its span holds the
    indentation; a line-end match holds the trailing blanks. ``None`` when there is none.
    """
    if not (at_line_start or at_line_end):
        raise ValueError("find_tag needs at_line_start, at_line_end or both")
    literal = _literal(tag)
    scan = pos
    while (match := literal.search(text, scan)) is not None:
        start, end = match.span()
        if at_line_start:
            line_start = text.rfind("\n", 0, start) + 1
            # the pattern's "^" cannot match before pos, so neither can its span start there
            if line_start >= pos and not text[line_start:start].strip(_BLANKS):
                return line_start, end
        if at_line_end:
            after = end
            while after < len(text) and text[after] in _BLANKS:
                after += 1
            if after == len(text) or text[after] == "\n":
                return start, after
        scan = start + 1
    return None

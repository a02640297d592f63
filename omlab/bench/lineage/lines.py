"""Observation lines and how much of a text a line carries: the matching rules of the lineage.

A log is cut into its *lines*: every bullet or sub-bullet line, stripped. Structure is not a line
(``Date:`` headers, ``<observations>``/``<thread>``/``<observation-group>`` tags, message
boundaries, blank lines). A line's *words* are its lower-cased alphanumeric words without the
observation prefix (bullet, priority emoji, ``(HH:MM)`` time), stop-words and the words every
observer writes (``user``, ``stated``, ``asked``, ``assistant``…), so two lines share words only
when they share content.

Two rules decide, by content, where evidence went:

* a line **comes from** a message when at least :data:`FROM_MESSAGE_SHARE` of the line's words are
  words of the message (extractive and abstractive observers both write lines made of the
  message's words; the rest of the line is the observer's own framing);
* a line of a new generation **carries** a tracked line when it keeps at least
  :data:`CARRIES_SHARE` of the tracked line's words (a reflection that condenses, rewrites or
  merges a line keeps most of what it said; one that drops the fact does not).

Word sets are cached per line text: a long run repeats the same lines in every generation. A
generation's word index is built only for the words of the lines looked up in it, in one pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

FROM_MESSAGE_SHARE = 0.5
CARRIES_SHARE = 0.5

_STRUCTURE_STARTS = frozenset("dD<-")  # the first characters _STRUCTURE_RE can match
_STRUCTURE_RE = re.compile(
    r"^(?:date:|</?observations>|</?thread\b|</?observation-group\b|--- message boundary|</?current-task>"
    r"|</?suggested-response>|</?thread-title>)",
    re.IGNORECASE,
)
_PREFIX_RE = re.compile(r"^\s*(?:[*\-•]|\d+[.)])?\s*(?:🔴|🟡|🟢|✅)?\uFE0F?\s*(?:\(\d{1,2}:\d{2}(?:\s?[AaPp][Mm])?\))?")
_WORD_RE = re.compile(r"[a-z0-9]+")
_STOPWORD_TEXT = (
    "a an the and or of to in on at for with by from that this is are was were be been being it its as "
    "i me my we our you your he him his she her they them their theirs there here what which who whom "
    "these those am have has had do does did but if because until while about into through during "
    "before after above below up down out off over under again then once when where why how all any "
    "both each few more most other some such no nor not only own same so than too very s t can will "
    "just don should now also would could im ive id user users stated states said asked asks assistant "
    "replied suggested recommended wants needs plans is looking meaning estimated"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_cache: dict[str, frozenset[str]] = {}
_CACHE_LIMIT = 500_000


def log_lines(text: str | None) -> list[str]:
    """The observation lines of a log or of a cycle's output, in order (see the module docstring)."""
    if not text:
        return []
    stripped = [raw.strip() for raw in text.split("\n")]
    return [line for line in stripped if line and (line[0] not in _STRUCTURE_STARTS or not _STRUCTURE_RE.match(line))]


def words(text: str) -> frozenset[str]:
    """The content words of a line or message (see the module docstring), cached."""
    found = _cache.get(text)
    if found is None:
        body = _PREFIX_RE.sub("", text, count=1).lower()
        found = frozenset(_WORD_RE.findall(body)) - _STOPWORDS
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        _cache[text] = found
    return found


def lines_from_message(lines: Iterable[str], message_words: frozenset[str]) -> list[str]:
    """The lines that come from a message with these words (rule in the module docstring)."""
    picked = []
    for line in lines:
        line_words = words(line)
        if line_words and len(line_words & message_words) >= FROM_MESSAGE_SHARE * len(line_words):
            picked.append(line)
    return picked


def coverage(message_words: frozenset[str], lines: Iterable[str]) -> float:
    """Share of a message's words that the lines still hold (1.0 for a message without words)."""
    if not message_words:
        return 1.0
    held: set[str] = set()
    for line in lines:
        held |= words(line)
    return len(message_words & held) / len(message_words)


class Generation:
    """The lines of one generation of the log."""

    __slots__ = ("line_set", "lines")

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.line_set = frozenset(lines)

    def carriers(self, tracked: str) -> list[str]:
        """The line itself when it is still there, else the lines that carry it (best first)."""
        return self.carriers_of([tracked])[tracked]

    def carriers_of(self, tracked: Iterable[str]) -> dict[str, list[str]]:
        """:meth:`carriers` of each tracked line. The lines no longer there are looked up in an
        index of this generation's lines under the words of those lines (and no other word)."""
        found: dict[str, list[str]] = {}
        rewritten: list[str] = []
        for line in tracked:
            if line in found:
                continue
            found[line] = [line] if line in self.line_set else []
            if not found[line] and words(line):
                rewritten.append(line)
        if not rewritten:
            return found
        wanted = frozenset().union(*(words(line) for line in rewritten))
        # A line's words are runs of [a-z0-9] in its lower-cased text, so a line whose lower-cased
        # text does not contain one of the wanted words has none of them: most lines are passed
        # over without computing their words.
        holds_one = re.compile("|".join(sorted(wanted))).search
        index: dict[str, list[str]] = {}
        for line in self.line_set:
            if holds_one(line.lower()):
                for word in words(line) & wanted:
                    index.setdefault(word, []).append(line)
        for tracked_line in rewritten:
            tracked_words = words(tracked_line)
            shared: dict[str, int] = {}
            for word in tracked_words:
                for line in index.get(word, ()):
                    shared[line] = shared.get(line, 0) + 1
            needed = CARRIES_SHARE * len(tracked_words)
            best = [line for line, count in shared.items() if count >= needed]
            found[tracked_line] = sorted(best, key=lambda line: (-shared[line], line))[:1]
        return found

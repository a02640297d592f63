"""``omlab/reflector``: a deterministic condensing reflector (a baseline, not a language model).

It parses the observation log (threads → date groups → bullets with their sub-bullets), merges
duplicate lines, and then condenses the oldest, lowest-priority lines first until the output is
under the token target named in the request. The exact ladder is in ``README.md`` beside this
module. Token counts use the tokenx estimate, which is additive over lines, so every step updates
a running total instead of recounting the whole log.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from operator import attrgetter

from omlab.llm.offline.base import OfflineResult, message_text
from omlab.llm.offline.date_phrases import MONTH_ABBREVIATIONS
from omlab.llm.offline.memo import line_memo
from omlab.llm.offline.observer import observation_key
from omlab.llm.types import ChatMessage
from omlab.tokens.tokenx import estimate_line_cached
from omlab.tokens.tokenx import estimate_token_count_cached as estimate_token_count

OBSERVATIONS_HEADER = "## OBSERVATIONS TO REFLECT ON"
TARGET_HEADER = "## COMPRESSION TARGET"
DEFAULT_TARGET_RATIO = 0.75
PROTECTED_FRACTION = 0.25
SHORT_WORDS = 12
FLOOR_WORDS = 8

_RANKS = {"🟢": 0, "🟡": 1, "🔴": 2, "✅": 3}
_BY_AGE = attrgetter("day", "position")
_LINE_RE = re.compile(
    r"^(?P<head>\s*(?:[*\-•]|\d+[.)])?\s*(?:(?P<emoji>🔴|🟡|🟢|✅)\uFE0F?\s*)?"
    r"(?:\(\d{1,2}:\d{2}(?:\s?[AaPp][Mm])?\)\s*)?)(?P<body>.*)$"
)
_DATE_LINE_RE = re.compile(r"^Date:\s*(?P<mon>[A-Z][a-z]{2})[a-z]*\.? (?P<day>\d{1,2}),? (?P<year>\d{4})\s*$")
_THREAD_OPEN_RE = re.compile(r"""^\s*<thread id=["'](?P<id>[^"']*)["'][^>]*>\s*$""")
_SKIPPED_LINE_RE = re.compile(r"^\s*(?:</?observations>|</?observation-group\b[^>]*>|--- message boundary .* ---)\s*$")
_HINT_BLOCK_RE = re.compile(
    r"^\s*<(current-task|suggested-response|thread-title)>.*?</\1>\s*$", re.DOTALL | re.MULTILINE
)
_TARGET_RE = re.compile(r"\bunder\s+(?P<n>\d[\d,]*)\s+tokens", re.IGNORECASE)
_ANNOTATION_RE = re.compile(r"\s*\((?:meaning|estimated) [^()]*\)")
# fmt: off
_STOPWORDS = frozenset({
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with", "by", "from", "that",
    "this", "is", "are", "was", "were", "be", "been", "it", "its", "as", "their", "they", "them",
    "user", "users", "stated", "said", "has", "have", "had"
})
# fmt: on


@dataclass(frozen=True, slots=True)
class ReflectorRequest:
    """What the offline reflector reads from the engine's user message."""

    observations: str
    target_tokens: int | None
    """``None`` when the request names no target."""


def parse_reflector_request(text: str) -> ReflectorRequest:
    """Parse the Reflector user message.

    Raises:
        ValueError: the ``## OBSERVATIONS TO REFLECT ON`` section is missing.
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == OBSERVATIONS_HEADER), None)
    if start is None:
        raise ValueError(f"reflector input has no '{OBSERVATIONS_HEADER}' section")
    rest = lines[start + 1 :]
    stop = next((i for i, line in enumerate(rest) if line.startswith("## ")), len(rest))
    rules = [i for i in range(stop) if rest[i].strip() == "---"]
    observations = "\n".join(rest[: rules[-1] if rules else stop]).strip()
    section = next((i for i, line in enumerate(rest) if line.strip() == TARGET_HEADER), None)
    tail_start = section if section is not None else (rules[-1] if rules else stop)
    target = _TARGET_RE.search("\n".join(rest[tail_start:]))
    return ReflectorRequest(observations, int(target["n"].replace(",", "")) if target else None)


class OfflineReflector:
    """The condensing reflector addressable as ``omlab/reflector``."""

    name = "reflector"

    def generate(
        self,
        messages: list[ChatMessage],
        *,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
    ) -> OfflineResult:
        """Reflect the observations in the (last) user message; ``max_output_tokens`` caps the
        target, ``temperature`` is ignored (the output is deterministic)."""
        user_texts = [message_text(m) for m in messages if m.get("role") == "user"]
        if not user_texts:
            raise ValueError("reflector request has no user message")
        request = parse_reflector_request(user_texts[-1])
        target = request.target_tokens
        if target is None:
            target = round(DEFAULT_TARGET_RATIO * estimate_token_count(request.observations))
        if max_output_tokens is not None:
            target = min(target, max_output_tokens + 1)
        text = reflect(request.observations, target)
        input_tokens = sum(estimate_token_count(message_text(m)) for m in messages)
        return OfflineResult(text, input_tokens, estimate_token_count(text))


def reflect(observations: str, target_tokens: int) -> str:
    """``<observations>…</observations>`` with fewer than ``target_tokens`` tokens when possible."""
    log = _ObservationLog.parse(observations)
    try:
        goal = target_tokens
        for _ in range(3):
            _condense(log, goal)
            text = log.render()
            excess = estimate_token_count(text) - (target_tokens - 1)
            if excess <= 0 or log.total >= goal:  # on target, or at the floor where nothing more helps
                break
            # Only a non-additive token estimator gets here: aim lower by what the tally missed.
            goal = log.total - excess
        return text
    finally:
        log.dispose()


# --- the parsed log -----------------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class _Item:
    head: str
    body: str
    children: tuple[str, ...]  # a tuple: most items have none, and () costs no allocation
    rank: int
    position: int
    group: _Group
    key: str  # observation_key of the line as parsed
    words: tuple[str, ...]  # its content words, sorted (see _content_words)
    day: int  # the group's day ordinal
    tokens: int = 0
    alive: bool = True
    protected: bool = False

    def lines(self) -> list[str]:
        return [self.head + self.body, *self.children]


@dataclass(eq=False, slots=True)
class _Group:
    header: str | None
    day: int
    section: _Section
    items: list[_Item] = field(default_factory=list)
    alive: int = 0


@dataclass(eq=False, slots=True)
class _Section:
    thread_id: str | None
    open_line: str | None
    groups: dict[str | None, _Group] = field(default_factory=dict)
    alive: int = 0


class _ObservationLog:
    """Sections, groups and items, with a running token total of the rendered output."""

    def __init__(self) -> None:
        self.sections: dict[str | None, _Section] = {None: _Section(None, None)}
        self.items: list[_Item] = []
        self.total = _tokens("<observations>") + _tokens("</observations>")

    @classmethod
    def parse(cls, text: str) -> _ObservationLog:
        log = cls()
        section = log.sections[None]
        group: _Group | None = None
        last_day = 0
        for raw in _HINT_BLOCK_RE.sub("", text).splitlines():
            kind, line, value = _line_kind(raw)
            if kind is _SKIP:
                continue
            if kind is _OPEN:
                section = log.sections.setdefault(value, _Section(value, line))
                group = None
                continue
            if kind is _CLOSE:
                section, group = log.sections[None], None
                continue
            if kind is _DATE:
                last_day = value or last_day
                group = section.groups.setdefault(line, _Group(line, last_day, section))
                continue
            if group is None:
                group = section.groups.setdefault(None, _Group(None, last_day, section))
            if value and group.items:  # an indented line is a sub-bullet of the item above
                group.items[-1].children += (line,)
                continue
            head, body, rank, key, words = _item_line(line)
            group.items.append(_Item(head, body, (), rank, len(log.items), group, key, words, group.day))
            log.items.append(group.items[-1])
        log._merge_duplicates()
        for item in log.items:
            if item.alive:
                log._attach(item)
        return log

    def dispose(self) -> None:
        """Break the item ↔ group ↔ section reference cycles, so the parsed log is freed at once
        instead of surviving into the oldest garbage-collector generation (on a long replay
        those survivors triggered most of the full collections)."""
        for section in self.sections.values():
            for group in section.groups.values():
                group.items.clear()
            section.groups.clear()
        self.items.clear()

    def render(self) -> str:
        out = ["<observations>"]
        for section in self.sections.values():
            if section.alive == 0:
                continue
            if section.open_line is not None:
                out.append(section.open_line)
            for group in section.groups.values():
                if group.alive == 0:
                    continue
                if group.header is not None:
                    out.append(group.header)
                for item in group.items:
                    if item.alive:
                        out += item.lines()
            if section.open_line is not None:
                out.append("</thread>")
        out.append("</observations>")
        return "\n".join(out)

    def drop(self, item: _Item) -> None:
        item.alive = False
        self.total -= item.tokens
        item.group.alive -= 1
        if item.group.alive == 0:
            self.total -= _tokens(item.group.header)
            item.group.section.alive -= 1
            if item.group.section.alive == 0:
                self.total -= _section_tokens(item.group.section)

    def rewrite(self, item: _Item, body: str, children: tuple[str, ...]) -> None:
        item.body, item.children = body, children
        tokens = sum(map(estimate_line_cached, item.lines()))
        self.total += tokens - item.tokens
        item.tokens = tokens

    def _attach(self, item: _Item) -> None:
        item.tokens = sum(map(estimate_line_cached, item.lines()))
        self.total += item.tokens
        item.group.alive += 1
        if item.group.alive == 1:
            self.total += _tokens(item.group.header)
            item.group.section.alive += 1
            if item.group.section.alive == 1:
                self.total += _section_tokens(item.group.section)

    def _merge_duplicates(self) -> None:
        """Exact duplicates keep the first line; lines with the same content words keep the first
        position with the newest wording. Children are merged, the higher priority wins."""
        exact: dict[tuple[str | None, str], _Item] = {}
        loose: dict[tuple[str | None, tuple[str, ...]], _Item] = {}
        for item in self.items:
            key, words = item.key, item.words
            if not key:
                continue
            section = item.group.section.thread_id
            first = exact.get((section, key))
            if first is None and len(words) >= 3:
                first = loose.get((section, words))
                if first is not None:
                    first.body = item.body
            if first is None:
                exact[(section, key)] = item
                if len(words) >= 3:
                    loose.setdefault((section, words), item)
                continue
            item.alive = False
            known = {observation_key(child) for child in first.children}
            first.children += tuple(c for c in item.children if observation_key(c) not in known)
            if item.rank > first.rank:
                first.rank = item.rank
                first.head = re.sub("🔴|🟡|🟢|✅", _emoji(item.rank), first.head, count=1)


# --- the condensing ladder ------------------------------------------------------------------------


def _condense(log: _ObservationLog, target: int) -> None:
    """Condense ``log`` in place until ``log.total < target`` or nothing more can be done."""
    alive = [item for item in log.items if item.alive]
    by_age = sorted(alive, key=_BY_AGE)
    for item in by_age[len(by_age) - math.ceil(PROTECTED_FRACTION * len(by_age)) :]:
        item.protected = True
    older = [item for item in by_age if not item.protected]
    effective = {item: _effective_rank(item) for item in by_age}  # fixed while condensing

    def over() -> bool:
        return log.total >= target

    for region in (older, by_age):
        # Ranks stay fixed while condensing, so each step visits only the lines it can change
        # (the others are no-ops, and the total never grows, so skipping them changes nothing).
        by_rank: dict[int, list[_Item]] = {rank: [] for rank in _RANKS.values()}
        effective_yellow: list[_Item] = []
        for item in region:
            by_rank[item.rank].append(item)
            if effective[item] == 1:
                effective_yellow.append(item)
        for step, rank in _LADDER:
            for item in effective_yellow if step is _drop_yellow else by_rank[rank]:
                if not over():
                    return
                if item.alive:
                    step(log, item)
    # Last resort: drop lines by priority then age, but keep one line per date group.
    for item in sorted(by_age, key=lambda it: (it.protected, effective[it], it.day, it.position)):
        if not over():
            return
        if item.alive and item.group.alive > 1:
            log.drop(item)
    for item in by_age:
        if not over():
            return
        if item.alive:
            log.rewrite(item, _first_clause(item.body, FLOOR_WORDS), ())


def _drop_green(log: _ObservationLog, item: _Item) -> None:
    if item.rank == 0:
        log.drop(item)


def _collapse_yellow(log: _ObservationLog, item: _Item) -> None:
    if item.rank == 1 and item.children:
        log.rewrite(item, item.body, tuple(c for c in item.children if "✅" in c))


def _shorten_yellow(log: _ObservationLog, item: _Item) -> None:
    if item.rank == 1:
        _shorten(log, item)


def _drop_yellow(log: _ObservationLog, item: _Item) -> None:
    if _effective_rank(item) == 1:
        log.drop(item)


def _shorten_red(log: _ObservationLog, item: _Item) -> None:
    if item.rank == 2:
        kept = tuple(c for c in item.children if "✅" in c)
        if len(kept) < len(item.children):
            log.rewrite(item, item.body, kept)
        _shorten(log, item)


def _shorten_done(log: _ObservationLog, item: _Item) -> None:
    if item.rank == 3:
        _shorten(log, item)


_LADDER: tuple[tuple[Callable[[_ObservationLog, _Item], None], int], ...] = (
    (_drop_green, 0),
    (_collapse_yellow, 1),
    (_shorten_yellow, 1),
    (_drop_yellow, 1),  # by effective rank: a line with a ✅ sub-bullet is not dropped here
    (_shorten_red, 2),
    (_shorten_done, 3),
)
"""The condensing steps in order, each with the priority rank of the lines it applies to."""


def _effective_rank(item: _Item) -> int:
    """A line that carries a ✅ sub-bullet is kept like a ✅ line."""
    return 3 if any("✅" in child for child in item.children) else item.rank


def _shorten(log: _ObservationLog, item: _Item) -> None:
    short = _shortened(item.body)
    if short is not None:
        log.rewrite(item, short, item.children)


@line_memo
def _shortened(body: str) -> str | None:
    """The first clause of ``body`` when it costs fewer tokens than ``body``, else None."""
    short = _first_clause(body, SHORT_WORDS)
    return short if _tokens(short) < _tokens(body) else None


@line_memo
def _first_clause(body: str, max_words: int) -> str:
    """The first clause of ``body`` (at most ``max_words`` words), keeping resolved-date notes."""
    annotations = "".join(match.group(0) for match in _ANNOTATION_RE.finditer(body))
    words = _ANNOTATION_RE.sub("", body).split()
    cut = len(words)
    for index, word in enumerate(words):
        if index >= 3 and word.endswith((".", ";", "!", "?", ",", ":")):
            cut = index + 1
            break
        if index >= 4 and word in ("—", "–", "-", "…"):
            cut = index
            break
    cut = min(cut, max_words)
    short = " ".join(words[:cut]).rstrip(",;:—–-")
    if cut < len(words):
        short += " …"
    return short + annotations


# --- small helpers ------------------------------------------------------------------------------


_SKIP, _OPEN, _CLOSE, _DATE, _TEXT = "skip", "open", "close", "date", "text"


@line_memo
def _line_kind(raw: str) -> tuple[str, str, object]:
    """What one input line is: ``(kind, line, value)``.

    Kinds: skip (blank or scaffolding); open (a ``<thread id>`` tag; value is the id); close;
    date (a ``Date:`` header, stripped; value is its day ordinal, 0 when unreadable); text (an
    observation line, right-stripped; value tells whether it is indented).
    """
    line = raw.rstrip()
    stripped = line.strip()
    if not stripped or _SKIPPED_LINE_RE.match(line):
        return _SKIP, "", None
    opened = _THREAD_OPEN_RE.match(line)
    if opened is not None:
        return _OPEN, stripped, opened["id"]
    if stripped == "</thread>":
        return _CLOSE, "", None
    dated = _DATE_LINE_RE.match(stripped)
    if dated is not None or line.startswith("Date:"):
        return _DATE, stripped, _day_ordinal(dated)
    return _TEXT, line, line[:1].isspace()


def _content_words(key: str) -> tuple[str, ...]:
    """The distinct words of an observation key that say something (stopwords left out), sorted.

    A sorted tuple compares like the set it stands for, and unlike a frozenset it holds no
    container the garbage collector must track: the memo keeps one per log line, and thousands
    of tracked entries made full collections in the engine's process (issue 20)."""
    return tuple(sorted(set(key.split()) - _STOPWORDS))


@line_memo
def _item_line(line: str) -> tuple[str, str, int, str, tuple[str, ...]]:
    """What parsing needs of one observation line: head (bullet, emoji and time), body, priority
    rank, comparison key and content words."""
    match = _LINE_RE.match(line)
    assert match is not None  # the pattern accepts every line
    key = observation_key(line)
    return match["head"], match["body"], _RANKS.get(match["emoji"] or "", 1), key, _content_words(key)


def _tokens(line: str | None) -> int:
    """Tokens of one line (observation lines never hold a newline)."""
    return estimate_line_cached(line) if line else 0


def _section_tokens(section: _Section) -> int:
    return _tokens(section.open_line) + _tokens("</thread>") if section.open_line is not None else 0


def _emoji(rank: int) -> str:
    return next(emoji for emoji, value in _RANKS.items() if value == rank)


def _day_ordinal(match: re.Match[str] | None) -> int:
    if match is None or match["mon"] not in MONTH_ABBREVIATIONS:
        return 0
    try:
        return date(int(match["year"]), MONTH_ABBREVIATIONS.index(match["mon"]) + 1, int(match["day"])).toordinal()
    except ValueError:
        return 0

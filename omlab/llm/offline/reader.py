"""``omlab/reader``: a deterministic retrieval-based answerer (a baseline, not a language model).

It answers the question in the last user message from the memory context given before it: it
cuts the context into snippets (observation lines, sentences of raw messages), ranks them by
BM25 keyword overlap with the question, prefers the newest of the near-best snippets (knowledge
updates), and pulls a short answer out of the winner by the kind of question (a number, a date,
a name, a place, or the snippet itself). When no snippet covers enough of the question it answers
:data:`ABSTENTION_ANSWER`. The algorithm and its limits are in ``README.md`` beside this module.

The request is read in :mod:`~omlab.llm.offline.reader_request`, snippets ranked in
:mod:`~omlab.llm.offline.reader_ranking`, words normalised in :mod:`~omlab.llm.offline.text_terms`
(shared with the offline judge); this module pulls the answer out of the best snippets.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date

from omlab.llm.offline.base import OfflineResult, message_text
from omlab.llm.offline.reader_ranking import Ranked, best_snippets, rank_snippets
from omlab.llm.offline.reader_request import ReaderRequest, Snippet, parse_reader_request
from omlab.llm.offline.text_terms import (
    MONTH_DAY_RE,
    MONTHS,
    NUMBER_WORDS,
    STOPWORDS,
    WEEKDAYS,
    find_dates,
    format_date,
    normalise_tokens,
    parse_date,
    stem,
)
from omlab.llm.types import ChatMessage
from omlab.tokens.tokenx import estimate_token_count_cached as estimate_token_count

ABSTENTION_ANSWER = "I don't know: that is not mentioned in the conversation history."


# --- answering ------------------------------------------------------------------------------------

_ANNOTATION_RE = re.compile(r"\s*\((?P<kind>meaning|estimated)\s+(?P<what>[^()]*?)(?:\s+-\s+[^()]*)?\)", re.IGNORECASE)
_LEAD_RE = re.compile(
    r"^(?:User|Assistant)\s+(?:stated|said|mentioned|noted|explained|shared|reported|confirmed|asked|replied|"
    r"recommended|suggested)(?:\s+that)?[:,]?\s+",
    re.IGNORECASE,
)
_AGO_RE = re.compile(r"\bhow (?:many (?P<unit>days|weeks|months|years)|long)\b.*\bago\b", re.IGNORECASE)
_COUNT_RE = re.compile(
    r"^\s*(?:how (?:many|much|long|old|far|often)\b|what (?:is|was) the (?:number|total|amount|price|cost)\b)",
    re.IGNORECASE,
)
_WHEN_RE = re.compile(r"^\s*(?:when\b|(?:what|which) (?:date|day|month|year)\b|on what (?:date|day)\b)", re.IGNORECASE)
_WHO_RE = re.compile(r"^\s*(?:who|whom|whose)\b|\bnamed?\b", re.IGNORECASE)
_WHERE_RE = re.compile(
    r"^\s*(?:where\b|(?:what|which) (?:city|country|place|town|state|restaurant|store|shop|venue|school|university)\b)",
    re.IGNORECASE,
)
_NUMBER_SPAN_RE = re.compile(
    r"(?P<num>[$€£]?\d+(?:,\d{3})*(?:\.\d+)?%?|\b(?:" + "|".join(NUMBER_WORDS) + r")\b)"
    r"(?:[- ](?P<unit>(?!(?:and|or|of|the|to|in|on|at|for|with)\b)[A-Za-z]+))?",
    re.IGNORECASE,
)
_CAPITALISED_RE = re.compile(r"\b[A-Z][\w'’&.-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w'’&.-]*)*")
_NOT_NAMES = frozenset({"user", "assistant", "i", "i'm", "i've", "i'd", "i'll", "the", "a", "an", "they", "their",
                        "he", "she", "we", "it", "my", "this", "that", "date", *MONTHS, *WEEKDAYS})  # fmt: skip
_PLACE_PREPOSITION_RE = re.compile(r"\b(?:in|at|to|from|near|into|around|visit(?:ed|ing)?)\s+$", re.IGNORECASE)
_QUOTE_RE = re.compile(r"[\"“](?P<q>[^\"”]{2,120})[\"”]")


def answer_question(request: ReaderRequest) -> str:
    """The answer text for a parsed request (:data:`ABSTENTION_ANSWER` when nothing fits).

    The newest near-best snippet that holds an answer of the asked kind wins; when none does,
    the newest near-best snippet is the answer."""
    candidates = best_snippets(request.question, rank_snippets(request.question, request.snippets))
    if not candidates:
        return ABSTENTION_ANSWER
    extract = _extractor(request)
    for candidate in candidates:
        span = extract(candidate) if extract is not None else None
        if span:
            return span
    return _plain(candidates[0].snippet.text)


def _extractor(request: ReaderRequest) -> Callable[[Ranked], str | None] | None:
    """How to pull a short answer of the asked kind out of a snippet (None: the whole snippet)."""
    question = request.question
    today = request.current_date
    if _AGO_RE.search(question) and today is not None:
        return lambda r: _elapsed(question, r.snippet, today)
    if _WHEN_RE.search(question):
        return lambda r: _event_date_text(r.snippet)
    if _COUNT_RE.search(question):
        return lambda r: _number_span(r.snippet.text, r.matched)
    if _WHO_RE.search(question):
        return lambda r: _name_span(r.snippet.text, question, places=False)
    if _WHERE_RE.search(question):
        return lambda r: _name_span(r.snippet.text, question, places=True)
    if re.match(r"^\s*(?:what|which)\b", question, re.IGNORECASE):
        return lambda r: m.group("q").strip() if (m := _QUOTE_RE.search(r.snippet.text)) else None
    return None


def _plain(text: str) -> str:
    """The snippet without observation boilerplate: no date notes, no "User stated" lead-in."""
    cleaned = _ANNOTATION_RE.sub("", text).strip()
    cleaned = _LEAD_RE.sub("", cleaned)
    return cleaned[:1].upper() + cleaned[1:] if cleaned else text.strip()


def _event_date(snippet: Snippet) -> date | None:
    for match in _ANNOTATION_RE.finditer(snippet.text):
        found = parse_date(match.group("what"))
        if found is not None:
            return found
    found = parse_date(snippet.text)
    return found if found is not None else snippet.day


def _event_date_text(snippet: Snippet) -> str | None:
    for match in _ANNOTATION_RE.finditer(snippet.text):
        what = match.group("what").strip()
        if what:
            return what
    dates = find_dates(snippet.text)
    if dates:
        return dates[0][0].group(0)
    month_day = MONTH_DAY_RE.search(_ANNOTATION_RE.sub("", snippet.text))
    if month_day:
        return month_day.group(0)
    return format_date(snippet.day) if snippet.day is not None else None


def _elapsed(question: str, snippet: Snippet, today: date) -> str | None:
    event = _event_date(snippet)
    if event is None or event > today:
        return None
    days = (today - event).days
    unit = (_AGO_RE.search(question).group("unit") or "days").lower()  # type: ignore[union-attr]
    size = {"days": 1, "weeks": 7, "months": 30.4375, "years": 365.25}[unit]
    count = round(days / size)
    return f"{count} {unit[:-1] if count == 1 else unit}"


def _number_span(text: str, matched: Sequence[str]) -> str | None:
    """The number (with its unit word) nearest to the question's terms in ``text``.

    Years and numbers the question itself contains ("the 10K") are not answers."""
    plain = _ANNOTATION_RE.sub("", text)
    spans = [
        m
        for m in _NUMBER_SPAN_RE.finditer(plain)
        if not re.fullmatch(r"(?:19|20)\d\d", m.group("num"))
        and not any(stem(t) in matched for t in normalise_tokens(m.group("num")))
    ]
    if not spans:
        return None
    anchors = [m.start() for m in re.finditer(r"[^\W_]+", plain) if stem(normalise_tokens(m.group())[0]) in matched]

    def distance(span: re.Match[str]) -> tuple[int, int]:
        return min((abs(span.start() - a) for a in anchors), default=0), span.start()

    best = min(spans, key=distance)
    unit = best.group("unit")
    number = best.group("num")
    return f"{number} {unit}" if unit and unit.lower() not in STOPWORDS else number


_NAME_LIST_GLUE_RE = re.compile(r"\s*(?:,\s*and|,|and|&)\s*")


def _name_span(text: str, question: str, *, places: bool) -> str | None:
    """A capitalised name in ``text`` that the question does not already contain; for people, a
    list of names ("Emma and Leo") is kept whole."""
    plain = _LEAD_RE.sub("", _ANNOTATION_RE.sub("", text))
    asked = set(normalise_tokens(question))
    names: list[tuple[int, int, int]] = []  # (rank, start, end)
    for match in _CAPITALISED_RE.finditer(plain):
        words = [w for w in match.group().split() if w.lower().strip(".'’") not in _NOT_NAMES]
        name = " ".join(words).strip(" .,;:'’")
        if not name or all(t in asked for t in normalise_tokens(name)):
            continue
        start = match.start() + match.group().find(words[0])
        end = start + len(name) if plain[start : start + len(name)] == name else match.end()
        starts_sentence = start == 0 or plain[:start].rstrip().endswith((".", "!", "?", ":"))
        after_preposition = bool(_PLACE_PREPOSITION_RE.search(plain[:start]))
        rank = 0 if (after_preposition if places else not starts_sentence) else 1
        names.append((rank, start, end))
    if not names:
        return None
    first = min(names)
    if places:
        return plain[first[1] : first[2]]
    end = first[2]
    for _, start, stop in sorted(n for n in names if n[1] > first[1]):
        if not _NAME_LIST_GLUE_RE.fullmatch(plain[end:start]):
            break
        end = stop
    return plain[first[1] : end]


# --- the model ------------------------------------------------------------------------------------


class OfflineReader:
    """The retrieval-based answerer addressable as ``omlab/reader``."""

    name = "reader"

    def generate(
        self,
        messages: list[ChatMessage],
        *,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
    ) -> OfflineResult:
        """Answer the last user message from the context before it. ``temperature`` and
        ``max_output_tokens`` are accepted for interface parity and ignored (answers are short)."""
        text = answer_question(parse_reader_request(messages))
        input_tokens = sum(estimate_token_count(message_text(m)) for m in messages)
        return OfflineResult(text, input_tokens, estimate_token_count(text))


__all__ = ["ABSTENTION_ANSWER", "OfflineReader", "answer_question"]

"""``omlab/reader``: a deterministic retrieval-based answerer (a baseline, not a language model).

It answers the question in the last user message from the memory context given before it: it
cuts the context into snippets (observation lines, sentences of raw messages), ranks them by
BM25 keyword overlap with the question, prefers the newest of the near-best snippets (knowledge
updates), and pulls a short answer out of the winner by the kind of question (a number, a date,
a name, a place, or the snippet itself). When no snippet covers enough of the question it answers
:data:`ABSTENTION_ANSWER`. The algorithm and its limits are in ``README.md`` beside this module.

The small text normaliser here (:func:`normalise_tokens`, :func:`stem`, :func:`content_terms`) is
shared with the offline judge; ``omlab.llm`` must not import the benchmark's scorers.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date

from omlab.llm.offline.base import OfflineResult, message_text
from omlab.llm.types import ChatMessage
from omlab.tokens.tokenx import estimate_token_count_cached as estimate_token_count

ABSTENTION_ANSWER = "I don't know: that is not mentioned in the conversation history."

MIN_COVERAGE = 0.5
"""Share of the question's (IDF-weighted) terms a snippet must contain to answer from it…"""
MIN_TOPIC_COVERAGE = 0.25
"""…or this share, when it contains every *topic* term (the word after "my", "the", "what"…)."""
TIE_BAND = 0.7
"""Snippets scoring at least this share of the best one, with the same coverage, count as ties."""
CURRENT_TIE_BAND = 0.5
"""The wider band used for questions about the current state ("now", "currently", "latest"…)."""
BM25_K1 = 1.2
BM25_B = 0.75

# --- the normaliser -----------------------------------------------------------------------------

_STOPWORD_TEXT = """
a an the and or but if of at by for with about to from in on off into onto over under up down out
is am are was were be been being have has had having do does did doing done will would shall should
can could may might must i me my mine myself we us our ours you your yours he him his she her hers
it its they them their theirs this that these those there here what which who whom whose when where
why how all any both each few more most other some such no nor not only own same so than too very
just also as then once again s t d ll m re ve im ive id youre dont didnt doesnt isnt wasnt
user users assistant stated said says tell told remind remember mentioned mention know
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
# Words that frame a question ("how many … ago") rather than name what it is about.
_FRAME_TEXT = (
    "many much long often ago ever exactly approximately roughly total number kind type sort please "
    "go goes went gone get got take took taken"
)
QUESTION_FRAME_WORDS: frozenset[str] = frozenset(_FRAME_TEXT.split())
# A few common irregular verbs, so that "ran" meets "run" and "bought" meets "buy".
_IRREGULAR = {
    "ran": "run", "went": "go", "gone": "go", "bought": "buy", "got": "get", "gotten": "get",
    "took": "take", "taken": "take", "made": "make", "met": "meet", "saw": "see", "seen": "see",
    "gave": "give", "given": "give", "paid": "pay", "felt": "feel", "left": "leave", "found": "find",
    "spent": "spend", "sold": "sell", "thought": "think", "brought": "bring", "began": "begin",
    "begun": "begin", "ate": "eat", "eaten": "eat", "wrote": "write", "written": "write", "drove": "drive",
    "driven": "drive", "flew": "fly", "flown": "fly", "won": "win", "lost": "lose", "kept": "keep",
    "built": "build", "taught": "teach", "caught": "catch", "sent": "send", "swam": "swim", "sang": "sing",
    "chose": "choose", "chosen": "choose", "grew": "grow", "grown": "grow", "knew": "know", "wore": "wear",
    "children": "child", "people": "person", "women": "woman", "men": "man", "feet": "foot",
}  # fmt: skip

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")  # fmt: skip
_MONTH_BY_PREFIX = {m[:3]: i + 1 for i, m in enumerate(_MONTHS)} | {"sept": 9}
_MONTH_ABBREVIATIONS = {m[:3]: m for m in _MONTHS} | {"sept": "september"}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_TOKEN_RE = re.compile(
    r"[0-9]+(?:,[0-9]{3})+(?:\.[0-9]+)?(?![0-9])|[0-9]+(?:\.[0-9]+)?(?:st|nd|rd|th)?|[^\W0-9_]+(?:['’][^\W0-9_]+)*"
)
_COMPOUND_NUMBER_RE = re.compile(r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ](one|two|three|"
                                 r"four|five|six|seven|eight|nine)\b", re.IGNORECASE)  # fmt: skip


def normalise_tokens(text: str) -> list[str]:
    """Case-folded words and numbers: ``"$1,200"`` → ``1200``, ``"3rd"`` → ``3``, ``"three"`` → ``3``,
    ``"twenty-five"`` → ``25``, ``"Nov"`` → ``november``, ``"don't"`` → ``dont``."""
    return list(_normalised(text))


@functools.lru_cache(maxsize=65_536)
def _normalised(text: str) -> tuple[str, ...]:
    # memoised: every question of a conversation scans the same memory lines
    text = _COMPOUND_NUMBER_RE.sub(
        lambda m: str(_NUMBER_WORDS[m.group(1).lower()] + _NUMBER_WORDS[m.group(2).lower()]), text
    )
    tokens: list[str] = []
    for raw in _TOKEN_RE.findall(text.casefold()):
        if raw[0] in _ASCII_DIGITS:
            tokens.append(_number_text(raw))
            continue
        word = raw.replace("'", "").replace("’", "")
        if word in _NUMBER_WORDS:
            tokens.append(str(_NUMBER_WORDS[word]))
        else:
            tokens.append(_MONTH_ABBREVIATIONS.get(word, word))
    return tuple(tokens)


_ASCII_DIGITS = frozenset("0123456789")


def _number_text(raw: str) -> str:
    digits = re.sub(r"(st|nd|rd|th)$", "", raw).replace(",", "")
    value = float(digits)
    return str(int(value)) if value.is_integer() else str(value)


def is_number(token: str) -> bool:
    """Whether a token from :func:`normalise_tokens` is a number."""
    return bool(token) and token[0] in _ASCII_DIGITS


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A tiny suffix stripper (plurals, -ed, -ing, final e/y, doubled consonants), so that
    ``kids``/``kid``, ``moved``/``move``/``moving`` and ``cities``/``city`` meet."""
    if word in _IRREGULAR:
        word = _IRREGULAR[word]
    if len(word) <= 3 or not word.isalpha():
        return word
    w = word
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-3] + "i"
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ingly", "edly", "ing", "ed"):
        stem_part = w[: -len(suffix)]
        if w.endswith(suffix) and len(stem_part) >= 3 and any(c in "aeiouy" for c in stem_part):
            w = stem_part
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 2 and w.endswith("y") and w[-2] not in "aeiou":
        w = w[:-1] + "i"
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz" and w[-1].isalpha():
        w = w[:-1]
    return w


def content_terms(text: str) -> list[str]:
    """Stemmed tokens without stop-words, in order (all tokens when only stop-words are left)."""
    tokens = normalise_tokens(text)
    kept = [t for t in tokens if t not in STOPWORDS] or tokens
    return [stem(t) for t in kept]


# --- dates ----------------------------------------------------------------------------------------

_MONTH_RE = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE_PATTERNS = (
    re.compile(rf"\b{_MONTH_RE}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>\d{{4}})\b", re.IGNORECASE),
    re.compile(
        rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_RE},?\s+(?P<year>\d{{4}})\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?P<year>\d{4})[/-](?P<num>\d{1,2})[/-](?P<day>\d{1,2})\b"),
)
_MONTH_DAY_RE = re.compile(rf"\b{_MONTH_RE}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?!,?\s*\d{{4}})", re.IGNORECASE)


def parse_date(text: str) -> date | None:
    """The first full date in ``text``: ``May 8, 2023``, ``8 May 2023``, ``2023/05/30 (Tue) 23:40``,
    ``1:56 pm on 8 May, 2023``, ``2023-05-30``; None when there is none."""
    found = _find_dates(text)
    return found[0][1] if found else None


def _find_dates(text: str) -> list[tuple[re.Match[str], date]]:
    out: list[tuple[re.Match[str], date]] = []
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            groups = match.groupdict()
            month = int(groups["num"]) if groups.get("num") else _MONTH_BY_PREFIX[groups["mon"][:3].lower()]
            try:
                out.append((match, date(int(groups["year"]), month, int(groups["day"]))))
            except ValueError:
                continue
    return sorted(out, key=lambda pair: pair[0].start())


def format_date(day: date) -> str:
    """``May 7, 2023``."""
    return f"{_MONTHS[day.month - 1].capitalize()} {day.day}, {day.year}"


# --- reading the request --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Snippet:
    """One candidate piece of memory. ``position`` grows with recency; ``day`` is its date group."""

    text: str
    position: int
    day: date | None
    source: str  # "observation" | "message" | "system"


@dataclass(frozen=True, slots=True)
class ReaderRequest:
    question: str
    current_date: date | None
    snippets: tuple[Snippet, ...]


_QUESTION_LINE_RE = re.compile(r"^[ \t]*Question:[ \t]*", re.IGNORECASE | re.MULTILINE)
_CURRENT_DATE_RE = re.compile(r"^[ \t]*Current Date:[ \t]*(?P<date>.+)$", re.IGNORECASE | re.MULTILINE)
_TODAY_RE = re.compile(r"today(?:'s date)? is[ \t]*(?P<date>[^\n]+)", re.IGNORECASE)
_OBS_OPEN_RE = re.compile(r"<observations>", re.IGNORECASE)
_OBS_CLOSE_RE = re.compile(r"</observations>", re.IGNORECASE)
_SKIP_BLOCK_RE = re.compile(
    r"<(system-reminder|current-task|suggested-response|thread-title)>.*?(?:</\1>|$)",
    re.IGNORECASE | re.DOTALL,
)
_DATE_HEADER_RE = re.compile(r"^\s*(?:Date|Session Date):\s*(?P<date>.+)$", re.IGNORECASE)
_IGNORED_LINE_RE = re.compile(
    r"^\s*(?:</?thread\b[^>]*>|</?observation-group\b[^>]*>|--- message boundary .* ---|\[[^\]]*\blater\]|"
    r"#+ ?Session \d+:?|Session Content:|History Chats?:?)\s*$",
    re.IGNORECASE,
)
_LINE_PREFIX_RE = re.compile(
    r"^\s*(?:(?:[*\-•]|\d+[.)])\s+)?(?:(?:🔴|🟡|🟢|✅)\ufe0f?\s*)*(?:\(\d{1,2}:\d{2}(?:\s?[AaPp][Mm])?\)\s*)?"
)
_ANSWER_CUE_RE = re.compile(r"\n\s*Answer\b[^\n]*$", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def parse_reader_request(messages: Sequence[ChatMessage]) -> ReaderRequest:
    """The question (last user message), the current date and the memory snippets before it.

    The last user message may be ``Current Date: …`` / ``Question: …`` (anything before the
    ``Question:`` line is context too, as in LongMemEval's full-history prompts). System messages
    that contain an ``<observations>`` block contribute only the lines inside it; without one,
    every system line counts (minus ``<system-reminder>``/``<current-task>``/``<suggested-response>``
    blocks). User and assistant messages contribute their sentences.

    Raises:
        ValueError: no user message, or an empty question.
    """
    last_user = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
    if last_user is None:
        raise ValueError("reader request has no user message (the question goes in the last user message)")
    final = message_text(messages[last_user])
    marks = list(_QUESTION_LINE_RE.finditer(final))
    preamble, question = (final[: marks[-1].start()], final[marks[-1].end() :]) if marks else ("", final)
    question = _ANSWER_CUE_RE.sub("", question).strip()
    if not question:
        raise ValueError("reader request has an empty question in its last user message")
    current = _current_date(final, [message_text(m) for m in messages[:last_user] if m.get("role") == "system"])
    preamble = _CURRENT_DATE_RE.sub("", preamble)

    context: list[ChatMessage] = list(messages[:last_user]) + [{"role": "user", "content": preamble}]
    system_text = "\n".join(message_text(m) for m in context if m.get("role") == "system")
    observations_only = bool(_OBS_OPEN_RE.search(system_text))
    builder = _SnippetBuilder()
    inside = False
    for message in context:
        text = message_text(message)
        if message.get("role") == "system":
            text = _SKIP_BLOCK_RE.sub("", text)
            for line in text.splitlines():
                if _OBS_OPEN_RE.search(line):
                    inside = True
                    line = _OBS_OPEN_RE.split(line, maxsplit=1)[1]
                closes = bool(_OBS_CLOSE_RE.search(line))
                if closes:
                    line = _OBS_CLOSE_RE.split(line, maxsplit=1)[0]
                if inside or not observations_only:
                    builder.add_line(line, "observation" if inside else "system")
                if closes:
                    inside = False
        else:
            builder.add_message(text)
    return ReaderRequest(question, current, tuple(builder.snippets))


def _current_date(final: str, system_texts: list[str]) -> date | None:
    match = _CURRENT_DATE_RE.search(final)
    if match:
        return parse_date(match.group("date"))
    for text in reversed(system_texts):
        today = _TODAY_RE.search(text)
        if today:
            return parse_date(today.group("date"))
    return None


class _SnippetBuilder:
    """Cuts context text into snippets, tracking date headers and position."""

    def __init__(self) -> None:
        self.snippets: list[Snippet] = []
        self.day: date | None = None

    def add_line(self, line: str, source: str) -> None:
        if not line.strip() or _IGNORED_LINE_RE.match(line):
            return
        header = _DATE_HEADER_RE.match(line)
        if header:
            self.day = parse_date(header.group("date")) or self.day
            return
        prefix = _LINE_PREFIX_RE.match(line)
        body = re.sub(r"\s+", " ", line[prefix.end() if prefix else 0 :]).strip()
        if not body:
            return
        if source == "observation":  # one observation line is one fact
            self._add(body, source)
        else:
            for sentence in _sentences(body):
                self._add(sentence, source)

    def add_message(self, text: str) -> None:
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("[") and stripped.endswith("]"):
                turns = _json_turns(stripped)
                if turns is not None:
                    for turn in turns:
                        self.add_message(turn)
                    continue
            self.add_line(line, "message")

    def _add(self, text: str, source: str) -> None:
        if any(ch.isalnum() for ch in text):
            self.snippets.append(Snippet(text, len(self.snippets), self.day, source))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END_RE.split(text) if s.strip()]


def _json_turns(text: str) -> list[str] | None:
    """LongMemEval's JSON session content: ``[{"role": ..., "content": ...}, ...]``."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, list) or not all(isinstance(t, dict) and "content" in t for t in data):
        return None
    return [str(t["content"]) for t in data]


# --- ranking --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ranked:
    snippet: Snippet
    score: float
    coverage: float
    matched: tuple[str, ...]


_CURRENT_RE = re.compile(
    r"\b(current(?:ly)?|now|latest|most recent(?:ly)?|these days|at the moment|still|anymore|today|present(?:ly)?)\b",
    re.IGNORECASE,
)


def question_terms(question: str) -> list[str]:
    """Distinct content terms of the question, in order, without its framing words."""
    frame = {stem(w) for w in QUESTION_FRAME_WORDS} | STOPWORDS
    words = [t for t in normalise_tokens(question) if t not in STOPWORDS and t not in QUESTION_FRAME_WORDS]
    return list(dict.fromkeys(stem(t) for t in words if stem(t) not in frame))


_TOPIC_RE = re.compile(
    r"(?:\b(?:my|the|a|an|our|your|his|her|their|this|that|these|those|what|which|whose)|['’]s)\s+(?P<word>[^\W\d_]+)",
    re.IGNORECASE,
)


def topic_terms(question: str) -> list[str]:
    """Stems of the words right after a determiner, a possessive or what/which: what the
    question is about ("the name of my *hamster*"), as opposed to how it is asked."""
    terms = question_terms(question)
    found = (stem(normalise_tokens(m.group("word"))[0]) for m in _TOPIC_RE.finditer(question))
    return list(dict.fromkeys(t for t in found if t in terms))


def rank_snippets(question: str, snippets: Sequence[Snippet]) -> list[Ranked]:
    """BM25 (k1=1.2, b=0.75) of every snippet that shares a term with the question, best first
    (ties: newer first). ``coverage`` is the IDF-weighted share of the question's terms found;
    terms absent from the whole context weigh as much as the rarest possible term."""
    terms = question_terms(question)
    if not terms or not snippets:
        return []
    documents = [Counter(content_terms(s.text)) for s in snippets]
    count = len(documents)
    average = sum(sum(d.values()) for d in documents) / count or 1.0
    frequency = {t: sum(1 for d in documents if t in d) for t in terms}
    idf = {t: math.log(1 + (count - frequency[t] + 0.5) / (frequency[t] + 0.5)) for t in terms}
    total_idf = sum(idf.values())
    ranked: list[Ranked] = []
    for snippet, document in zip(snippets, documents, strict=True):
        matched = tuple(t for t in terms if t in document)
        if not matched:
            continue
        length = sum(document.values())
        score = sum(
            idf[t] * document[t] * (BM25_K1 + 1) / (document[t] + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
            for t in matched
        )
        ranked.append(Ranked(snippet, score, sum(idf[t] for t in matched) / total_idf, matched))
    return sorted(ranked, key=lambda r: (-r.score, -r.snippet.position))


def best_snippets(question: str, ranked: Sequence[Ranked]) -> list[Ranked]:
    """The near-best snippets, newest first; empty when none covers enough of the question.

    Enough: ``MIN_COVERAGE`` of the question's IDF-weighted terms, or ``MIN_TOPIC_COVERAGE`` with
    every topic term. Near-best: the best coverage among those, and a score within ``TIE_BAND``
    (``CURRENT_TIE_BAND`` for questions about the current state) of the best such score."""
    topics = set(topic_terms(question))
    eligible = [
        r
        for r in ranked
        if r.coverage >= MIN_COVERAGE or (topics and topics <= set(r.matched) and r.coverage >= MIN_TOPIC_COVERAGE)
    ]
    if not eligible:
        return []
    best_coverage = max(r.coverage for r in eligible)
    covering = [r for r in eligible if r.coverage >= best_coverage - 1e-9]
    top = covering[0].score
    band = CURRENT_TIE_BAND if _CURRENT_RE.search(question) else TIE_BAND
    ties = [r for r in covering if r.score >= band * top]
    return sorted(ties, key=lambda r: (-r.snippet.position, -r.score))


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
    r"(?P<num>[$€£]?\d+(?:,\d{3})*(?:\.\d+)?%?|\b(?:" + "|".join(_NUMBER_WORDS) + r")\b)"
    r"(?:[- ](?P<unit>(?!(?:and|or|of|the|to|in|on|at|for|with)\b)[A-Za-z]+))?",
    re.IGNORECASE,
)
_CAPITALISED_RE = re.compile(r"\b[A-Z][\w'’&.-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w'’&.-]*)*")
_NOT_NAMES = frozenset({"user", "assistant", "i", "i'm", "i've", "i'd", "i'll", "the", "a", "an", "they", "their",
                        "he", "she", "we", "it", "my", "this", "that", "date", *_MONTHS, *_WEEKDAYS})  # fmt: skip
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
    dates = _find_dates(snippet.text)
    if dates:
        return dates[0][0].group(0)
    month_day = _MONTH_DAY_RE.search(_ANNOTATION_RE.sub("", snippet.text))
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


__all__ = [
    "ABSTENTION_ANSWER",
    "OfflineReader",
    "ReaderRequest",
    "Snippet",
    "answer_question",
    "best_snippets",
    "content_terms",
    "format_date",
    "is_number",
    "normalise_tokens",
    "parse_date",
    "parse_reader_request",
    "rank_snippets",
    "stem",
    "topic_terms",
]

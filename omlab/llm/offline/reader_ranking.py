"""How ``omlab/reader`` ranks memory snippets against a question: BM25 over content terms, a
coverage threshold, and the newest of the near-best snippets for knowledge updates."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from omlab.llm.offline.reader_request import Snippet
from omlab.llm.offline.text_terms import QUESTION_FRAME_WORDS, STOPWORDS, content_terms, normalise_tokens, stem

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

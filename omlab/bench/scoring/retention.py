"""Model-free retention recall: is the gold answer / evidence still in the memory context?

Both sides go through LoCoMo's answer normalisation (lower-case, punctuation and commas dropped,
``a``/``an``/``the``/``and`` dropped, whitespace collapsed) and Porter stemming, so "Ran a 10K!"
and "ran the 10k" match.

``answer_retained(answer, context)`` is True when either
  1. the normalised answer occurs in the normalised context as a whole-word phrase, or
  2. at least ``threshold`` (default 0.8) of the answer's distinct content tokens (stemmed,
     stop-words removed; all tokens if the answer is only stop-words) occur in the context.
It cannot see paraphrases ("three" vs "3", "last Tuesday" vs a date); treat it as a lower
bound, and do not use it for abstention questions (their "answer" is an explanation).

``evidence_retained(texts, context)`` is the mean, over evidence turns, of the share of each
turn's distinct content tokens found in the context (0.0-1.0); with ``threshold`` it is instead
the share of evidence turns whose coverage reaches the threshold. Turns without content tokens
are ignored; NaN when nothing is left to measure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from omlab.bench.scoring.f1 import normalize_answer
from omlab.bench.scoring.porter import porter_stem

DEFAULT_ANSWER_THRESHOLD = 0.8
_STOPWORD_TEXT = (
    "i me my myself we our ours you your yours he him his she her hers it its they them their "
    "what which who whom this that these those am is are was were be been being have has had do "
    "does did doing but if or because as until while of at by for with about against between into "
    "through during before after above below to from up down in out on off over under again then "
    "once here there when where why how all any both each few more most other some such no nor "
    "not only own same so than too very s t can will just don should now im ive id its also would "
    "could"
)
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())


def content_tokens(text: str) -> frozenset[str]:
    """Distinct stemmed tokens of ``text`` without stop-words (all tokens if only stop-words)."""
    words = normalize_answer(text).split()
    kept = [word for word in words if word not in STOPWORDS] or words
    return frozenset(porter_stem(word) for word in kept)


@lru_cache(maxsize=8)
def _context_index(context_text: str) -> tuple[str, frozenset[str]]:
    """Normalised context (padded for whole-word search) and its stemmed vocabulary."""
    normalised = normalize_answer(context_text)
    return f" {normalised} ", frozenset(porter_stem(word) for word in normalised.split())


def answer_retained(answer: str, context_text: str, *, threshold: float = DEFAULT_ANSWER_THRESHOLD) -> bool:
    """Is the gold answer still present in the context? (rules in the module docstring)."""
    _check_threshold(threshold)
    phrase = normalize_answer(answer)
    if not phrase:
        return False
    padded_context, vocabulary = _context_index(context_text)
    if f" {phrase} " in padded_context:
        return True
    tokens = content_tokens(answer)
    return len(tokens & vocabulary) / len(tokens) >= threshold


def evidence_retained(
    evidence_turn_texts: Sequence[str], context_text: str, *, threshold: float | None = None
) -> float:
    """How much of the evidence turns survives in the context (rules in the module docstring)."""
    if threshold is not None:
        _check_threshold(threshold)
    _, vocabulary = _context_index(context_text)
    coverages = []
    for text in evidence_turn_texts:
        tokens = content_tokens(text)
        if tokens:
            coverages.append(len(tokens & vocabulary) / len(tokens))
    if not coverages:
        return math.nan
    if threshold is None:
        return sum(coverages) / len(coverages)
    return sum(coverage >= threshold for coverage in coverages) / len(coverages)


def _check_threshold(threshold: float) -> None:
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")

"""LoCoMo's official QA score (``task_eval/evaluation.py``), reproduced rule for rule.

- Normalisation: drop commas, lower-case, drop ASCII punctuation, drop the words ``a``, ``an``,
  ``the`` *and* ``and``, collapse whitespace.
- Tokens are whitespace-split and Porter-stemmed (NLTK's default Porter variant).
- Token F1 from the multiset (Counter) overlap; 0 when nothing overlaps (also for empty text).
- Category 1 (multi-hop): prediction and gold are split on ``,``; each gold part takes its best F1
  over the predicted parts; the score is the mean over gold parts.
- Category 3 (open-domain): the gold is cut at the first ``;`` before scoring.
- Categories 2, 3, 4: plain token F1.
- Category 5 (adversarial): 1.0 if the lower-cased prediction contains ``no information
  available`` or ``not mentioned``, else 0.0 (the gold is not used).
"""

from __future__ import annotations

import re
import string
from collections import Counter

from omlab.bench.scoring.porter import porter_stem

ADVERSARIAL_PHRASES: tuple[str, ...] = ("no information available", "not mentioned")
_PUNCTUATION = frozenset(string.punctuation)
_DROPPED_WORDS = re.compile(r"\b(a|an|the|and)\b")


def normalize_answer(text: str) -> str:
    """The official normalisation (see module docstring)."""
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    return " ".join(_DROPPED_WORDS.sub(" ", text).split())


def answer_tokens(text: str) -> list[str]:
    """Normalised, Porter-stemmed tokens of an answer."""
    return [porter_stem(word) for word in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """Official ``f1_score``: stemmed token F1 between one prediction and one gold answer."""
    predicted = answer_tokens(prediction)
    expected = answer_tokens(gold)
    overlap = sum((Counter(predicted) & Counter(expected)).values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(predicted)
    recall = overlap / len(expected)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, gold: str) -> float:
    """Official ``f1`` for multi-hop: mean over comma-separated gold parts of the best part F1."""
    predictions = [part.strip() for part in prediction.split(",")]
    golds = [part.strip() for part in gold.split(",")]
    return sum(max(token_f1(p, g) for p in predictions) for g in golds) / len(golds)


def mentions_no_information(prediction: str) -> bool:
    """Official category-5 check: does the reply say the information is not there?"""
    lowered = prediction.lower()
    return any(phrase in lowered for phrase in ADVERSARIAL_PHRASES)


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """Score one LoCoMo answer by its category in ``locomo10.json`` numbering (1-5).

    Raises:
        ValueError: ``category`` is not 1-5.
    """
    if category == 1:
        return multi_answer_f1(prediction, gold)
    if category in (2, 4):
        return token_f1(prediction, gold)
    if category == 3:
        return token_f1(prediction, gold.split(";")[0].strip())
    if category == 5:
        return 1.0 if mentions_no_information(prediction) else 0.0
    raise ValueError(f"LoCoMo category must be 1-5, got {category!r}")

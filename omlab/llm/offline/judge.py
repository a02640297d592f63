"""``omlab/judge``: a deterministic lexical judge (a baseline, not a language model).

It reads a judge prompt — one user message with ``Question:``, a gold field (``Reference
answer:``, ``Correct Answer:``, ``Rubric:``, ``Why it cannot be answered:``, ``Explanation:``…)
and a response field (``Response:``, ``Model Response:``…), each starting a line, as built by
``omlab.bench.scoring.longmemeval_judge.judge_messages`` or LongMemEval's official wording — and
answers exactly ``yes`` or ``no`` (so every verdict parse mode reads it):

* answer prompts: yes iff the gold, or one of the alternatives it offers ("A or B", "7 days. 8
  days is also acceptable"), passes: when it holds numbers, the response must hold them all (off
  by one allowed when the prompt says so), and then its normalised text occurs in the normalised
  response, or the token F1 of their content words is at least ``MIN_F1``;
* abstention prompts (the gold explains why the question cannot be answered): yes iff the
  response says it does not know / the information is not available or not mentioned;
* rubric prompts (preferences): yes iff the response contains at least ``MIN_RUBRIC_RECALL`` of
  the rubric's content words — a weak proxy, expect mostly "no".

Normalisation (``omlab.llm.offline.text_terms``): case folding, punctuation dropped, number words and
``$1,200``-style amounts as plain numbers, month abbreviations spelled out, a tiny stemmer and a
stop-word list for the F1. It cannot see paraphrases or reasoning; treat its accuracy as a rough
lower bound of what an LLM judge would give.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from omlab.llm.offline.base import OfflineResult, message_text
from omlab.llm.offline.text_terms import STOPWORDS, content_terms, is_number, normalise_tokens
from omlab.llm.types import ChatMessage
from omlab.tokens.tokenx import estimate_token_count_cached as estimate_token_count

MIN_F1 = 0.5
MIN_RUBRIC_RECALL = 0.5

JudgeKind = Literal["answer", "abstention", "rubric"]

_GOLD_LABELS = (
    "reference answer", "correct answer", "gold answer", "expected answer", "ground truth", "answer",
    "rubric", "explanation", "why it cannot be answered",
)  # fmt: skip
_RESPONSE_LABELS = (
    "model response",
    "response",
    "generated answer",
    "model answer",
    "candidate answer",
    "hypothesis",
)
_ABSTENTION_LABELS = frozenset({"explanation", "why it cannot be answered"})


def _label_pattern(labels: tuple[str, ...]) -> str:
    return "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))


_PROMPT_RE = re.compile(
    rf"^[ \t]*Question:[ \t]*(?P<question>.*?)\n[ \t]*\n?"
    rf"[ \t]*(?P<gold_label>{_label_pattern(_GOLD_LABELS)}):[ \t]*(?P<gold>.*?)\n[ \t]*\n?"
    rf"[ \t]*(?P<response_label>{_label_pattern(_RESPONSE_LABELS)}):[ \t]*(?P<response>.*)\Z",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)
_CLOSING_RE = re.compile(r"\n[ \t]*\n(?P<closing>[^\n]*\b(?:yes|no)\b[^\n]*)\s*\Z", re.IGNORECASE)
_UNANSWERABLE_RE = re.compile(r"cannot be answered|unanswerable|not answerable|identify the question as", re.IGNORECASE)
_OFF_BY_ONE_RE = re.compile(r"off[- ]by[- ]one|differ(?:s)? from the reference by one", re.IGNORECASE)
_ALTERNATIVES_RE = re.compile(r"\bor\b|\balso (?:acceptable|correct|fine)\b|\beither\b", re.IGNORECASE)
_ACCEPTABLE_RE = re.compile(r"\b(?:(?:is|are)\s+)?also\s+(?:acceptable|correct|fine)\b", re.IGNORECASE)

_NOT_KNOWN_RE = re.compile(
    r"\b(?:i|we)\s+(?:do\s+not|don't|dont)\s+know\b|\bnot\s+(?:available|mentioned|specified|provided|recorded|"
    r"stated|given|shared|known|sure|in\s+(?:my|the)\s+(?:memory|conversation|history|notes|records?))\b|"
    r"\b(?:never|wasn't|was\s+not|isn't|is\s+not|haven't|have\s+not|hasn't|has\s+not)\s+(?:been\s+)?"
    r"(?:mentioned|specified|provided|told|said|shared|discussed|recorded)\b|"
    r"\b(?:didn't|did\s+not|never)\s+(?:mention|say|specify|tell|share|provide|discuss)\b|"
    r"\bno\s+(?:information|record|mention|details?|data|indication)\b|"
    r"\b(?:not\s+enough|insufficient)\s+information\b|"
    r"\b(?:cannot|can't|can\s+not|unable\s+to|couldn't|could\s+not)\s+(?:answer|determine|tell|find|say|know|"
    r"recall|be\s+determined)\b|\bunknown\b|\bno\s+way\s+to\s+know\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class JudgePrompt:
    """What the judge reads from the prompt."""

    question: str
    gold: str
    response: str
    kind: JudgeKind
    off_by_one: bool = False


def parse_judge_prompt(text: str) -> JudgePrompt:
    """Split a judge prompt into question, gold and response (module docstring).

    Raises:
        ValueError: the prompt does not have the three labelled fields in that order.
    """
    match = _PROMPT_RE.search(text)
    if match is None:
        raise ValueError(
            "judge prompt not recognised: expected lines starting with 'Question:', then a gold field "
            "('Reference answer:', 'Correct Answer:', 'Rubric:', 'Explanation:', 'Why it cannot be answered:'…), "
            "then a response field ('Response:' or 'Model Response:')"
        )
    response = match.group("response")
    closing = _CLOSING_RE.search(response)
    instructions = text[: match.start()]
    if closing is not None:
        instructions += "\n" + closing.group("closing")
        response = response[: closing.start()]
    gold_label = match.group("gold_label").lower()
    if gold_label in _ABSTENTION_LABELS or _UNANSWERABLE_RE.search(instructions):
        kind: JudgeKind = "abstention"
    elif gold_label == "rubric":
        kind = "rubric"
    else:
        kind = "answer"
    return JudgePrompt(
        question=match.group("question").strip(),
        gold=match.group("gold").strip(),
        response=response.strip(),
        kind=kind,
        off_by_one=bool(_OFF_BY_ONE_RE.search(instructions)),
    )


def says_not_known(response: str) -> bool:
    """Whether a response declines to answer ("I don't know", "not mentioned", "no information"…)."""
    return bool(_NOT_KNOWN_RE.search(response.replace("’", "'")))


def token_f1(gold: str, response: str) -> float:
    """F1 of the multisets of content terms (stemmed, stop-words dropped)."""
    gold_terms, response_terms = Counter(content_terms(gold)), Counter(content_terms(response))
    common = sum((gold_terms & response_terms).values())
    if common == 0:
        return 0.0
    precision = common / sum(response_terms.values())
    recall = common / sum(gold_terms.values())
    return 2 * precision * recall / (precision + recall)


def gold_alternatives(gold: str) -> list[str]:
    """The gold itself, then, when it offers alternatives ("or", "either", "also acceptable"), each
    sentence and each side of an "or", without parentheses and "is also acceptable" wording."""
    if not _ALTERNATIVES_RE.search(gold):
        return [gold]
    found = [gold]
    for sentence in re.split(r"(?<=[.;])\s+", gold):
        for part in re.split(r"\bor\b|\beither\b", sentence, flags=re.IGNORECASE):
            cleaned = _ACCEPTABLE_RE.sub("", re.sub(r"\([^()]*\)", "", part)).strip(" .,;:")
            if cleaned and cleaned not in found:
                found.append(cleaned)
    return found


def numbers_match(gold: str, response: str, *, off_by_one: bool = False) -> bool:
    """True when the response holds every number of the gold (or the gold has none);
    ``off_by_one`` accepts ±1 on each."""
    wanted = [float(t) for t in normalise_tokens(gold) if is_number(t)]
    if not wanted:
        return True
    given = [float(t) for t in normalise_tokens(response) if is_number(t)]
    tolerance = 1.0 if off_by_one else 0.0

    def present(value: float) -> bool:
        return any(abs(value - other) <= tolerance + 1e-9 for other in given)

    return all(present(value) for value in wanted)


def contains_phrase(gold: str, response: str) -> bool:
    """Whole-word containment of the normalised gold (articles dropped) in the normalised response."""

    def words(text: str) -> str:
        return " ".join(t for t in normalise_tokens(text) if t not in ("a", "an", "the"))

    phrase = words(gold)
    return bool(phrase) and f" {phrase} " in f" {words(response)} "


def judge_verdict(prompt: JudgePrompt) -> bool:
    """The verdict for a parsed prompt (rules in the module docstring)."""
    if prompt.kind == "abstention":
        return says_not_known(prompt.response)
    if prompt.kind == "rubric":
        rubric = set(content_terms(prompt.gold)) - STOPWORDS
        found = rubric & set(content_terms(prompt.response))
        return bool(rubric) and len(found) / len(rubric) >= MIN_RUBRIC_RECALL
    if not prompt.response:
        return False
    return any(
        numbers_match(gold, prompt.response, off_by_one=prompt.off_by_one)
        and (contains_phrase(gold, prompt.response) or token_f1(gold, prompt.response) >= MIN_F1)
        for gold in gold_alternatives(prompt.gold)
    )


class OfflineJudge:
    """The lexical judge addressable as ``omlab/judge``."""

    name = "judge"

    def generate(
        self,
        messages: list[ChatMessage],
        *,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
    ) -> OfflineResult:
        """Judge the prompt in the last user message: ``"yes"`` or ``"no"``. ``temperature`` and
        ``max_output_tokens`` are accepted for interface parity and ignored.

        Raises:
            ValueError: no user message, or a prompt whose format is not recognised.
        """
        user_texts = [message_text(m) for m in messages if m.get("role") == "user"]
        if not user_texts:
            raise ValueError("judge request has no user message (the judge prompt goes in one user message)")
        text = "yes" if judge_verdict(parse_judge_prompt(user_texts[-1])) else "no"
        input_tokens = sum(estimate_token_count(message_text(m)) for m in messages)
        return OfflineResult(text, input_tokens, estimate_token_count(text))


__all__ = [
    "JudgePrompt",
    "OfflineJudge",
    "contains_phrase",
    "gold_alternatives",
    "judge_verdict",
    "numbers_match",
    "parse_judge_prompt",
    "says_not_known",
    "token_f1",
]

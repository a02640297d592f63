"""LLM-judge prompts for LongMemEval-style questions, in omlab's own wording.

The criteria follow LongMemEval's official judge (benchmarks.md §1.5): one prompt per question
type, chosen by ``is_abstention`` first (LongMemEval marks abstention only in the ``_abs`` id),
then by ``Question.type``:

- single-session-user / single-session-assistant / multi-session (and any other type, through
  ``default``): yes if the response gives the answer, an equivalent, or steps that reach it; no if
  it gives only part of what the answer requires;
- temporal-reasoning: the same, and off-by-one counts of days/weeks/months are accepted;
- knowledge-update: yes if it gives the updated answer, even alongside older information;
- single-session-preference: the gold is a rubric; yes if the response uses the user's personal
  information correctly, without needing every rubric point;
- abstention: the gold is an explanation; yes if the response recognises it cannot answer.

The judge gets one user message and no system prompt (as the official script does); call it with
``JUDGE_REQUEST_OPTIONS`` (temperature 0, 10 output tokens) and parse the reply with
``omlab.bench.scoring.verdicts.parse_verdict``.

For exact parity with published numbers, load the official wording from a file you supply
(``load_judge_prompts``). File format: a JSON object mapping each key of ``PROMPT_KEYS`` (and
optionally ``"default"``) to a Python ``str.format`` template. A template may use three
positional ``{}`` fields, filled in the order question, gold answer (or rubric / explanation),
response (exactly as the official ``evaluate_qa.py`` does, so its strings can be pasted as they
are), or the named fields ``{question}``, ``{answer}`` and ``{response}``. Literal braces are
written ``{{`` and ``}}``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from omlab.bench.datasets.schema import LONGMEMEVAL_TYPES, Question
from omlab.llm.types import ChatMessage

ABSTENTION_KEY = "abstention"
DEFAULT_KEY = "default"
PROMPT_KEYS: tuple[str, ...] = (*LONGMEMEVAL_TYPES, ABSTENTION_KEY)
JUDGE_REQUEST_OPTIONS: dict[str, Any] = {"temperature": 0.0, "max_output_tokens": 10}

_INTRO = "You are checking a reply written by an assistant that has a long conversation history with a user."
_SINGLE_WORD = "Reply with a single word: yes or no."
_STANDARD = (
    "Say yes when the response states the reference answer, states something "
    "equivalent to it, or works through steps that arrive at it. Say no when it gives a "
    "different answer, or covers only part of what the reference answer requires."
)
_TEMPORAL = (
    _STANDARD + " Counts of days, weeks or months that differ from the reference by "
    "one (for example 19 days where the reference says 18) still count as correct."
)
_UPDATE = (
    "The user's information changed over time and the reference answer is the most recent "
    "value. Say yes when the response gives the reference answer; also mentioning older, "
    "superseded information is fine as long as the answer it settles on is the reference "
    "one. Otherwise say no."
)
_PREFERENCE = (
    "The reference below is a rubric describing a good personalised reply. Say yes "
    "when the response fits it: it must recall and apply the user's personal "
    "information correctly, but it need not cover every point of the rubric. "
    "Otherwise say no."
)
_ABSTENTION = (
    "This question cannot be answered from the conversation history; the note below "
    "says why. Say yes when the response recognises that it cannot answer, for "
    "example by saying the information was never given or is incomplete, or that "
    "related details exist but not the one asked about. Say no when it answers as if "
    "the information were known."
)


def _template(criteria: str, gold_label: str, closing: str = "Is the response correct?") -> str:
    return (
        f"{_INTRO}\n\n{criteria}\n\nQuestion: {{question}}\n\n{gold_label}: {{answer}}\n\n"
        f"Response: {{response}}\n\n{closing} {_SINGLE_WORD}"
    )


OMLAB_TEMPLATES: Mapping[str, str] = MappingProxyType(
    {
        "single-session-user": _template(_STANDARD, "Reference answer"),
        "single-session-assistant": _template(_STANDARD, "Reference answer"),
        "multi-session": _template(_STANDARD, "Reference answer"),
        "temporal-reasoning": _template(_TEMPORAL, "Reference answer"),
        "knowledge-update": _template(_UPDATE, "Reference answer"),
        "single-session-preference": _template(_PREFERENCE, "Rubric"),
        ABSTENTION_KEY: _template(
            _ABSTENTION,
            "Why it cannot be answered",
            "Does the response recognise that the question cannot be answered?",
        ),
        DEFAULT_KEY: _template(_STANDARD, "Reference answer"),
    }
)


class JudgePromptError(ValueError):
    """A judge prompt file or template that cannot be used (names the file and key)."""


@dataclass(frozen=True, slots=True)
class JudgePrompts:
    """A set of judge templates keyed by ``PROMPT_KEYS`` (+ optional ``default``).

    Attributes:
        templates: Key -> ``str.format`` template (see module docstring).
        source: ``"omlab"`` for the built-in wording, else the file it was loaded from.
    """

    templates: Mapping[str, str]
    source: str = "omlab"

    @property
    def digest(self) -> str:
        """sha256 of the templates: put it in the run's config hash."""
        canonical = json.dumps(dict(self.templates), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()

    def key_for(self, question: Question) -> str:
        """Which template judges ``question``: abstention first, then type, then ``default``."""
        if question.is_abstention:
            return ABSTENTION_KEY
        if question.type in self.templates:
            return question.type
        if DEFAULT_KEY in self.templates:
            return DEFAULT_KEY
        raise JudgePromptError(
            f"no judge template for question type {question.type!r} "
            f"(question {question.id!r}) in {self.source} and no 'default'"
        )


DEFAULT_JUDGE_PROMPTS = JudgePrompts(OMLAB_TEMPLATES)


def judge_prompt(question: Question, hypothesis: str, prompts: JudgePrompts | None = None) -> str:
    """The judge's prompt text for one answer (``hypothesis``) to ``question``."""
    prompts = prompts or DEFAULT_JUDGE_PROMPTS
    template = prompts.templates[prompts.key_for(question)]
    return _render(template, question.question, question.answer, hypothesis)


def judge_messages(question: Question, hypothesis: str, prompts: JudgePrompts | None = None) -> list[ChatMessage]:
    """Chat messages for the judge: a single user message, no system prompt."""
    return [{"role": "user", "content": judge_prompt(question, hypothesis, prompts)}]


def load_judge_prompts(path: str | Path) -> JudgePrompts:
    """Load judge templates from a JSON file (format in the module docstring).

    Every key of ``PROMPT_KEYS`` must be present unless a ``default`` covers the missing
    non-abstention types; ``abstention`` is always required. Each template must use the question,
    the gold answer and the response exactly once each.

    Raises:
        JudgePromptError: Unreadable file, unknown or missing keys, or a broken template.
    """
    file = str(path)
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise JudgePromptError(f"{file}: cannot read judge prompts: {exc}") from exc
    if not isinstance(raw, dict):
        raise JudgePromptError(f"{file}: expected a JSON object of key -> template")
    unknown = set(raw) - set(PROMPT_KEYS) - {DEFAULT_KEY}
    if unknown:
        raise JudgePromptError(
            f"{file}: unknown keys {sorted(unknown)}; expected {', '.join(PROMPT_KEYS)} or {DEFAULT_KEY}"
        )
    required = {ABSTENTION_KEY} if DEFAULT_KEY in raw else set(PROMPT_KEYS)
    missing = sorted(required - set(raw))
    if missing:
        raise JudgePromptError(f"{file}: missing templates for {missing} (or give a 'default')")
    for key, template in raw.items():
        if not isinstance(template, str):
            raise JudgePromptError(f"{file}: key {key!r}: template must be a string")
        _check_template(template, f"{file}: key {key!r}")
    return JudgePrompts(MappingProxyType(dict(raw)), source=file)


def _render(template: str, question: str, answer: str, response: str) -> str:
    return template.format(question, answer, response, question=question, answer=answer, response=response)


def _check_template(template: str, where: str) -> None:
    sentinels = ("\x00Q\x00", "\x00A\x00", "\x00R\x00")
    try:
        rendered = _render(template, *sentinels)
    except (IndexError, KeyError, ValueError) as exc:
        raise JudgePromptError(
            f"{where}: bad template ({type(exc).__name__}: {exc}); use three "
            "'{}' or {question}/{answer}/{response}"
        ) from exc
    for name, sentinel in zip(("question", "answer", "response"), sentinels, strict=True):
        if rendered.count(sentinel) != 1:
            raise JudgePromptError(
                f"{where}: template must use the {name} exactly once, uses it {rendered.count(sentinel)} times"
            )

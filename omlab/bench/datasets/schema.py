"""The canonical conversation/question schema every dataset loader produces.

One shape for LongMemEval, LoCoMo, the synthetic generator and users' own JSONL, so the replay,
the runner and the scorers never branch on the source. Only ``Turn.role``, ``Turn.content`` and
``Turn.created_at`` (and the session date) are meant to reach the system under test; every other
field (ids, ``evidence_id``, questions, metadata) is for scoring and provenance only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Role = Literal["user", "assistant"]
ROLES: tuple[str, ...] = ("user", "assistant")

LONGMEMEVAL_TYPES: tuple[str, ...] = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)
"""LongMemEval's six ``question_type`` values, in the official printer's order. Abstention is a
flag (``Question.is_abstention``), not a type."""


def _require_aware(value: datetime, what: str) -> None:
    if not isinstance(value, datetime):
        raise TypeError(f"{what} must be a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{what} must be timezone-aware, got naive {value.isoformat()}")


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a conversation.

    Attributes:
        id: Unique within its conversation (LoCoMo ``dia_id``; ``s001:3`` style elsewhere).
        role: ``"user"`` or ``"assistant"``.
        content: The text the system under test sees.
        created_at: Timezone-aware time the message was sent (dataset timestamp or session date
            plus a configured pace).
        speaker: The speaker's name when the dataset has one (LoCoMo), else None.
        evidence_id: Scorer-only marker that replaces LongMemEval's ``has_answer``: the id that
            ``Question.evidence_ids`` use to cite this turn when the dataset marks it as evidence
            for some question, else None. Never render it to a model.
        parts: The message's parts in Mastra's stored form (AI-SDK parts: text, tool calls,
            files, ...) when the dataset has them (``kind = "mastra"``); the replay then feeds
            these instead of ``content`` (which holds the text parts). None for text datasets.
    """

    id: str
    role: Role
    content: str
    created_at: datetime
    speaker: str | None = None
    evidence_id: str | None = None
    parts: tuple[dict[str, Any], ...] | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"turn {self.id!r}: role must be 'user' or 'assistant', got {self.role!r}")
        if not isinstance(self.content, str):
            raise TypeError(f"turn {self.id!r}: content must be a str, got {type(self.content).__name__}")
        _require_aware(self.created_at, f"turn {self.id!r}: created_at")


@dataclass(frozen=True, slots=True)
class Session:
    """A dated block of turns (one LongMemEval haystack session, one LoCoMo ``session_N``)."""

    id: str
    date: datetime
    turns: list[Turn]

    def __post_init__(self) -> None:
        _require_aware(self.date, f"session {self.id!r}: date")


@dataclass(frozen=True, slots=True)
class Question:
    """A recall question about a conversation.

    Attributes:
        id: Unique within the dataset (LongMemEval ``question_id``, keeps its ``_abs`` suffix).
        type: LongMemEval ``question_type``, a LoCoMo category name (``multi-hop``, ``temporal``,
            ``open-domain``, ``single-hop``, ``adversarial``) or a user-defined label.
        question: The question text.
        answer: The gold answer as a string (ints are converted; a rubric for LongMemEval
            preference questions; an explanation for abstention questions).
        question_date: When the question is asked (LongMemEval), else None.
        evidence_ids: Ids of the turns that hold the answer (canonical turn ids).
        is_abstention: True when the right reply is "this was never said".
        category: LoCoMo's integer category in the file's own numbering (1 multi-hop, 2 temporal,
            3 open-domain, 4 single-hop, 5 adversarial), else None.
        adversarial_answer: LoCoMo category-5 distractor (the wrong answer), else None.
        extra: Dataset-specific fields kept for scoring or provenance.
    """

    id: str
    type: str
    question: str
    answer: str
    question_date: datetime | None = None
    evidence_ids: list[str] = field(default_factory=list)
    is_abstention: bool = False
    category: int | None = None
    adversarial_answer: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.answer, str):
            raise TypeError(f"question {self.id!r}: answer must be a str, got {type(self.answer).__name__}")
        if self.question_date is not None:
            _require_aware(self.question_date, f"question {self.id!r}: question_date")


@dataclass(frozen=True, slots=True)
class Conversation:
    """A conversation (sessions of turns) plus the questions asked about it.

    ``metadata`` holds provenance and scorer-only data (e.g. LongMemEval's mapping from anonymised
    session ids back to the dataset's ids); never render it to a model.
    """

    id: str
    sessions: list[Session]
    questions: list[Question]
    dataset: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def turn_count(self) -> int:
        """Number of turns over all sessions."""
        return sum(len(session.turns) for session in self.sessions)

    @property
    def total_chars(self) -> int:
        """Characters of turn content over all sessions."""
        return sum(len(turn.content) for session in self.sessions for turn in session.turns)

    def iter_turns(self) -> Iterator[Turn]:
        """All turns in session order."""
        for session in self.sessions:
            yield from session.turns

    def turns_by_id(self) -> dict[str, Turn]:
        """Map turn id -> turn."""
        return {turn.id: turn for turn in self.iter_turns()}

    def evidence_turns(self, question: Question) -> list[Turn]:
        """The turns a question cites, in ``question.evidence_ids`` order (unknown ids raise KeyError)."""
        by_id = self.turns_by_id()
        return [by_id[turn_id] for turn_id in question.evidence_ids]


@dataclass(frozen=True, slots=True)
class DatasetInfo:
    """Provenance of a loaded dataset; goes into every run manifest.

    Attributes:
        name: ``longmemeval``, ``locomo``, ``synthetic`` or ``jsonl``.
        subset: Variant (``oracle``/``s``/``m`` for LongMemEval), or None.
        source: Local path, URL or hub address the data came from.
        revision: Pinned upstream revision (hub commit, generator version), or None.
        sha256: Hex digest of the source file (or of the generated content for synthetic data).
        n_conversations: How many conversations were loaded.
    """

    name: str
    subset: str | None
    source: str
    revision: str | None
    sha256: str
    n_conversations: int

"""Checks on loaded conversations that a loader cannot make alone: what must stop a run, and what
a run accepts but must say.

* :func:`input_refusals`: problems no run should start with (no conversation at all, a
  conversation without turns). Each message names the record and the fix.
* :func:`input_warnings`: oddities a run accepts, each an :class:`InputWarning` naming the record:
  turns or sessions out of time order, a session dated after its question, dates far in the
  future, blank turns, naive and aware timestamps mixed in one conversation (loaders record the
  naive fields in ``Conversation.metadata["naive_timestamps"]``), empty ids, blank questions,
  blank or NaN gold answers, a conversation without questions, a turn dated before its session,
  a turn over :data:`HUGE_TURN_CHARS` characters, a field of the file the loader does not know
  (:mod:`omlab.bench.datasets.unknown_fields`).

Both are pure functions of the conversations (``now`` is injectable for tests).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from omlab.bench.datasets.schema import Conversation
from omlab.bench.datasets.unknown_fields import UNKNOWN_FIELDS_KEY

WARNING_KINDS: tuple[str, ...] = (
    "turns_out_of_order",
    "sessions_out_of_order",
    "session_after_question",
    "future_date",
    "blank_turn",
    "mixed_timezones",
    "empty_id",
    "blank_question",
    "blank_answer",
    "no_questions",
    "turn_before_session",
    "huge_turn",
    "unknown_field",
)
FUTURE_HORIZON = timedelta(days=366)
"""Dates later than this after ``now`` are flagged as far in the future."""
NAIVE_TIMESTAMPS_KEY = "naive_timestamps"
HUGE_TURN_CHARS = 1_000_000
"""A turn longer than this (about 250k tokens) is flagged: it alone fills most context windows."""
_BLANK_ANSWERS = frozenset({"", "nan", "none", "null"})


@dataclass(frozen=True, slots=True)
class InputWarning:
    """One accepted oddity of the input: its kind (one of :data:`WARNING_KINDS`), the record it is
    in (``conversation 'c1' turn 's1:3'``) and what is odd about it."""

    kind: str
    record: str
    detail: str

    def __str__(self) -> str:
        return f"{self.record}: {self.detail}"

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def input_refusals(conversations: Sequence[Conversation], *, source: str = "the dataset") -> list[str]:
    """Why the conversations cannot be run (empty when they can)."""
    if not conversations:
        return [f"{source} has no conversations: check [dataset] path (an empty file or an empty list) and limit"]
    return [
        f"conversation {conversation.id!r} has no turns: give it at least one session with turns, or leave it out"
        for conversation in conversations
        if conversation.turn_count == 0
    ]


def input_warnings(conversations: Iterable[Conversation], *, now: datetime | None = None) -> list[InputWarning]:
    """Every accepted oddity of ``conversations``, in conversation order (see the module docstring)."""
    horizon = (now or datetime.now(UTC)) + FUTURE_HORIZON
    warnings: list[InputWarning] = []
    for conversation in conversations:
        warnings += _conversation_warnings(conversation, horizon)
    return warnings


def warning_counts(warnings: Iterable[InputWarning | dict[str, Any]]) -> dict[str, int]:
    """``{kind: count}`` over ``warnings`` (objects or their dicts), kinds in :data:`WARNING_KINDS` order."""
    counts = dict.fromkeys(WARNING_KINDS, 0)
    for warning in warnings:
        kind = warning["kind"] if isinstance(warning, dict) else warning.kind
        counts[kind] = counts.get(kind, 0) + 1
    return {kind: n for kind, n in counts.items() if n}


def _conversation_warnings(conversation: Conversation, horizon: datetime) -> list[InputWarning]:
    where = f"conversation {conversation.id!r}"
    out: list[InputWarning] = []

    def add(kind: str, record: str, detail: str) -> None:
        out.append(InputWarning(kind, record, detail))

    if not conversation.id.strip():
        add("empty_id", where, "the conversation id is empty")
    previous_session = None
    for session in conversation.sessions:
        at = f"{where} session {session.id!r}"
        if not session.id.strip():
            add("empty_id", at, "a session id is empty")
        if previous_session is not None and session.date < previous_session.date:
            add(
                "sessions_out_of_order",
                at,
                f"dated {session.date.isoformat()}, before the session before it ({previous_session.date.isoformat()})",
            )
        if session.date > horizon:
            add("future_date", at, f"dated {session.date.isoformat()}, more than a year from now")
        previous_turn = None
        for turn in session.turns:
            turn_at = f"{where} turn {turn.id!r}"
            if not turn.id.strip():
                add("empty_id", f"{at} turn {turn.id!r}", "a turn id is empty")
            if not turn.content.strip():
                add("blank_turn", turn_at, f"the {turn.role} turn has no text")
            if len(turn.content) > HUGE_TURN_CHARS:
                add("huge_turn", turn_at, f"the {turn.role} turn has {len(turn.content):,} characters")
            if previous_turn is not None and turn.created_at < previous_turn.created_at:
                add(
                    "turns_out_of_order",
                    turn_at,
                    f"sent {turn.created_at.isoformat()}, before the turn before it "
                    f"({previous_turn.created_at.isoformat()})",
                )
            elif turn.created_at < session.date:  # (a turn out of order is said once)
                add(
                    "turn_before_session",
                    turn_at,
                    f"sent {turn.created_at.isoformat()}, before its session's date ({session.date.isoformat()})",
                )
            if turn.created_at > horizon and session.date <= horizon:
                add("future_date", turn_at, f"sent {turn.created_at.isoformat()}, more than a year from now")
            previous_turn = turn
        previous_session = session
    for note in conversation.metadata.get(UNKNOWN_FIELDS_KEY) or []:
        add("unknown_field", where, str(note))
    if not conversation.questions:
        add("no_questions", where, "the conversation has no questions: nothing of it will be answered or scored")
    for question in conversation.questions:
        at = f"{where} question {question.id!r}"
        if not question.id.strip():
            add("empty_id", at, "a question id is empty")
        if not str(question.question or "").strip():
            add("blank_question", at, "the question has no text")
        if str(question.answer if question.answer is not None else "").strip().lower() in _BLANK_ANSWERS:
            add("blank_answer", at, f"the gold answer is empty ({question.answer!r}): no answer can be scored right")
        if question.question_date is None:
            continue
        if question.question_date > horizon:
            add("future_date", at, f"asked {question.question_date.isoformat()}, more than a year from now")
        later = [s for s in conversation.sessions if s.date > question.question_date]
        if later:
            add(
                "session_after_question",
                at,
                f"asked {question.question_date.isoformat()}, before session(s) "
                f"{', '.join(repr(s.id) for s in later)} of its conversation",
            )
    naive = conversation.metadata.get(NAIVE_TIMESTAMPS_KEY) if isinstance(conversation.metadata, dict) else None
    if naive:
        fields = ", ".join(naive[:3]) + (f" and {len(naive) - 3} more" if len(naive) > 3 else "")
        add(
            "mixed_timezones",
            where,
            f"mixes timestamps with and without a UTC offset; {fields} had none and were read in the loader's "
            "time zone",
        )
    return out


__all__ = [
    "FUTURE_HORIZON",
    "NAIVE_TIMESTAMPS_KEY",
    "WARNING_KINDS",
    "InputWarning",
    "input_refusals",
    "input_warnings",
    "warning_counts",
]

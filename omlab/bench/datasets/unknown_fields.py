"""Fields of a user's dataset file that omlab does not read: each one is noted by name, with its
file and record (and a "did you mean" when it is close to a known field), so a typo such as
``qestion`` does not silently drop a value.

Loaders keep the notes in ``Conversation.metadata[UNKNOWN_FIELDS_KEY]``;
:func:`omlab.bench.datasets.checks.input_warnings` turns each into an ``unknown_field`` warning.
The known fields of the published datasets include the ones omlab does not use (LoCoMo's
summaries, LongMemEval's ``has_answer``), so an unmodified file gets no warning.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping
from typing import Any

from omlab.bench.datasets._fields import RecordContext

UNKNOWN_FIELDS_KEY = "unknown_fields"

JSONL_CONVERSATION = ("id", "dataset", "metadata", "sessions", "questions")
JSONL_SESSION = ("id", "date", "turns")
JSONL_TURN = ("role", "content", "id", "created_at", "speaker")
JSONL_QUESTION = (
    "question",
    "answer",
    "id",
    "type",
    "question_date",
    "evidence_ids",
    "is_abstention",
    "category",
    "adversarial_answer",
    "extra",
)
LOCOMO_SAMPLE = ("sample_id", "conversation", "qa", "event_summary", "observation", "session_summary")
LOCOMO_TURN = ("speaker", "dia_id", "text", "img_url", "blip_caption", "query", "re-download")
LOCOMO_QA = ("question", "answer", "evidence", "category", "adversarial_answer")
_LOCOMO_CONVERSATION = re.compile(r"^(speaker_a|speaker_b|session_\d+|session_\d+_date_time)$")
LONGMEMEVAL_RECORD = (
    "question_id",
    "question_type",
    "question",
    "answer",
    "question_date",
    "haystack_session_ids",
    "haystack_dates",
    "haystack_sessions",
    "answer_session_ids",
    "improved_question",
    "improved_answer",
    "improvement_note",
    "requires_retry",
)
LONGMEMEVAL_TURN = ("role", "content", "has_answer")


def unknown_field_notes(obj: Any, known: Collection[str], ctx: RecordContext, path: str | None = None) -> list[str]:
    """A note per key of ``obj`` (when it is an object) not in ``known``."""
    if not isinstance(obj, Mapping):
        return []
    notes = []
    for key in obj:
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.7)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        field = f"{path}.{key}" if path else str(key)
        notes.append(f"{ctx.file} {ctx.record}: unknown field {field!r} is ignored{hint}")
    return notes


def jsonl_notes(record: Any, ctx: RecordContext) -> list[str]:
    """Unknown fields of one omlab JSONL conversation (its sessions, turns and questions too)."""
    notes = unknown_field_notes(record, JSONL_CONVERSATION, ctx)
    for i, session in enumerate(_items(record, "sessions")):
        notes += unknown_field_notes(session, JSONL_SESSION, ctx, f"sessions[{i}]")
        for k, turn in enumerate(_items(session, "turns")):
            notes += unknown_field_notes(turn, JSONL_TURN, ctx, f"sessions[{i}].turns[{k}]")
    for i, question in enumerate(_items(record, "questions")):
        notes += unknown_field_notes(question, JSONL_QUESTION, ctx, f"questions[{i}]")
    return notes


def locomo_notes(record: Any, ctx: RecordContext) -> list[str]:
    """Unknown fields of one LoCoMo sample (its conversation, turns and QA items too)."""
    notes = unknown_field_notes(record, LOCOMO_SAMPLE, ctx)
    conversation = record.get("conversation") if isinstance(record, Mapping) else None
    if isinstance(conversation, Mapping):
        known = [key for key in conversation if _LOCOMO_CONVERSATION.match(str(key))]
        notes += unknown_field_notes(conversation, [*known, "speaker_a", "speaker_b"], ctx, "conversation")
        for key, turns in conversation.items():
            if _LOCOMO_CONVERSATION.match(str(key)) and isinstance(turns, list):
                for k, turn in enumerate(turns):
                    notes += unknown_field_notes(turn, LOCOMO_TURN, ctx, f"conversation.{key}[{k}]")
    for i, question in enumerate(_items(record, "qa")):
        notes += unknown_field_notes(question, LOCOMO_QA, ctx, f"qa[{i}]")
    return notes


def longmemeval_notes(record: Any, ctx: RecordContext) -> list[str]:
    """Unknown fields of one LongMemEval record (its haystack turns too)."""
    notes = unknown_field_notes(record, LONGMEMEVAL_RECORD, ctx)
    for i, session in enumerate(_items(record, "haystack_sessions")):
        for k, turn in enumerate(session if isinstance(session, list) else []):
            notes += unknown_field_notes(turn, LONGMEMEVAL_TURN, ctx, f"haystack_sessions[{i}][{k}]")
    return notes


def _items(obj: Any, key: str) -> list[Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, list) else []


__all__ = [
    "UNKNOWN_FIELDS_KEY",
    "jsonl_notes",
    "locomo_notes",
    "longmemeval_notes",
    "unknown_field_notes",
]

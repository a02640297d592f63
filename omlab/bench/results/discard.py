"""What redoing a conversation's phase deletes first: the SQL that takes back one phase's rows.

``prepare`` wrote the conversation's steps, events and Observer/Reflector/extractor calls;
``answer`` its answers and actor calls; ``judge`` the scores of its questions and judge calls.
Each phase's model calls go with their texts, and the phase's checkpoint mark goes too, so a
resumed run that redoes the phase duplicates nothing.
"""

from __future__ import annotations

from typing import Any

from omlab.bench.results.schema import MODEL_ROLES_BY_PHASE, PHASES

_PHASE_ROWS: dict[str, tuple[tuple[str, str], ...]] = {
    "prepare": (
        ("steps", "DELETE FROM steps WHERE conversation_id = ?"),
        ("events", "DELETE FROM events WHERE conversation_id = ?"),
    ),
    "answer": (("answers", "DELETE FROM answers WHERE conversation_id = ?"),),
    "judge": (
        (
            "scores",
            "DELETE FROM scores WHERE question_id IN (SELECT question_id FROM answers WHERE conversation_id = ?)",
        ),
    ),
}


def discard_statements(conversation_id: str, phase: str) -> tuple[list[tuple[str, list[Any]]], tuple[str, ...]]:
    """The parameterised statements that delete what ``phase`` wrote for ``conversation_id``
    (to run in one transaction, in order), and the tables they touch.

    Raises:
        ValueError: ``phase`` is not one of :data:`~omlab.bench.results.schema.PHASES`.
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}; got {phase!r}")
    roles = list(MODEL_ROLES_BY_PHASE[phase])
    role_slots = ", ".join("?" for _ in roles)
    statements: list[tuple[str, list[Any]]] = [(sql, [conversation_id]) for _, sql in _PHASE_ROWS[phase]]
    statements += [
        (
            (
                "DELETE FROM call_texts WHERE call_id IN (SELECT call_id FROM model_calls "
                f"WHERE conversation_id = ? AND role IN ({role_slots}))"
            ),
            [conversation_id, *roles],
        ),
        (
            f"DELETE FROM model_calls WHERE conversation_id = ? AND role IN ({role_slots})",
            [conversation_id, *roles],
        ),
        ("DELETE FROM conversations WHERE conversation_id = ? AND phase = ?", [conversation_id, phase]),
    ]
    tables = (*(table for table, _ in _PHASE_ROWS[phase]), "model_calls", "call_texts", "conversations")
    return statements, tables

"""Taking back one conversation phase before it is redone: only that phase's rows of that
conversation go."""

from __future__ import annotations

import pytest

from omlab.bench.results.discard import discard_statements
from omlab.bench.results.schema import MODEL_ROLES_BY_PHASE, PHASES

from .samples import event_rows, open_writer

RUN = "20240501T093000Z-discard"
CONVERSATIONS = ("c1", "c2")
ROLES = tuple(role for phase in PHASES for role in MODEL_ROLES_BY_PHASE[phase])
PHASE_TABLES = {"prepare": ("steps", "events"), "answer": ("answers",), "judge": ("scores",)}


def test_an_unknown_phase_is_named():
    with pytest.raises(ValueError, match="'answers'"):
        discard_statements("c1", "answers")


def _write_every_phase(writer) -> None:
    for conversation in CONVERSATIONS:
        writer.add_steps([{"conversation_id": conversation, "step": i} for i in range(2)])
        writer.add_events(event_rows(3, conversation))
        for role in ROLES:
            call = {"conversation_id": conversation, "call_id": f"{conversation}-{role}"}
            writer.add_together(
                [("model_calls", [{**call, "role": role}]), ("call_texts", [{**call, "prompt": [], "response": role}])]
            )
        writer.add_answers([{"conversation_id": conversation, "question_id": f"{conversation}-q", "status": "ok"}])
        writer.add_scores([{"question_id": f"{conversation}-q", "scorer": "f1", "value": 1.0}])
        for phase in PHASES:
            writer.mark_conversation(conversation, phase, "done")


def _contents(writer) -> dict[str, set[tuple]]:
    """Each table's rows, as (conversation, what identifies the row within it)."""
    queries = {
        "steps": "SELECT conversation_id, step FROM steps",
        "events": "SELECT conversation_id, seq FROM events",
        "model_calls": "SELECT conversation_id, role FROM model_calls",
        "call_texts": "SELECT t.conversation_id, c.role FROM call_texts t JOIN model_calls c USING (call_id)",
        "orphan_call_texts": "SELECT conversation_id, call_id FROM call_texts WHERE call_id NOT IN "
        "(SELECT call_id FROM model_calls)",
        "answers": "SELECT conversation_id, question_id FROM answers",
        "scores": "SELECT split_part(question_id, '-', 1), scorer FROM scores",
        "conversations": "SELECT conversation_id, phase FROM conversations",
    }
    return writer.read_own(
        lambda cursor: {name: {tuple(row) for row in cursor.execute(sql).fetchall()} for name, sql in queries.items()}
    )


@pytest.mark.parametrize("phase", PHASES)
def test_a_phase_is_taken_back_for_one_conversation_and_nothing_else(tmp_path, phase):
    with open_writer(tmp_path, RUN, flush_seconds=None) as writer:
        _write_every_phase(writer)
        before = _contents(writer)
        assert all(before[table] for table in before if table != "orphan_call_texts")
        writer.discard_conversation("c1", phase)
        after = _contents(writer)
    roles = set(MODEL_ROLES_BY_PHASE[phase])
    expected = {
        table: {
            row
            for row in rows
            if not (
                row[0] == "c1"
                and (
                    table in PHASE_TABLES[phase]
                    or (table in ("model_calls", "call_texts") and row[1] in roles)
                    or (table == "conversations" and row[1] == phase)
                )
            )
        }
        for table, rows in before.items()
    }
    assert after == expected
    assert after != before
    assert not after["orphan_call_texts"]  # a call's text goes with its call

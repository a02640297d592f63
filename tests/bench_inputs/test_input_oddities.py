"""Odd inputs a run accepts are each warned about by name (issue 24 item 9)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from omlab.bench.datasets.checks import input_warnings
from omlab.bench.datasets.schema import Conversation, Question, Session, Turn
from omlab.llm.spec import ModelSpecError, coerce_model_spec

T0 = datetime(2024, 5, 1, 12, tzinfo=UTC)


def _conversation(
    *, question: str = "Where?", answer: str = "Paris", content: str = "hello", turn_at=T0, questions=True
):
    turn = Turn(id="s1:0", role="user", content=content, created_at=turn_at)
    session = Session(id="s1", date=T0, turns=[turn])
    asked = [Question(id="q1", question=question, answer=answer, type="single-session-user")] if questions else []
    return Conversation(id="c1", sessions=[session], questions=asked, dataset="test")


def _kinds(conversation) -> dict[str, str]:
    return {w.kind: str(w) for w in input_warnings([conversation], now=T0)}


@pytest.mark.parametrize(
    ("kwargs", "kind", "named"),
    [
        ({"question": "  "}, "blank_question", "question 'q1'"),
        ({"answer": ""}, "blank_answer", "question 'q1'"),
        ({"answer": "nan"}, "blank_answer", "question 'q1'"),
        ({"questions": False}, "no_questions", "conversation 'c1'"),
        ({"turn_at": T0 - timedelta(days=2)}, "turn_before_session", "turn 's1:0'"),
        ({"content": "x" * 6_000_000}, "huge_turn", "turn 's1:0'"),
    ],
)
def test_each_oddity_is_warned_about_by_name(kwargs, kind, named):
    kinds = _kinds(_conversation(**kwargs))
    assert kind in kinds and named in kinds[kind]


def test_a_plain_conversation_has_none_of_these_warnings():
    assert not set(_kinds(_conversation())) & {
        "blank_question",
        "blank_answer",
        "no_questions",
        "turn_before_session",
        "huge_turn",
    }


def test_an_empty_fallback_list_is_refused_at_construction():
    with pytest.raises(ModelSpecError, match="at least one model"):
        coerce_model_spec([])

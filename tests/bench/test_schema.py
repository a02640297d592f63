from datetime import UTC, datetime, timedelta

import pytest

from omlab.bench.datasets.schema import LONGMEMEVAL_TYPES, Conversation, DatasetInfo, Question, Session, Turn

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)


def _turn(turn_id: str, role: str = "user", content: str = "hi", offset: int = 0) -> Turn:
    return Turn(id=turn_id, role=role, content=content, created_at=T0 + timedelta(seconds=offset))


def test_turn_rejects_naive_datetime_and_unknown_role():
    with pytest.raises(ValueError, match="timezone-aware"):
        Turn(id="t", role="user", content="x", created_at=datetime(2024, 1, 1))
    with pytest.raises(ValueError, match="role"):
        Turn(id="t", role="system", content="x", created_at=T0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="content"):
        Turn(id="t", role="user", content=3, created_at=T0)  # type: ignore[arg-type]


def test_session_and_question_reject_naive_dates():
    with pytest.raises(ValueError, match="session 's1': date"):
        Session(id="s1", date=datetime(2024, 1, 1), turns=[])
    with pytest.raises(ValueError, match="question_date"):
        Question(id="q", type="x", question="?", answer="a", question_date=datetime(2024, 1, 1))


def test_question_answer_must_be_a_string():
    with pytest.raises(TypeError, match="answer must be a str"):
        Question(id="q", type="x", question="?", answer=15)  # type: ignore[arg-type]


def test_conversation_counts_and_lookups():
    sessions = [
        Session("s1", T0, [_turn("s1:1", content="hello"), _turn("s1:2", "assistant", "hey there", 5)]),
        Session("s2", T0 + timedelta(days=1), [_turn("s2:1", content="bye!")]),
    ]
    question = Question(id="q1", type="single-session-user", question="?", answer="a", evidence_ids=["s2:1", "s1:1"])
    conversation = Conversation("c1", sessions, [question], dataset="test")
    assert conversation.turn_count == 3
    assert conversation.total_chars == len("hello") + len("hey there") + len("bye!") == 18
    assert [turn.id for turn in conversation.iter_turns()] == ["s1:1", "s1:2", "s2:1"]
    assert [turn.content for turn in conversation.evidence_turns(question)] == ["bye!", "hello"]
    assert set(conversation.turns_by_id()) == {"s1:1", "s1:2", "s2:1"}
    assert conversation.metadata == {}


def test_defaults_and_types_constant():
    question = Question(id="q", type="t", question="?", answer="a")
    assert question.evidence_ids == [] and question.extra == {}
    assert not question.is_abstention and question.category is None
    assert len(LONGMEMEVAL_TYPES) == 6 and "abstention" not in LONGMEMEVAL_TYPES
    info = DatasetInfo("x", None, "here", None, "00", 0)
    assert info.n_conversations == 0

import itertools
import re
import time
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.bench.datasets import conversations_digest, generate_synthetic, load_synthetic
from omlab.bench.datasets._synthetic_facts import EVENTS
from omlab.bench.datasets.schema import Conversation

SEEDS = range(8)


def _contains(text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", text, re.IGNORECASE) is not None


def _turns_containing(conversation: Conversation, phrase: str) -> list[str]:
    return [t.id for t in conversation.iter_turns() if _contains(t.content, phrase)]


@pytest.fixture(scope="module")
def conversations():
    return [generate_synthetic(seed, 30_000, n_questions=30) for seed in SEEDS]


def test_same_seed_same_conversation_other_seed_differs():
    first = generate_synthetic(7, 20_000)
    again = generate_synthetic(7, 20_000)
    assert first == again
    assert conversations_digest([first]) == conversations_digest([again])
    assert conversations_digest([generate_synthetic(8, 20_000)]) != conversations_digest([first])


def test_size_tracks_the_target():
    for target in (5_000, 50_000, 200_000):
        conversation = generate_synthetic(3, target)
        estimated = conversation.total_chars / 4
        assert abs(estimated - target) / target < 0.05, (target, estimated)
        assert conversation.metadata["estimated_tokens"] == -(-conversation.total_chars // 4)


def test_one_million_tokens_in_a_few_seconds():
    started = time.perf_counter()
    conversation = generate_synthetic(11, 1_000_000)
    elapsed = time.perf_counter() - started
    assert elapsed < 5, elapsed
    assert 0.97e6 < conversation.total_chars / 4 < 1.03e6
    assert len(conversation.sessions) == 334
    assert len(conversation.questions) == 20


def test_shape_roles_lengths_and_time(conversations):
    for conversation in conversations:
        turns = list(conversation.iter_turns())
        users = [t for t in turns if t.role == "user"]
        assistants = [t for t in turns if t.role == "assistant"]
        assert len(users) == len(assistants)
        assert [t.role for t in turns[:4]] == ["user", "assistant", "user", "assistant"]
        mean = lambda ts: sum(len(t.content) for t in ts) / len(ts)
        assert mean(assistants) > 2 * mean(users)
        assert all(a.created_at < b.created_at for a, b in itertools.pairwise(turns))
        dates = [s.date for s in conversation.sessions]
        assert all((b.date() - a.date()).days >= 1 for a, b in itertools.pairwise(dates))
        assert all(q.question_date > turns[-1].created_at for q in conversation.questions)
        assert len({t.id for t in turns}) == len(turns)


def test_topics_vary(conversations):
    text = " ".join(t.content for t in conversations[0].iter_turns()).lower()
    for marker in ("recipe", "itinerary", "test", "reps", "novel", "film"):
        assert marker in text or marker + "s" in text


def test_question_mix_and_ids(conversations):
    for conversation in conversations:
        kinds = [q.extra["kind"] for q in conversation.questions]
        assert {kind: kinds.count(kind) for kind in set(kinds)} == {
            "single-session-user": 9,
            "knowledge-update": 6,
            "temporal-reasoning": 6,
            "multi-session": 5,
            "abstention": 4,
        }  # 30 questions: 30/20/20/15/15 % (largest remainder)
        ids = [q.id for q in conversation.questions]
        assert len(set(ids)) == len(ids)
        for question in conversation.questions:
            assert question.id.endswith("_abs") == question.is_abstention
            assert question.type != "abstention"


def test_evidence_points_to_planting_user_turns(conversations):
    for conversation in conversations:
        by_id = conversation.turns_by_id()
        for question in conversation.questions:
            if question.is_abstention:
                assert question.evidence_ids == []
                continue
            assert question.evidence_ids
            turns = [by_id[turn_id] for turn_id in question.evidence_ids]
            assert all(t.role == "user" and t.evidence_id == t.id for t in turns)
            assert [t.created_at for t in turns] == sorted(t.created_at for t in turns)
        cited = {i for q in conversation.questions for i in q.evidence_ids}
        marked = {t.id for t in conversation.iter_turns() if t.evidence_id is not None}
        assert cited == marked


def test_single_session_answers_live_only_in_their_evidence(conversations):
    for conversation in conversations:
        for question in conversation.questions:
            if question.type == "single-session-user" and not question.is_abstention:
                assert _turns_containing(conversation, question.answer) == question.evidence_ids


def test_knowledge_updates_answer_with_the_latest_value(conversations):
    seen_double_update = False
    for conversation in conversations:
        for question in (q for q in conversation.questions if q.type == "knowledge-update"):
            previous = question.extra["previous_values"]
            assert len(question.evidence_ids) == len(previous) + 1
            seen_double_update |= len(previous) == 2
            assert question.answer not in previous
            # the latest value is introduced by the last update and appears nowhere else
            assert _turns_containing(conversation, question.answer) == question.evidence_ids[-1:]
            evidence = conversation.evidence_turns(question)
            assert _contains(evidence[0].content, previous[0])
            for turn, old in zip(evidence[1:], previous, strict=True):
                assert _contains(turn.content, old)  # each update names the value it replaces
    assert seen_double_update


def test_temporal_answers_follow_from_the_turn_dates(conversations):
    past_by_base = {event.base: event.past for event in EVENTS}
    forms = set()
    for conversation in conversations:
        for question in (q for q in conversation.questions if q.type == "temporal-reasoning"):
            first, second = conversation.evidence_turns(question)
            assert "today" in first.content.lower() and "today" in second.content.lower()
            forms.add(question.extra["form"])
            if question.extra["form"] == "days":
                days = (second.created_at.date() - first.created_at.date()).days
                assert days >= 1
                assert question.answer == f"{days} days"
            else:
                assert question.answer in question.question
                assert past_by_base[question.answer] in first.content
    assert forms == {"days", "order"}


def test_multi_session_totals_sum_the_evidence(conversations):
    for conversation in conversations:
        for question in (q for q in conversation.questions if q.type == "multi-session"):
            evidence = conversation.evidence_turns(question)
            assert len(evidence) >= 2
            sessions = {turn.id.split(":")[0] for turn in evidence}
            assert len(sessions) == len(evidence)
            amounts = [int(re.search(r"\b(\d)\b", turn.content).group(1)) for turn in evidence]
            assert sum(amounts) == int(question.answer)


def test_abstention_subjects_never_appear(conversations):
    for conversation in conversations:
        for question in (q for q in conversation.questions if q.is_abstention):
            assert question.type == "single-session-user"
            for marker in question.extra["never_mentioned"]:
                assert _turns_containing(conversation, marker) == []


def test_options_are_validated():
    with pytest.raises(ValueError, match="n_questions asks for"):
        generate_synthetic(1, 10_000, n_questions=200)
    with pytest.raises(ValueError, match="target_tokens"):
        generate_synthetic(1, 0)
    with pytest.raises(ValueError, match="timezone-aware"):
        generate_synthetic(1, 1000, start=datetime(2024, 1, 1))
    with pytest.raises(ValueError, match="mix"):
        generate_synthetic(1, 1000, mix={"trivia": 1.0})
    with pytest.raises(ValueError, match="session_tokens"):
        generate_synthetic(1, 1000, session_tokens=10)


def test_mix_and_start_options():
    start = datetime(2030, 6, 1, 10, 0, tzinfo=UTC)
    conversation = generate_synthetic(5, 8_000, n_questions=5, mix={"abstention": 1}, start=start)
    assert [q.is_abstention for q in conversation.questions] == [True] * 5
    assert conversation.sessions[0].date == start
    assert len(conversation.sessions) == 3  # MIN_SESSIONS


def test_load_synthetic_describes_the_data():
    info, conversations = load_synthetic([1, 2], 5_000, n_questions=6)
    assert info.name == "synthetic" and info.n_conversations == 2
    assert info.sha256 == conversations_digest(conversations)
    assert info.revision == "omlab-synthetic/1"
    assert [c.id for c in conversations] == ["synthetic-1-5000", "synthetic-2-5000"]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), target=st.integers(500, 20_000), n=st.integers(0, 25))
def test_any_seed_gives_a_valid_conversation(seed, target, n):
    conversation = generate_synthetic(seed, target, n_questions=n)
    by_id = conversation.turns_by_id()
    assert len(conversation.questions) == n
    for question in conversation.questions:
        assert all(turn_id in by_id for turn_id in question.evidence_ids)
        assert question.answer
    assert generate_synthetic(seed, target, n_questions=n) == conversation

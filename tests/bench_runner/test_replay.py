"""Replay of a small synthetic conversation: rows present, consistent, and nothing leaks."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omlab.bench.datasets import generate_synthetic
from omlab.bench.datasets.anonymised_ids import thread_key
from omlab.bench.datasets.schema import Conversation, Question, Session, Turn
from omlab.bench.run.replay import (
    conversation_messages,
    ingest_batches,
    memory_prompt_tokens,
    replay_conversation,
)
from omlab.engine.messages import Message
from omlab.engine.scheduler import FixedLatency
from omlab.llm.client import ModelClient
from omlab.llm.offline import get_offline_model, register_offline_model

ENGINE = {
    "observation": {
        "model": "omlab/observer",
        "messageTokens": 1200,
        "bufferTokens": 0.25,
        "blockAfter": 1.2,
    },
    "reflection": {"model": "omlab/reflector", "observationTokens": 1500},
}


def _client(on_call):
    return ModelClient(on_call=on_call)


@pytest.fixture(scope="module")
def conversation() -> Conversation:
    return generate_synthetic(5, 6000, n_questions=4)


async def test_steps_are_numbered_and_observed_messages_add_up(conversation):
    result = await replay_conversation(conversation, ENGINE, make_client=_client, latency=FixedLatency(3.0))
    steps = result.rows.steps
    assert result.n_messages == conversation.turn_count
    assert [s["step"] for s in steps] == list(range(1, conversation.turn_count + 2))  # + the finalize row
    assert steps[-1]["message_id"] is None and steps[-1]["blocked_s"] == 0.0
    assert all(a["ts"] <= b["ts"] for a, b in itertools.pairwise(steps))
    # every message is observed exactly once, or still pending at the end
    unobserved = await result.memory.get_unobserved_messages(result.thread_id)
    assert len(result.observed_message_ids) == len(set(result.observed_message_ids))
    assert len(result.observed_message_ids) + len(unobserved) == result.n_messages
    assert result.observed_message_ids, "a 6k-token conversation with a 1.2k threshold gets observed"
    # the steps' flags match the engine's activity
    assert any(s["activated"] for s in steps)
    assert sum(s["blocked_s"] for s in steps) == pytest.approx(sum(s["blocked_s"] for s in steps[:-1]))


async def test_context_tokens_add_pending_observations_and_the_fixed_prompt(conversation):
    result = await replay_conversation(conversation, ENGINE, make_client=_client, latency=FixedLatency(3.0))
    overhead = memory_prompt_tokens(result.memory.counter)
    assert overhead > 100  # the memory instructions are a few hundred tokens
    for step in result.rows.steps:
        expected = step["pending_tokens"] + step["observation_tokens"] + (overhead if step["observation_tokens"] else 0)
        assert step["context_tokens"] == expected


async def test_events_and_calls_are_consistent(conversation):
    result = await replay_conversation(conversation, ENGINE, make_client=_client, latency=FixedLatency(3.0))
    events, calls = result.rows.events, result.rows.model_calls
    types = Counter(e["type"] for e in events)
    # one data-om-status part and one step_progress debug event per ingest step (not for finalize)
    assert types["data-om-status"] == result.n_steps == types["step_progress"]
    assert {e["kind"] for e in events if e["type"].startswith("data-")} == {"data"}
    assert {e["kind"] for e in events if not e["type"].startswith("data-")} == {"debug"}
    assert all(e["conversation_id"] == conversation.id for e in events + calls)
    # every observer/reflector call belongs to a cycle the events announced
    started = {e["cycle_id"] for e in events if e["type"] in ("data-om-buffering-start", "data-om-observation-start")}
    assert calls and {c["role"] for c in calls} <= {"observer", "reflector"}
    assert {c["cycle_id"] for c in calls} <= started
    observer_cycles = [
        e
        for e in events
        if e["type"] in ("data-om-buffering-start", "data-om-observation-start")
        and e["operation_type"] == "observation"
    ]
    assert sum(c["role"] == "observer" for c in calls) == len(observer_cycles)
    # typed columns come from the payload
    activation = next(e for e in events if e["type"] == "data-om-activation")
    assert activation["tokens_in"] == activation["payload"]["tokensActivated"]
    assert activation["tokens_out"] == activation["payload"]["observationTokens"]
    assert activation["triggered_by"] == activation["payload"]["triggeredBy"]


async def test_blocking_is_measured_in_virtual_time(conversation):
    """Synchronous observation (no buffering) blocks the actor for each call's latency."""
    engine = {
        "observation": {"model": "omlab/observer", "messageTokens": 1200, "bufferTokens": False},
        "reflection": {"model": "omlab/reflector", "observationTokens": 100_000},
    }
    result = await replay_conversation(conversation, engine, make_client=_client, latency=FixedLatency(7.0))
    observed_steps = [s for s in result.rows.steps if s["observed"]]
    assert observed_steps
    assert all(s["blocked_s"] == pytest.approx(7.0) for s in observed_steps)
    assert sum(s["blocked_s"] for s in result.rows.steps) == pytest.approx(7.0 * len(observed_steps))


def test_ids_are_anonymised_and_stable():
    assert thread_key("answer_deadbeef_abs") == thread_key("answer_deadbeef_abs")
    key = thread_key("e47becba_abs")
    assert key.startswith("c-") and len(key) == 12 and "abs" not in key and "e47becba" not in key
    start = datetime(2024, 3, 1, 9, tzinfo=UTC)
    conversation = _leaky_conversation(start)
    messages = conversation_messages(conversation)
    assert [m.id for m in messages] == [f"{thread_key(conversation.id)}-m{n:05d}" for n in range(1, 5)]
    assert [m.created_at for m in messages] == [t.created_at for t in conversation.iter_turns()]


async def test_nothing_a_model_sees_names_the_dataset_ids():
    """LongMemEval-style ids (``answer_…``, ``_abs``) and evidence ids never reach a model."""
    seen: list[str] = []

    class SpyObserver:
        name = "spy-observer"

        def generate(self, messages, **options):
            seen.extend(str(m.get("content")) for m in messages)
            return get_offline_model("observer").generate(messages, **options)

    register_offline_model("spy-observer", SpyObserver)
    conversation = _leaky_conversation(datetime(2024, 3, 1, 9, tzinfo=UTC), repeat=40)
    engine = {
        "observation": {"model": "omlab/spy-observer", "messageTokens": 500, "bufferTokens": False},
        "reflection": {"model": "omlab/reflector", "observationTokens": 50_000},
    }
    result = await replay_conversation(conversation, engine, make_client=_client, latency=FixedLatency(1.0))
    assert seen, "the observer ran"
    text = "\n".join(seen) + "\n".join(str(e["payload"]) for e in result.rows.events)
    for leak in ("answer_", "_abs", "deadbeef", "s001:", conversation.id):
        assert leak not in text


def test_pair_ingestion_groups_a_user_turn_with_its_replies():
    at = datetime(2024, 1, 1, tzinfo=UTC)
    roles = ["assistant", "user", "assistant", "assistant", "user", "user", "assistant"]
    messages = [Message.of(role, f"m{i}", at + timedelta(seconds=i), id=f"m{i}") for i, role in enumerate(roles)]
    batches = ingest_batches(messages, "pair")
    assert [[m.id for m in b] for b in batches] == [["m0"], ["m1", "m2", "m3"], ["m4"], ["m5", "m6"]]
    assert len(ingest_batches(messages, "message")) == len(messages)
    with pytest.raises(Exception, match="ingest"):
        ingest_batches(messages, "session")


async def test_pair_ingestion_stamps_each_step_with_its_last_message(conversation):
    result = await replay_conversation(
        conversation, ENGINE, make_client=_client, latency=FixedLatency(3.0), ingest="pair"
    )
    assert result.n_steps == sum(1 for t in conversation.iter_turns() if t.role == "user")
    assert len(result.rows.steps) == result.n_steps + 1


async def test_unknown_scope_is_refused_clearly(conversation):
    with pytest.raises(Exception, match="scope must be 'thread' or 'resource'"):
        await replay_conversation(conversation, ENGINE, make_client=_client, latency=FixedLatency(1.0), scope="galaxy")


async def test_resource_scope_gives_each_session_its_own_thread(conversation):
    observation = {k: v for k, v in ENGINE["observation"].items() if k not in ("blockAfter", "bufferActivation")}
    engine = {
        **ENGINE,
        "scope": "resource",
        "observation": {**observation, "bufferTokens": False},
        "reflection": {
            k: v for k, v in ENGINE.get("reflection", {}).items() if k not in ("blockAfter", "bufferActivation")
        },
    }
    result = await replay_conversation(
        conversation, engine, make_client=_client, latency=FixedLatency(1.0), scope="resource", ingest="pair"
    )
    threads = {row["thread_id"] for row in result.rows.steps if row["message_id"] is not None}
    assert len(threads) == len(conversation.sessions)
    assert result.resource_id and result.thread_id == f"{result.resource_id}-ask"
    assert len(set(result.observed_message_ids)) == len(result.observed_message_ids)


def _leaky_conversation(start: datetime, repeat: int = 2) -> Conversation:
    """A conversation whose dataset ids look like LongMemEval's evidence labels."""
    turns = []
    for i in range(repeat):
        turns.append(
            Turn(
                id=f"answer_deadbeef_1:{2 * i + 1}",
                role="user",
                content=f"I adopted a cat called Miso, note {i}.",
                created_at=start + timedelta(minutes=2 * i),
                evidence_id=f"answer_deadbeef_1:{2 * i + 1}",
            )
        )
        turns.append(
            Turn(
                id=f"answer_deadbeef_1:{2 * i + 2}",
                role="assistant",
                content="Lovely name!",
                created_at=start + timedelta(minutes=2 * i + 1),
            )
        )
    session = Session(id="answer_deadbeef_1", date=start, turns=turns)
    question = Question(
        id="deadbeef_abs",
        type="single-session-user",
        question="What is my dog's name?",
        answer="never mentioned",
        is_abstention=True,
        evidence_ids=[turns[0].id],
    )
    conversation = Conversation(id="answer_deadbeef_abs", sessions=[session], questions=[question], dataset="test")
    return conversation


@given(st.lists(st.sampled_from(["user", "assistant"]), max_size=30))
def test_pair_batches_keep_every_message_in_order(roles):
    at = datetime(2024, 1, 1, tzinfo=UTC)
    messages = [Message.of(role, "x", at, id=f"m{i}") for i, role in enumerate(roles)]
    batches = ingest_batches(messages, "pair")
    assert [m.id for batch in batches for m in batch] == [m.id for m in messages]
    assert all(batch for batch in batches)
    # a user message always opens a batch and nothing but assistant replies follow it
    for index, batch in enumerate(batches):
        assert all(m.role == "assistant" for m in batch[1:])
        assert batch[0].role == "user" or index == 0

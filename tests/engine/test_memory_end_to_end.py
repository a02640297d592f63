"""End to end: a ~100k-token conversation through ObservationalMemory with the offline models."""

from __future__ import annotations

import asyncio
import inspect
from datetime import UTC, datetime

import pytest
from conversation_factory import make_conversation

from omlab import ObservationalMemory
from omlab.engine.clock import VirtualClock
from omlab.engine.token_counter import TokenCounter

MESSAGE_TOKENS = 4_000
OBSERVATION_TOKENS = 6_000


def _memory(**extra):
    clock = VirtualClock(datetime(2025, 3, 3, tzinfo=UTC))
    parts, debug = [], []
    om = ObservationalMemory(
        {
            "observation": {"model": "omlab/observer", "messageTokens": MESSAGE_TOKENS, "bufferTokens": False},
            "reflection": {"model": "omlab/reflector", "observationTokens": OBSERVATION_TOKENS},
        },
        clock=clock,
        on_event=parts.append,
        on_debug_event=debug.append,
        **extra,
    )
    return om, clock, parts, debug


async def _replay(om, clock, messages, thread_id="t1"):
    results = []
    for message in messages:
        clock.set(message.created_at)
        results.append(await om.add_messages(thread_id, [message]))
    return results


@pytest.fixture(scope="module")
def conversation():
    return make_conversation(100_000)


async def test_observes_reflects_and_keeps_budgets(conversation):
    om, clock, _parts, _debug = _memory()
    counter = TokenCounter()
    max_message = max(counter.count_messages([m]) for m in conversation)
    results = await _replay(om, clock, conversation)

    assert sum(counter.count_message(m) for m in conversation) > 90_000
    assert sum(r.observed for r in results) >= 10
    history = await om.get_history("t1")
    assert len(history) >= 2, "at least one reflection generation"
    assert history[-1].generation_count == len(history) - 1
    assert all(r.superseded_by for r in history[:-1]) and history[-1].superseded_by is None

    # budgets: after every step the raw window is below the threshold and the log below the
    # reflection threshold (the offline reflector meets its target)
    for r in results:
        assert r.status.pending_tokens < MESSAGE_TOKENS
        assert r.status.observation_tokens < OBSERVATION_TOKENS
    context = await om.build_context("t1", current_date=datetime(2025, 4, 1, tzinfo=UTC))
    raw = [m for m in context if m["role"] != "system"]
    assert raw, "the unobserved tail is shown raw"
    system_text = "\n".join(m["content"] for m in context if m["role"] == "system")
    assert "<observations>" in system_text and "</observations>" in system_text
    assert "ago)" in system_text  # relative dates against current_date
    assert "🟡" not in system_text and "🟢" not in system_text
    assert counter.count_string(system_text) < OBSERVATION_TOKENS + 1_500  # log + fixed prompts
    assert max_message < MESSAGE_TOKENS

    # every message was observed exactly once or is still pending
    observed = [mid for r in results for mid in r.observed_message_ids]
    assert len(observed) == len(set(observed))
    pending = {m.id for m in await om.get_unobserved_messages("t1")}
    assert set(observed) | pending == {m.id for m in conversation}
    assert not set(observed) & pending


async def test_events_come_in_documented_order(conversation):
    om, clock, parts, debug = _memory()
    await _replay(om, clock, conversation[:400])
    types = [p.type for p in parts]
    assert types[0] == "data-om-status"
    open_cycles: dict[str, str] = {}
    for part in parts:
        data = part.data
        if part.type == "data-om-observation-start":
            assert data["operationType"] in ("observation", "reflection")
            assert {
                "cycleId",
                "startedAt",
                "tokensToObserve",
                "recordId",
                "threadId",
                "threadIds",
                "config",
            } <= data.keys()
            open_cycles[data["cycleId"]] = data["operationType"]
        elif part.type == "data-om-observation-end":
            assert open_cycles.pop(data["cycleId"]) == data["operationType"]
            assert {"completedAt", "durationMs", "tokensObserved", "observationTokens", "observations"} <= data.keys()
        elif part.type == "data-om-status":
            windows = data["windows"]
            assert set(windows["active"]) == {"messages", "observations"}
            assert set(windows["buffered"]) == {"observations", "reflection"}
    assert not open_cycles
    ends = [p.data["operationType"] for p in parts if p.type == "data-om-observation-end"]
    assert "observation" in ends and "reflection" in ends
    debug_types = [e.type for e in debug]
    assert debug_types.index("observation_triggered") < debug_types.index("observation_complete")
    assert "reflection_triggered" in debug_types and "reflection_complete" in debug_types
    assert "step_progress" in debug_types


async def test_state_survives_a_restart_with_duckdb(tmp_path, conversation):
    path = tmp_path / "om.duckdb"
    om, clock, _, _ = _memory(storage=str(path))
    await _replay(om, clock, conversation[:150])
    before = await om.get_record("t1")
    pending_before = [m.id for m in await om.get_unobserved_messages("t1")]
    om.storage.close()

    again, clock2, _, _ = _memory(storage=str(path))
    after = await again.get_record("t1")
    assert after.id == before.id
    assert after.active_observations == before.active_observations
    assert after.last_observed_at == before.last_observed_at
    assert [m.id for m in await again.get_unobserved_messages("t1")] == pending_before
    await _replay(again, clock2, conversation[150:200])
    again.storage.close()


async def test_single_message_over_threshold_is_observed_on_its_first_step():
    om, _clock, _parts, _ = _memory()
    big = make_conversation(12_000, seed=3)
    text = " ".join(m.text for m in big)
    from omlab.engine.messages import Message

    message = Message.of("user", text, datetime(2025, 3, 3, 10, tzinfo=UTC), id="huge")
    result = await om.add_messages("t2", [message])
    assert result.observed and result.observed_message_ids == ["huge"]


async def test_sync_facade_works_outside_an_event_loop():
    om, clock, _, _ = _memory()
    facade = om.sync()
    messages = make_conversation(6_000, seed=5)
    for m in messages:
        clock.set(m.created_at)
        facade.add_messages("t3", [m])
    assert facade.get_observations("t3").startswith("Date:")
    assert facade.status("t3").pending_tokens < MESSAGE_TOKENS
    facade.finalize("t3")
    facade.settle()
    pending = facade.get_unobserved_messages("t3")
    assert pending and all(m.thread_id == "t3" for m in pending)
    assert facade.status("t3").pending_tokens == om.counter.count_messages(pending)
    assert [m.id for m in pending] == [m.id for m in messages[-len(pending) :]]  # the newest tail stays raw
    facade.close()


def test_the_sync_facade_has_a_blocking_twin_of_every_public_coroutine():
    from omlab.engine.memory import ObservationalMemory
    from omlab.engine.sync_memory import AsyncMemory, SyncObservationalMemory

    coroutines = {
        name
        for name, member in inspect.getmembers(ObservationalMemory, inspect.iscoroutinefunction)
        if not name.startswith("_")
    }
    assert coroutines, "ObservationalMemory should have public coroutines"
    missing = sorted(name for name in coroutines if not hasattr(SyncObservationalMemory, name))
    assert not missing, f"SyncObservationalMemory lacks {missing}"
    still_async = sorted(
        name for name in coroutines if inspect.iscoroutinefunction(getattr(SyncObservationalMemory, name))
    )
    assert not still_async
    # the protocol the facade types its memory with states the memory's real signatures
    for name in coroutines | {"recall_tool"}:
        assert inspect.signature(getattr(AsyncMemory, name)) == inspect.signature(getattr(ObservationalMemory, name)), (
            name
        )


def test_the_sync_facade_reads_the_resolved_config_and_the_threads():
    om, clock, _, _ = _memory()
    facade = om.sync()
    message = make_conversation(200, seed=7)[0]
    clock.set(message.created_at)
    facade.add_messages("t4", [message])
    assert facade.get_resolved_config() == asyncio.run(om.get_resolved_config())
    assert [thread.id for thread in facade.list_threads("t4")] == ["t4"]
    facade.close()

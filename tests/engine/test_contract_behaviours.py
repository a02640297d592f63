"""Documented behaviours of the engine contract (issue 13 §2), each pinned by a test."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from conversation_factory import make_conversation

from omlab import ModelByInputTokens, ObservationalMemory, OMConfig
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message, Part
from omlab.engine.observation_text import parse_observer_output
from omlab.engine.relative_time import add_relative_time
from omlab.engine.scheduler import FixedLatency, VirtualScheduler
from omlab.engine.thresholds import activation_ratio, projected_message_removal, retention_floor
from omlab.engine.ttl import activation_ttl_ms, provider_cache_ttl_ms
from omlab.llm.offline import register_offline_model
from omlab.llm.offline.base import OfflineResult
from omlab.storage import open_storage
from omlab.storage.serialize import record_from_dict

# --- <current-task> ends only at a closing tag at the start (or end) of a line ---------------


def test_current_task_mentioning_its_closing_tag_inline_is_not_cut():
    reply = (
        "<observations>\n* 🔴 (10:00) User asked about XML parsing\n</observations>\n"
        "<current-task>\nPrimary: explain why a literal </current-task> inside text breaks naive parsers\n"
        "Secondary: waiting for user\n</current-task>\n"
        "<suggested-response>\nAsk which parser they use.\n</suggested-response>\n"
    )
    out = parse_observer_output(reply)
    assert out.current_task == (
        "Primary: explain why a literal </current-task> inside text breaks naive parsers\nSecondary: waiting for user"
    )
    assert out.suggested_response == "Ask which parser they use."


def test_one_line_current_task_still_parses():
    out = parse_observer_output(
        "<observations>\n* 🔴 (10:00) a\n</observations>\n<current-task>Fix the bug</current-task>\n"
    )
    assert out.current_task == "Fix the bug"


# --- projectedMessageRemoval and the pure threshold helpers ---------------------------------


def test_projected_removal_is_zero_below_the_retention_floor():
    # threshold 10k, ratio 0.8 -> floor 2,000; 1,500 pending tokens: nothing would be removed
    assert projected_message_removal([900, 400], 1_500, 0.8, 10_000) == 0
    assert projected_message_removal([900, 400], 1_990, 0.8, 10_000) == 0
    assert projected_message_removal([900, 400], 3_000, 0.8, 10_000) == 1_300


def test_threshold_helpers_clamp_ratios_and_floors():
    assert retention_floor(1.5, 10_000) == 0
    assert retention_floor(-0.5, 10_000) == 10_000
    assert retention_floor(50_000, 10_000) == 10_000  # an absolute floor never exceeds the threshold
    assert activation_ratio(1.7, 10_000) == 1.0
    assert activation_ratio(-0.2, 10_000) == 0.0
    assert activation_ratio(50_000, 10_000) == 0.0


# --- idle and provider-change activation survive a restart ----------------------------------

START = datetime(2025, 3, 3, tzinfo=UTC)


def _buffered_memory(storage, clock, parts, **observation):
    return ObservationalMemory(
        {
            "observation": {"model": "omlab/observer", "messageTokens": 4_000, **observation},
            "reflection": {"model": "omlab/reflector", "observationTokens": 6_000},
        },
        storage=storage,
        scheduler=VirtualScheduler(clock, FixedLatency(1.0)),
        on_event=parts.append,
    )


async def _replay_steady(om, clock, messages, **kwargs):
    for index, message in enumerate(messages):
        message.created_at = START + timedelta(minutes=index)
        clock.set(message.created_at)
        await om.add_messages("t", [message], **kwargs)
    await om.settle()


def _activations(parts, trigger):
    return [p.data for p in parts if p.type == "data-om-activation" and p.data["triggeredBy"] == trigger]


async def test_idle_activation_after_restart_reads_the_last_activity_from_storage(tmp_path):
    storage = open_storage(tmp_path / "om.duckdb")
    clock, parts = VirtualClock(START), []
    first = _buffered_memory(storage, clock, parts, activateAfterIdle="5m")
    base = make_conversation(3_500, seed=2)  # below the threshold: chunks wait
    await _replay_steady(first, clock, base)
    assert (await first.get_record("t")).buffered_chunks

    parts.clear()
    clock.set(base[-1].created_at + timedelta(minutes=30))
    restarted = _buffered_memory(storage, clock, parts, activateAfterIdle="5m")
    result = await restarted.add_messages("t", [Message.of("user", "Back after a break.", clock.now())])
    assert result.activated
    (ttl,) = _activations(parts, "ttl")[:1]
    last_assistant = next(m for m in reversed(base) if m.role == "assistant")
    assert ttl["lastActivityAt"] == int(last_assistant.created_at.timestamp() * 1000)


async def test_provider_change_after_restart_reads_the_last_model_from_stored_assistant_messages(tmp_path):
    storage = open_storage(tmp_path / "om.duckdb")
    clock, parts = VirtualClock(START), []
    first = _buffered_memory(storage, clock, parts, activateOnProviderChange=True)
    base = make_conversation(3_500, seed=4)
    for message in base:
        if message.role == "assistant":
            message.metadata.update({"provider": "openai", "modelId": "gpt-4o"})
    await _replay_steady(first, clock, base)
    assert (await first.get_record("t")).buffered_chunks

    parts.clear()
    clock.set(base[-1].created_at + timedelta(minutes=1))
    restarted = _buffered_memory(storage, clock, parts, activateOnProviderChange=True)
    result = await restarted.add_messages(
        "t", [Message.of("user", "Switching models.", clock.now())], actor_model="anthropic/claude-sonnet-4-5"
    )
    assert result.activated
    (change,) = _activations(parts, "provider_change")[:1]
    assert change["previousModel"] == "openai/gpt-4o"
    assert change["currentModel"] == "anthropic/claude-sonnet-4-5"


async def test_idle_is_measured_from_the_last_non_data_part():
    clock, parts = VirtualClock(START), []
    om = _buffered_memory(None, clock, parts, activateAfterIdle="10m")
    base = make_conversation(3_500, seed=2)
    for index, message in enumerate(base):
        message.created_at = START + timedelta(minutes=index)
    last = base[-1] if base[-1].role == "assistant" else base[-2]
    # the reply streamed for 20 minutes; a data part written later does not count as activity
    last.parts[-1].created_at = last.created_at + timedelta(minutes=20)
    last.parts.append(Part(type="data-ui-note", created_at=last.created_at + timedelta(minutes=40)))
    for message in base:
        clock.set(message.created_at)
        await om.add_messages("t", [message])
    await om.settle()
    assert (await om.get_record("t")).buffered_chunks

    clock.set(last.created_at + timedelta(minutes=27))  # 27 min after createdAt, 7 min after the text part
    result = await om.add_messages("t", [Message.of("user", "Still there?", clock.now())])
    assert not result.activated
    clock.set(last.created_at + timedelta(minutes=31))
    result = await om.add_messages("t", [Message.of("user", "Hello?", clock.now())])
    assert result.activated
    assert _activations(parts, "ttl")[0]["lastActivityAt"] == int(last.parts[-2].created_at.timestamp() * 1000)


# --- auto TTL ---------------------------------------------------------------------------------


def test_openai_prompt_cache_retention_changes_the_auto_ttl():
    assert provider_cache_ttl_ms("openai/gpt-4o") == 5 * 60_000
    assert provider_cache_ttl_ms("openai/gpt-4o", {"openai": {"promptCacheRetention": "24h"}}) == 60 * 60_000
    assert provider_cache_ttl_ms("openai/gpt-5.5", {"openai": {"promptCacheRetention": "in_memory"}}) == 5 * 60_000
    assert activation_ttl_ms("auto", "openai/gpt-4o", {"openai": {"promptCacheRetention": "24h"}}) == 60 * 60_000


def test_google_auto_ttl_is_the_references_24_hours():
    assert provider_cache_ttl_ms("google/gemini-2.5-flash") == 24 * 60 * 60_000


def test_per_provider_activate_after_idle_map():
    config = OMConfig.from_options({"activateAfterIdle": {"OpenAI": "10m", "anthropic": "auto", "default": 60_000}})
    setting = config.observation.activate_after_idle
    assert setting == {"openai": 600_000, "anthropic": "auto", "default": 60_000}
    assert activation_ttl_ms(setting, "openai/gpt-4o") == 600_000
    assert activation_ttl_ms(setting, "anthropic/claude-sonnet-4-5") == 5 * 60_000
    assert activation_ttl_ms(setting, "groq/llama-3.3-70b") == 60_000
    assert activation_ttl_ms({"openai": "10m"}, "groq/llama-3.3-70b") is None


async def test_activation_markers_carry_the_resolved_ttl_not_auto():
    clock, parts = VirtualClock(START), []
    om = _buffered_memory(None, clock, parts, activateAfterIdle="auto")
    base = make_conversation(3_500, seed=2)
    await _replay_steady(om, clock, base, actor_model="openai/gpt-4o", actor_provider_options={})
    clock.set(base[-1].created_at + timedelta(minutes=90))
    await om.add_messages(
        "t",
        [Message.of("user", "Back.", clock.now())],
        actor_model="openai/gpt-4o",
        actor_provider_options={"openai": {"promptCacheRetention": "24h"}},
    )
    (ttl,) = _activations(parts, "ttl")[:1]
    assert ttl["config"]["activateAfterIdle"] == 60 * 60_000
    assert ttl["ttlExpiredMs"] >= 29 * 60_000


# --- blockAfter without buffering ----------------------------------------------------------


def test_block_after_with_buffering_off_is_ignored_with_a_warning():
    with pytest.warns(UserWarning, match=r"observation\.blockAfter: ignored"):
        config = OMConfig.from_options({"observation": {"bufferTokens": False, "blockAfter": 1.5}})
    assert config.observation.block_after is None and not config.observation.async_enabled
    with pytest.warns(UserWarning, match=r"reflection\.blockAfter: ignored"):
        config = OMConfig.from_options({"observation": {"bufferTokens": False}, "reflection": {"blockAfter": 1.5}})
    assert config.reflection.block_after is None


# --- SerializedMemoryConfig builds an engine ------------------------------------------------

_SERIALIZED = {
    "observationalMemory": {
        "model": "omlab/observer",
        "scope": "thread",
        "activateAfterIdle": "5m",
        "observation": {"messageTokens": 2_000, "bufferTokens": 500, "blockAfter": 1.5},
        "reflection": {"observationTokens": 6_000},
    },
    "vector": False,
}


def test_an_omconfig_from_a_serialized_memory_config_builds_an_engine():
    config = OMConfig.from_memory_config(_SERIALIZED)
    om = ObservationalMemory(config)
    assert om.config is config
    same = ObservationalMemory.from_memory_config(_SERIALIZED)
    assert same.config.config_hash() == config.config_hash()
    assert same.config.observation.block_after == 3_000


def test_to_memory_config_round_trips():
    for doc in (
        _SERIALIZED,
        {"observationalMemory": True},
        {"observationalMemory": {"shareTokenBudget": True, "observation": {"bufferTokens": False}}},
        {"observationalMemory": {"scope": "resource", "retrieval": {"vector": False, "scope": "thread"}}},
        {"observationalMemory": {"observation": {"model": "omlab/observer", "activateAfterIdle": {"openai": "auto"}}}},
    ):
        config = OMConfig.from_memory_config(doc)
        again = OMConfig.from_memory_config(config.to_memory_config())
        assert again.config_hash() == config.config_hash()
        assert again.extra == config.extra


def test_memory_options_om_cannot_apply_are_warned_about_by_name():
    doc = {**_SERIALIZED, "options": {"lastMessages": 50, "semanticRecall": True, "generateTitle": True}}
    with pytest.warns(UserWarning) as caught:
        OMConfig.from_memory_config(doc)
    named = " ".join(str(w.message) for w in caught)
    for option in ("options.lastMessages", "options.semanticRecall", "options.generateTitle"):
        assert option in named


async def test_read_only_memory_writes_nothing(tmp_path):
    path = tmp_path / "om.duckdb"
    storage = open_storage(path)
    om = ObservationalMemory.from_memory_config({**_SERIALIZED, "options": {"readOnly": True}}, storage=storage)
    assert om.config.read_only
    messages = make_conversation(4_000, seed=3)
    for message in messages:
        await om.add_messages("t", [message])
    await om.observe("t")
    assert storage.get_messages("t") == []
    assert storage.get_thread("t") is None
    assert storage.get_head_record("thread", "t", None) is None


# --- a degenerate Observer reply reaches the hook and the failed part as an error object ---


class LoopingObserver:
    """Always answers with a repetition loop."""

    name = "contract-looping-observer"

    def generate(self, messages, **_):
        loop = "* 🔴 (10:00) User repeated the same thing again\n* 🟡 (10:01) Agent answered the same way\n" * 60
        return OfflineResult(f"<observations>\nDate: Mar 3, 2025\n{loop}</observations>", 10, 0)


register_offline_model(LoopingObserver.name, LoopingObserver)


@pytest.mark.parametrize("mode", ["sync", "buffered", "resource"])
async def test_a_degenerate_observer_reply_reaches_the_end_hook_and_the_failed_part(mode):
    from omlab.engine.errors import DegenerateObserverOutputError, ObserverError  # new in this change

    ends = []
    observation = {"model": f"omlab/{LoopingObserver.name}", "messageTokens": 1_000, "failurePolicy": "continue"}
    observation.update(bufferTokens=0.2) if mode == "buffered" else observation.update(bufferTokens=False)
    clock, parts = VirtualClock(START), []
    om = ObservationalMemory(
        {
            "scope": "resource" if mode == "resource" else "thread",
            "observation": observation,
            "reflection": {"model": "omlab/reflector"},
            "hooks": {"onObservationEnd": ends.append},
        },
        scheduler=VirtualScheduler(clock, FixedLatency(1.0)),
        on_event=parts.append,
    )
    for message in make_conversation(3_000, seed=5):
        clock.set(message.created_at)
        await om.add_messages("t", [message], resource_id="r")
    await om.settle()
    failed = [e for e in ends if e["error"] is not None]
    assert failed and all(isinstance(e["error"], DegenerateObserverOutputError) for e in failed)
    assert isinstance(failed[0]["error"], ObserverError)
    parts_failed = [p.data for p in parts if p.type in ("data-om-observation-failed", "data-om-buffering-failed")]
    assert parts_failed and all(p["errorType"] == "DegenerateObserverOutputError" for p in parts_failed)
    assert all("degenerate" in p["error"] for p in parts_failed)


# --- ModelByInputTokens tiers may be model config objects -----------------------------------


async def test_router_tiers_may_be_model_config_objects_and_markers_show_the_routing_table():
    secret = "sk-test-not-a-real-key"
    router = ModelByInputTokens(
        {
            "upTo": {
                100_000: {
                    "id": "omlab/observer",
                    "apiKey": secret,
                    "url": "http://127.0.0.1:9/v1",
                    "headers": {"X-Org": secret},
                },
                1_000_000: "omlab/reflector",
            }
        }
    )
    assert router.routing_table() == [
        {"up_to": 100_000, "model": "omlab/observer"},
        {"up_to": 1_000_000, "model": "omlab/reflector"},
    ]
    ends, parts = [], []

    def record_end(payload):
        ends.append(payload)

    clock = VirtualClock(START)
    om = ObservationalMemory(
        {
            "observation": {"model": router, "messageTokens": 1_000, "bufferTokens": False},
            "reflection": {"model": "omlab/reflector"},
            "hooks": {"onObservationEnd": record_end},
        },
        clock=clock,
        on_event=parts.append,
    )
    for message in make_conversation(2_000, seed=6):
        clock.set(message.created_at)
        await om.add_messages("t", [message])
    assert ends and ends[0]["error"] is None and ends[0]["model"] == "omlab/observer"
    start = next(p.data for p in parts if p.type == "data-om-observation-start")
    assert start["config"]["observerModel"] == "ModelByInputTokens(100000=omlab/observer,1000000=omlab/reflector)"
    assert start["config"]["observerRouting"] == [
        {"upTo": 100_000, "model": "omlab/observer"},
        {"upTo": 1_000_000, "model": "omlab/reflector"},
    ]
    shown = repr(router) + repr(om.config) + json.dumps(om.config.to_dict(), default=str) + repr(parts)
    assert secret not in shown and "object at 0x" not in shown


# --- retrieval: instructions from the first message; search only when it can run -----------


async def test_recall_instructions_are_in_the_context_before_any_observation():
    om = ObservationalMemory({"model": "omlab/observer", "retrieval": True})
    await om.add_messages("t", [Message.of("user", "Hi, remember our trip?", START)], resource_id="r")
    context = await om.build_context("t", current_date=START)
    system = [m["content"] for m in context if m["role"] == "system"]
    assert system and "recall" in system[0] and 'mode="threads"' in system[0]
    assert context[-1] == {"role": "user", "content": "Hi, remember our trip?"}


async def test_search_mode_is_offered_only_when_it_can_run():
    om = ObservationalMemory({"model": "omlab/observer", "retrieval": True})
    await om.add_messages("t", [Message.of("user", "Hi", START)], resource_id="r")
    tool = om.recall_tool("t")
    assert tool.schema["function"]["parameters"]["properties"]["mode"]["enum"] == ["messages", "threads"]
    context = await om.build_context("t", current_date=START)
    assert 'mode="search"' not in context[0]["content"]
    assert "not available" in tool.run({"mode": "search", "query": "hi"})["error"]

    extended = ObservationalMemory({"model": "omlab/observer", "retrieval": True}, keyword_search=True)
    await extended.add_messages("t", [Message.of("user", "Hi", START)], resource_id="r")
    assert "search" in extended.recall_tool("t").schema["function"]["parameters"]["properties"]["mode"]["enum"]
    context = await extended.build_context("t", current_date=START)
    assert 'mode="search"' in context[0]["content"]


# --- superseded generations and stored chunks in other shapes -------------------------------


async def test_a_superseded_generation_keeps_no_buffered_reflection_state():
    clock, parts = VirtualClock(START), []
    om = ObservationalMemory(
        {
            "observation": {"model": "omlab/observer", "messageTokens": 1_500, "bufferTokens": 0.2},
            "reflection": {"model": "omlab/reflector", "observationTokens": 1_200},
        },
        scheduler=VirtualScheduler(clock, FixedLatency(1.0)),
        on_event=parts.append,
    )
    await _replay_steady(om, clock, make_conversation(40_000, seed=7))
    history = await om.get_history("t")
    retired = [r for r in history if r.superseded_by]
    assert retired, "the conversation reflected at least once"
    assert any(p.type == "data-om-buffering-end" and p.data["operationType"] == "reflection" for p in parts)
    for record in retired:
        assert record.buffered_reflection is None
        assert record.buffered_reflection_tokens == record.buffered_reflection_input_tokens == 0
        assert record.reflected_observation_line_count == 0


def _stored_record(**chunk_field):
    return {
        "id": "omr-x",
        "scope": "thread",
        "thread_id": "t",
        "created_at": "2025-03-03T00:00:00+00:00",
        "updated_at": "2025-03-03T00:00:00+00:00",
        **chunk_field,
    }


_REFERENCE_CHUNK = {
    "cycleId": "buf-1",
    "id": "chunk-1",
    "observations": "* 🔴 (10:00) User likes tea",
    "tokenCount": 9,
    "messageIds": ["m1", "m2"],
    "messageTokens": 120,
    "lastObservedAt": "2025-03-03T10:00:00.001Z",
    "createdAt": "2025-03-03T10:00:05.000Z",
}


def test_stored_chunk_fields_in_other_shapes_load():
    assert record_from_dict(_stored_record(buffered_chunks=None)).buffered_chunks == []
    assert record_from_dict(_stored_record(buffered_chunks="null")).buffered_chunks == []
    assert record_from_dict(_stored_record(buffered_chunks="[]")).buffered_chunks == []
    (single,) = record_from_dict(_stored_record(buffered_chunks=_REFERENCE_CHUNK)).buffered_chunks
    assert single.cycle_id == "buf-1" and single.message_ids == ["m1", "m2"] and single.token_count == 9
    (text,) = record_from_dict(_stored_record(buffered_chunks=json.dumps([_REFERENCE_CHUNK]))).buffered_chunks
    assert text.message_tokens == 120 and text.last_observed_at.year == 2025
    odd_ids = {**_REFERENCE_CHUNK, "messageIds": json.dumps(["m3"])}
    assert record_from_dict(_stored_record(buffered_chunks=[odd_ids])).buffered_chunks[0].message_ids == ["m3"]
    no_ids = {**_REFERENCE_CHUNK, "messageIds": None}
    assert record_from_dict(_stored_record(buffered_chunks=[no_ids])).buffered_chunks[0].message_ids == []


@pytest.mark.parametrize("stored", [{}, "{}", "not json", "[not json", 42, "42", 4.5, True])
def test_stored_chunks_in_odd_shapes_load_as_no_chunk(stored):
    # issue 20 item 5: the reference reads anything but an array as no chunk
    assert record_from_dict(_stored_record(buffered_chunks=stored)).buffered_chunks == []


# --- relative dates ---------------------------------------------------------------------------

TODAY = datetime(2024, 9, 30, 12, 0, tzinfo=UTC)


def test_inline_ranges_periods_years_and_clock_times_get_relative_time():
    text = (
        "* 🔴 (10:00) User was in Lisbon. (estimated August 13–27, 2024)\n"
        "* 🔴 (10:01) User studied. (estimated April to May 2023)\n"
        "* 🔴 (10:02) User moved house. (estimated late 2023)\n"
        "* 🔴 (10:03) User got a dog. (meaning 2022)\n"
        "* 🔴 (10:04) User called. (meaning Sep 28, 2024 at 18:08)"
    )
    assert add_relative_time(text, TODAY) == (
        "* 🔴 (10:00) User was in Lisbon. (estimated August 13–27, 2024 - 1 month ago)\n"
        "* 🔴 (10:01) User studied. (estimated April to May 2023 - 1 year ago)\n"
        "* 🔴 (10:02) User moved house. (estimated late 2023 - 1 year ago)\n"
        "* 🔴 (10:03) User got a dog. (meaning 2022 - 2 years ago)\n"
        "* 🔴 (10:04) User called. (meaning Sep 28, 2024 at 18:08 - 2 days ago)"
    )


def test_range_headers_are_dated_by_their_start_and_gaps_count_from_their_end():
    text = "Date: Aug 13–27, 2024\n* 🔴 (10:00) trip\n\nDate: Sep 10, 2024\n* 🔴 (10:00) back home"
    assert add_relative_time(text, TODAY) == (
        "Date: Aug 13–27, 2024 (1 month ago)\n* 🔴 (10:00) trip\n\n"
        "\n[2 weeks later]\n\nDate: Sep 10, 2024 (2 weeks ago)\n* 🔴 (10:00) back home"
    )


def test_dates_inside_observation_lines_get_relative_time_once():
    text = "Date: Sep 1, 2024\n* 🔴 (10:00) User's flight is on Sep 20, 2024; the visa expired Aug 1, 2023."
    once = add_relative_time(text, TODAY)
    assert once == (
        "Date: Sep 1, 2024 (4 weeks ago)\n"
        "* 🔴 (10:00) User's flight is on Sep 20, 2024 (1 week ago); the visa expired Aug 1, 2023 (1 year ago)."
    )
    assert add_relative_time(once, TODAY) == once

"""The seed's code examples, one by one, translated to Python (``../shared/seeds/``).

Each test names the example it walks. TypeScript that configures an ``Agent`` or a ``Memory``
becomes the ``observationalMemory`` value given to omlab (the Agent and Memory classes have no
omlab counterpart); everything the example configures is asserted on the resolved engine.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from conversation_factory import make_conversation
from pydantic import BaseModel

from omlab import (
    DebugEvent,
    Extractor,
    InputTooLargeError,
    ModelByInputTokens,
    ObservationalMemory,
    WorkingMemoryExtractor,
)
from omlab.engine.clock import VirtualClock
from omlab.engine.scheduler import FixedLatency, VirtualScheduler

START = datetime(2025, 3, 3, tzinfo=UTC)


async def _run(om, messages, clock, *, thread="t", resource=None):
    for message in messages:
        clock.set(message.created_at)
        await om.add_messages(thread, [message], resource_id=resource)
    await om.settle()


# 1. "Exemple d'utilisation": observationalMemory: true
def test_example_observational_memory_true_uses_the_defaults():
    om = ObservationalMemory({"observationalMemory": True})
    assert om.config.enabled
    assert om.config.observation.model == "google/gemini-2.5-flash"
    assert om.config.observation.message_tokens == 30_000
    assert om.config.reflection.observation_tokens == 40_000


# 2. custom extractor with a schema (zod object -> pydantic model)
class UserProfile(BaseModel):
    name: str | None = None
    timezone: str | None = None


async def test_example_custom_extractor_with_a_schema():
    extractor = Extractor(
        {
            "name": "User profile",
            "instructions": "Extract stable user profile facts that should be remembered.",
            "schema": UserProfile,
        }
    )
    assert extractor.slug == "user-profile" and extractor.schema is UserProfile
    clock, parts = VirtualClock(START), []
    om = ObservationalMemory(
        {
            "model": "omlab/observer",
            "observation": {"extract": [extractor], "messageTokens": 1_000, "bufferTokens": False},
        },
        clock=clock,
        on_event=parts.append,
    )
    assert om.config.observation.extract == (extractor,)
    await _run(om, make_conversation(2_000, seed=1), clock)
    end = next(p.data for p in parts if p.type == "data-om-observation-end")
    # the offline Observer cannot answer a structured-output call: the failure is reported by slug
    # and the cycle itself succeeds
    assert [f["slug"] for f in end["extractionFailures"]] == ["user-profile"]
    assert end["observations"]


# 3. working memory managed by the Observer
def test_example_manage_working_memory():
    om = ObservationalMemory({"enabled": True, "observation": {"manageWorkingMemory": True}})
    assert om.config.observation.manage_working_memory
    assert any(isinstance(e, WorkingMemoryExtractor) for e in om.observation_extractors)


# 4. resource scope with custom thresholds
def test_example_resource_scope_with_custom_thresholds():
    om = ObservationalMemory(
        {
            "model": "google/gemini-2.5-flash",
            "scope": "resource",
            "observation": {"messageTokens": 20_000},
            "reflection": {"observationTokens": 60_000},
        }
    )
    assert om.config.scope == "resource"
    assert om.config.observation.message_tokens == 20_000 and om.config.reflection.observation_tokens == 60_000
    assert not om.config.observation.async_enabled  # buffering is off in resource scope


# 5. shareTokenBudget
def test_example_share_token_budget():
    om = ObservationalMemory(
        {
            "shareTokenBudget": True,
            "observation": {"messageTokens": 20_000, "bufferTokens": False},
            "reflection": {"observationTokens": 80_000},
        }
    )
    threshold = om.config.observation.message_tokens
    assert (threshold.min, threshold.max) == (20_000, 100_000)


# 6. one model for both agents
def test_example_one_model_for_observer_and_reflector():
    om = ObservationalMemory({"model": "openai/gpt-5-mini"})
    assert om.config.observation.model == om.config.reflection.model == "openai/gpt-5-mini"


# 7. a model per agent
def test_example_a_model_per_agent():
    om = ObservationalMemory(
        {"observation": {"model": "google/gemini-2.5-flash"}, "reflection": {"model": "openai/gpt-5-mini"}}
    )
    assert om.config.observation.model == "google/gemini-2.5-flash"
    assert om.config.reflection.model == "openai/gpt-5-mini"


# 8. custom instructions
def test_example_custom_instructions():
    om = ObservationalMemory(
        {
            "model": "google/gemini-2.5-flash",
            "observation": {"instruction": "Prioritize capturing user health goals."},
            "reflection": {"instruction": "When consolidating, group related health information together."},
        }
    )
    assert om.observer.instruction == "Prioritize capturing user health goals."
    assert om.reflector.instruction.startswith("When consolidating")


# 9. async buffering settings
def test_example_async_buffering_settings():
    om = ObservationalMemory(
        {
            "model": "google/gemini-2.5-flash",
            "observation": {"messageTokens": 30_000, "bufferTokens": 5_000, "bufferActivation": 0.7, "blockAfter": 1.5},
            "reflection": {"observationTokens": 60_000, "bufferActivation": 0.5, "blockAfter": 1.2},
        }
    )
    obs, refl = om.config.observation, om.config.reflection
    assert (obs.buffer_tokens, obs.buffer_activation, obs.block_after) == (5_000, 0.7, 45_000)
    assert (refl.buffer_activation, refl.block_after) == (0.5, 72_000)


# 10. buffering off
def test_example_buffering_off():
    om = ObservationalMemory({"model": "google/gemini-2.5-flash", "observation": {"bufferTokens": False}})
    assert not om.config.observation.async_enabled and not om.config.reflection.async_enabled


# 11-13. the data-om-observation-end and data-om-status parts, and the status arithmetic
async def test_example_status_part_and_its_arithmetic():
    clock = VirtualClock(START)
    parts = []
    om = ObservationalMemory(
        {
            "observation": {"model": "omlab/observer", "messageTokens": 3_000},
            "reflection": {"model": "omlab/reflector", "observationTokens": 4_000},
        },
        scheduler=VirtualScheduler(clock, FixedLatency(1.0)),
        on_event=parts.append,
    )
    await _run(om, make_conversation(2_800, seed=2), clock)
    status = [p.data for p in parts if p.type == "data-om-status"][-1]
    windows = status["windows"]
    msg_percent = windows["active"]["messages"]["tokens"] / windows["active"]["messages"]["threshold"]
    obs_percent = windows["active"]["observations"]["tokens"] / windows["active"]["observations"]["threshold"]
    post_activation = (
        windows["active"]["messages"]["tokens"] - windows["buffered"]["observations"]["projectedMessageRemoval"]
    )
    assert 0 < msg_percent < 1 and 0 <= obs_percent < 1
    assert 0 <= post_activation <= windows["active"]["messages"]["tokens"]
    assert windows["buffered"]["observations"]["chunks"] > 0
    assert windows["buffered"]["observations"]["status"] in ("idle", "running", "complete")
    reflection = windows["buffered"]["reflection"]
    assert set(reflection) == {"inputObservationTokens", "observationTokens", "status"}
    assert {"recordId", "threadId", "stepNumber", "generationCount"} <= set(status)


# 14. standalone use, translated line for line
async def test_example_standalone(tmp_path):
    storage = str(tmp_path / "memory.duckdb")  # new LibSQLStore({url: 'file:./memory.db'})
    # `memory` (the Memory instance) and the ObservationalMemoryProcessor have no omlab
    # counterpart: the engine stores and loads messages itself.
    om = ObservationalMemory(
        storage=storage,
        model="google/gemini-2.5-flash",
        scope="resource",
        observation={"messageTokens": 20_000},
        reflection={"observationTokens": 60_000},
    )
    clock = om.clock
    assert om.config.scope == "resource" and om.config.observation.message_tokens == 20_000
    messages = make_conversation(3_000, seed=3)  # below messageTokens: no model is called
    for message in messages:
        await om.add_messages("thread-1", [message], resource_id="user-1")
    context = await om.build_context("thread-1", current_date=clock.now())
    assert [m["role"] for m in context][-1] in ("user", "assistant")
    assert len([m for m in context if m["role"] != "system"]) == len(messages)


# 15. standalone options: onDebugEvent, read by the documented camelCase names
async def test_example_on_debug_event_fields_read_in_camel_and_snake_case():
    events: list[DebugEvent] = []
    clock = VirtualClock(START)
    om = ObservationalMemory(
        {
            "observation": {"model": "omlab/observer", "messageTokens": 1_000, "bufferTokens": False},
            "reflection": {"model": "omlab/reflector"},
            "onDebugEvent": events.append,
        },
        clock=clock,
    )
    await _run(om, make_conversation(1_500, seed=4), clock)
    progress = next(e for e in events if e.type == "step_progress")
    assert progress.pendingTokens == progress.pending_tokens == progress["pendingTokens"]
    assert progress.threadId == progress.thread_id == "t"
    assert progress.willObserve in (True, False) and progress.get("thresholdPercent") is not None
    with pytest.raises(AttributeError):
        _ = progress.noSuchField
    triggered = next(e for e in events if e.type == "observation_triggered")
    assert triggered.messages and triggered.to_dict()["threadId"] == "t"


# 16. ModelByInputTokens
def test_example_model_by_input_tokens():
    selector = ModelByInputTokens(
        {
            "upTo": {
                10_000: "google/gemini-2.5-flash",
                40_000: "openai/gpt-5-mini",
                1_000_000: "openai/gpt-5.6-sol",
            }
        }
    )
    assert selector.getThresholds() == [10_000, 40_000, 1_000_000]
    assert selector.resolve(5_000) == "google/gemini-2.5-flash"
    assert selector.resolve(10_000) == "google/gemini-2.5-flash"
    assert selector.resolve(10_001) == "openai/gpt-5-mini"
    with pytest.raises(InputTooLargeError):
        selector.resolve(1_000_001)


# SerializedMemoryConfig (seed 003): observationalMemory: true beside Memory options
def test_example_serialized_memory_config():
    doc = {"observationalMemory": True, "options": {"lastMessages": 50}}
    with pytest.warns(UserWarning, match="options.lastMessages"):
        om = ObservationalMemory.from_memory_config(doc)
    assert om.config.enabled and om.config.extra["options"] == {"lastMessages": 50}

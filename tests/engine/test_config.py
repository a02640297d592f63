"""OMConfig: defaults, resolution rules, every validation error, loaders and provenance."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import pytest

from omlab.engine.config import OMConfig
from omlab.engine.errors import ConfigError
from omlab.engine.hooks import OMHooks
from omlab.engine.model_options import DEFAULT_MODEL, ModelSettings
from omlab.engine.retrieval_config import RetrievalConfig
from omlab.engine.thresholds import TokenRange
from omlab.llm.spec import ModelByInputTokens, ModelWithRetries

# The seed's examples, pasted as JSON.
SEED_RESOURCE_SCOPE = """{
  "model": "google/gemini-2.5-flash",
  "scope": "resource",
  "observation": {"messageTokens": 20000},
  "reflection": {"observationTokens": 60000}
}"""
SEED_SHARED_BUDGET = """{
  "shareTokenBudget": true,
  "observation": {"messageTokens": 20000, "bufferTokens": false},
  "reflection": {"observationTokens": 80000}
}"""
SEED_CUSTOM_BUFFERING = """{
  "model": "google/gemini-2.5-flash",
  "observation": {"messageTokens": 30000, "bufferTokens": 5000, "bufferActivation": 0.7, "blockAfter": 1.5},
  "reflection": {"observationTokens": 60000, "bufferActivation": 0.5, "blockAfter": 1.2}
}"""
SEED_CUSTOM_BUFFERING_SNAKE = {
    "model": "google/gemini-2.5-flash",
    "observation": {"message_tokens": 30000, "buffer_tokens": 5000, "buffer_activation": 0.7, "block_after": 1.5},
    "reflection": {"observation_tokens": 60000, "buffer_activation": 0.5, "block_after": 1.2},
}


def build(**options):
    return OMConfig.from_options(options)


def error_for(options) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        OMConfig.from_options(options)
    return caught.value


# --- defaults ---


def test_every_default():
    config = OMConfig.from_options()
    obs, refl = config.observation, config.reflection
    assert config.enabled and config.scope == "thread" and config.model is None
    assert not config.share_token_budget and not config.temporal_markers and not config.obscure_thread_ids
    assert config.retrieval is None and config.hooks is None and config.storage is None
    assert config.activate_after_idle is None and config.activate_on_provider_change is False
    assert obs.model == DEFAULT_MODEL and refl.model == DEFAULT_MODEL
    assert obs.message_tokens == 30_000
    assert obs.buffer_tokens == 6_000
    assert obs.buffer_activation == 0.8
    assert obs.block_after == 36_000
    assert obs.max_tokens_per_batch == 10_000
    assert obs.previous_observer_tokens == 2_000
    assert obs.model_settings == ModelSettings(temperature=0.3, max_output_tokens=100_000)
    assert obs.provider_options == {"google": {"thinkingConfig": {"thinkingBudget": 215}}}
    assert obs.observe_attachments is True
    assert obs.thread_title is False and obs.manage_working_memory is False and obs.buffer_on_idle is False
    assert obs.extract == () and obs.instruction is None
    assert obs.activate_after_idle is None and obs.activate_on_provider_change is False
    assert obs.failure_policy == "abort" and obs.max_retries is None
    assert refl.observation_tokens == 40_000
    assert refl.buffer_activation == 0.5
    assert refl.block_after == 48_000
    assert refl.model_settings == ModelSettings(temperature=0.0, max_output_tokens=100_000)
    assert refl.provider_options == {"google": {"thinkingConfig": {"thinkingBudget": 1024}}}
    assert refl.activate_after_idle is None and refl.activate_on_provider_change is False
    assert config.async_buffering and obs.async_enabled and refl.async_enabled


@pytest.mark.parametrize("spelling", [None, True, {}, {"observationalMemory": True}, {"enabled": True}])
def test_true_and_empty_mean_defaults(spelling):
    assert OMConfig.from_options(spelling) == OMConfig()


@pytest.mark.parametrize(
    "spelling",
    [False, {"enabled": False}, {"observationalMemory": False}, {"observational_memory": {"enabled": False}}],
)
def test_disabled(spelling):
    assert OMConfig.from_options(spelling).enabled is False


def test_disabled_config_is_still_validated():
    assert error_for({"enabled": False, "observation": {"messageToken": 1}}).option == "observation.messageToken"


def test_provider_options_are_replaced_not_merged_and_copied():
    mine = {"openai": {"reasoningEffort": "low"}}
    config = build(observation={"providerOptions": mine}, reflection={"provider_options": {}})
    assert config.observation.provider_options == {"openai": {"reasoningEffort": "low"}}
    assert config.reflection.provider_options == {}
    mine["openai"]["reasoningEffort"] = "high"
    assert config.observation.provider_options["openai"]["reasoningEffort"] == "low"
    # the module default is never shared between configs
    OMConfig().observation.provider_options["google"]["thinkingConfig"]["thinkingBudget"] = 1
    assert OMConfig().observation.provider_options["google"]["thinkingConfig"]["thinkingBudget"] == 215


def test_model_settings_defaults_and_overrides():
    config = build(
        observation={"modelSettings": {"temperature": 0.7}}, reflection={"modelSettings": {"maxOutputTokens": 8000}}
    )
    assert config.observation.model_settings == ModelSettings(0.7, 100_000)
    assert config.reflection.model_settings == ModelSettings(0.0, 8_000)


# --- models ---


@pytest.mark.parametrize(
    ("options", "observer", "reflector"),
    [
        ({}, DEFAULT_MODEL, DEFAULT_MODEL),
        ({"model": "default"}, DEFAULT_MODEL, DEFAULT_MODEL),
        ({"model": "openai/gpt-5-mini"}, "openai/gpt-5-mini", "openai/gpt-5-mini"),
        ({"observation": {"model": "openai/obs"}}, "openai/obs", "openai/obs"),
        ({"reflection": {"model": "anthropic/refl"}}, "anthropic/refl", "anthropic/refl"),
        (
            {"observation": {"model": "openai/obs"}, "reflection": {"model": "anthropic/refl"}},
            "openai/obs",
            "anthropic/refl",
        ),
        (
            {"observation": {"model": "default"}, "reflection": {"model": "anthropic/refl"}},
            DEFAULT_MODEL,
            "anthropic/refl",
        ),
    ],
)
def test_model_resolution(options, observer, reflector):
    config = OMConfig.from_options(options)
    assert (config.observation.model, config.reflection.model) == (observer, reflector)


def test_max_output_tokens_default_only_for_default_selection():
    def outputs(options):
        config = OMConfig.from_options(options)
        return config.observation.model_settings.max_output_tokens, config.reflection.model_settings.max_output_tokens

    assert outputs({}) == (100_000, 100_000)
    assert outputs({"model": "default"}) == (100_000, 100_000)
    assert outputs({"model": "openai/gpt-5-mini"}) == (None, None)
    assert outputs({"observation": {"model": "openai/gpt-5-mini"}}) == (None, None)  # reflector falls back too
    assert outputs({"observation": {"model": "default"}, "reflection": {"model": "openai/x"}}) == (100_000, None)
    router = {"upTo": {"10000": "google/gemini-2.5-flash", "1000000": "openai/gpt-5-mini"}}
    assert outputs({"model": router}) == (100_000, 100_000)
    assert outputs({"model": "openai/x", "observation": {"modelSettings": {"maxOutputTokens": 500}}}) == (500, None)


def test_json_model_specs_become_spec_objects():
    config = build(model={"upTo": {"10_000": "google/gemini-2.5-flash", "40000": "openai/gpt-5-mini"}})
    assert isinstance(config.observation.model, ModelByInputTokens)
    assert config.observation.model.get_thresholds() == [10_000, 40_000]
    fallbacks = build(observation={"model": [{"model": "openai/gpt-4o", "maxRetries": 2}, "google/gemini-2.5-flash"]})
    assert [type(entry) for entry in fallbacks.observation.model] == [ModelWithRetries, ModelWithRetries]
    assert fallbacks.observation.model[0].max_retries == 2


def test_callable_model_is_accepted():
    def pick(context):
        return "openai/gpt-4o"

    config = build(model=pick)
    assert config.observation.model is pick and config.observation.model_settings.max_output_tokens is None


@pytest.mark.parametrize(
    ("options", "option", "words"),
    [
        ({"model": "a/b", "observation": {"model": "c/d"}}, "model", ["observation.model"]),
        ({"model": "a/b", "reflection": {"model": "c/d"}}, "model", ["reflection.model"]),
        ({"model": "gpt-4o"}, "model", ["provider/model"]),
        ({"model": 5}, "model", ["provider/model"]),
        ({"observation": {"model": "nope"}}, "observation.model", ["provider/model"]),
        ({"reflection": {"model": {"upTo": {}}}}, "reflection.model", ["threshold"]),
    ],
)
def test_model_errors(options, option, words):
    err = error_for(options)
    assert err.option == option and str(err).startswith(f"{option}: ")
    for word in words:
        assert word in str(err)


# --- async buffering ---


def test_seed_custom_buffering_example():
    config = OMConfig.from_json(SEED_CUSTOM_BUFFERING)
    obs, refl = config.observation, config.reflection
    assert (obs.message_tokens, obs.buffer_tokens, obs.buffer_activation, obs.block_after) == (
        30_000,
        5_000,
        0.7,
        45_000,
    )
    assert (refl.observation_tokens, refl.buffer_activation, refl.block_after) == (60_000, 0.5, 72_000)
    assert obs.model == "google/gemini-2.5-flash" and obs.model_settings.max_output_tokens is None


def test_camel_and_snake_case_give_equal_configs():
    camel = OMConfig.from_json(SEED_CUSTOM_BUFFERING)
    snake = OMConfig.from_options(SEED_CUSTOM_BUFFERING_SNAKE)
    assert camel == snake and camel.config_hash() == snake.config_hash()
    kwargs = OMConfig.from_options(**SEED_CUSTOM_BUFFERING_SNAKE)
    assert kwargs == camel


def test_buffer_tokens_ratio_and_block_after_follow_message_tokens():
    config = build(observation={"messageTokens": 20_000, "bufferTokens": 0.25})
    assert (config.observation.buffer_tokens, config.observation.block_after) == (5_000, 24_000)


def test_absolute_block_after_and_retention():
    config = build(observation={"bufferActivation": 4_000, "blockAfter": 45_000}, reflection={"blockAfter": 50_000})
    assert (config.observation.buffer_activation, config.observation.block_after) == (4_000, 45_000)
    assert config.reflection.block_after == 50_000
    assert build(observation={"bufferActivation": 1.0}).observation.buffer_activation == 1.0


def test_buffer_tokens_false_disables_observation_and_reflection_buffering():
    config = build(observation={"bufferTokens": False})
    obs, refl = config.observation, config.reflection
    assert (obs.buffer_tokens, obs.buffer_activation, obs.block_after) == (None, None, None)
    assert (refl.buffer_activation, refl.block_after) == (None, None)
    assert not config.async_buffering and not refl.async_enabled


def test_seed_shared_budget_example():
    config = OMConfig.from_json(SEED_SHARED_BUDGET)
    assert config.share_token_budget
    assert config.observation.message_tokens == TokenRange(20_000, 100_000)
    assert config.observation.max_message_tokens == 100_000
    assert config.reflection.observation_tokens == 80_000
    assert not config.async_buffering


def test_seed_resource_scope_example_turns_buffering_off():
    config = OMConfig.from_json(SEED_RESOURCE_SCOPE)
    assert config.scope == "resource"
    assert config.observation.message_tokens == 20_000 and config.reflection.observation_tokens == 60_000
    assert not config.async_buffering and config.reflection.block_after is None
    assert config.obscure_thread_ids is False  # only the Memory path turns it on


def test_resource_scope_with_buffering_explicitly_off_is_fine():
    config = build(scope="resource", observation={"bufferTokens": False, "bufferActivation": 0.5})
    assert not config.async_buffering and config.observation.buffer_activation is None


def test_user_message_token_range():
    config = build(observation={"messageTokens": {"min": 30_000, "max": 50_000}, "bufferTokens": 0.1})
    assert config.observation.message_tokens == TokenRange(30_000, 50_000)
    assert config.observation.buffer_tokens == 5_000  # ratio of the range's max
    assert config.observation.block_after == 60_000


# --- idle / provider-change inheritance ---


def test_activate_after_idle_inherits_to_observation_only():
    config = build(activateAfterIdle="5m", activateOnProviderChange=True)
    assert config.activate_after_idle == 300_000
    assert config.observation.activate_after_idle == 300_000
    assert config.observation.activate_on_provider_change is True
    assert config.reflection.activate_after_idle is None
    assert config.reflection.activate_on_provider_change is False


def test_observation_can_switch_inherited_idle_off_and_reflection_opts_in():
    config = build(
        activateAfterIdle="1hr",
        activateOnProviderChange=True,
        observation={"activateAfterIdle": False, "activateOnProviderChange": False},
        reflection={"activateAfterIdle": "auto", "activateOnProviderChange": True},
    )
    assert config.observation.activate_after_idle is None
    assert config.observation.activate_on_provider_change is False
    assert config.reflection.activate_after_idle == "auto"
    assert config.reflection.activate_on_provider_change is True


# --- other options ---


def test_previous_observer_tokens():
    assert build(observation={"previousObserverTokens": False}).observation.previous_observer_tokens is None
    assert build(observation={"previousObserverTokens": 0}).observation.previous_observer_tokens == 0


def test_observe_attachments():
    assert build(observation={"observeAttachments": "auto"}).observation.observe_attachments == "auto"
    assert build(observation={"observeAttachments": False}).observation.observe_attachments is False
    patterns = build(observation={"observeAttachments": ["image/*", "application/pdf", "*"]})
    assert patterns.observation.observe_attachments == ("image/*", "application/pdf", "*")


def test_retrieval():
    assert build(retrieval=True).retrieval == RetrievalConfig(vector=False, scope="resource", instructions=None)
    assert build(retrieval=False).retrieval is None
    custom = build(retrieval={"vector": True, "scope": "thread", "instructions": "Prefer recall."})
    assert custom.retrieval == RetrievalConfig(True, "thread", "Prefer recall.")


def test_hooks_from_camel_dict_snake_dict_and_object():
    def start(_):
        return None

    def end(_):
        return None

    assert build(hooks={"onObservationStart": start}).hooks == OMHooks(on_observation_start=start)
    assert build(hooks={"on_reflection_end": end}).hooks == OMHooks(on_reflection_end=end)

    class Hooks:
        def on_observation_end(self, payload):
            return None

    hooks = build(hooks=Hooks()).hooks
    assert hooks.on_observation_end is not None and hooks.on_observation_start is None


def test_standalone_options_and_extractors_kept_as_given():
    storage, extractor = object(), object()

    def debug(_):
        return None

    config = build(
        storage=storage,
        onDebugEvent=debug,
        obscureThreadIds=True,
        observation={
            "extract": [extractor],
            "threadTitle": True,
            "manageWorkingMemory": True,
            "bufferOnIdle": True,
            "failurePolicy": "continue",
            "maxRetries": 2,
            "instruction": "Focus on health.",
        },
        reflection={"instruction": "Group by topic."},
        temporalMarkers=True,
    )
    obs = config.observation
    assert config.storage is storage and config.on_debug_event is debug and config.obscure_thread_ids
    assert obs.extract == (extractor,) and obs.thread_title and obs.manage_working_memory and obs.buffer_on_idle
    assert (obs.failure_policy, obs.max_retries, obs.instruction) == ("continue", 2, "Focus on health.")
    assert config.reflection.instruction == "Group by topic." and config.temporal_markers


def test_keyword_arguments_win_over_the_mapping_in_either_spelling():
    config = OMConfig.from_options(
        {"scope": "thread", "shareTokenBudget": False},
        scope="resource",
        share_token_budget=True,
        observation={"bufferTokens": False},
    )
    assert config.scope == "resource" and config.share_token_budget
    assert OMConfig.from_options(False, temporalMarkers=True).enabled is False


# --- validation errors ---


ERRORS = [
    # bufferTokens
    ({"observation": {"bufferTokens": 0}}, "observation.bufferTokens"),
    ({"observation": {"bufferTokens": -100}}, "observation.bufferTokens"),
    ({"observation": {"bufferTokens": 30_000}}, "observation.bufferTokens"),
    ({"observation": {"bufferTokens": 40_000}}, "observation.bufferTokens"),
    ({"observation": {"bufferTokens": 0.00001}}, "observation.bufferTokens"),
    ({"observation": {"bufferTokens": True}}, "observation.bufferTokens"),
    ({"observation": {"bufferTokens": "0.2"}}, "observation.bufferTokens"),
    # bufferActivation
    ({"observation": {"bufferActivation": 0}}, "observation.bufferActivation"),
    ({"observation": {"bufferActivation": -0.5}}, "observation.bufferActivation"),
    ({"observation": {"bufferActivation": 1.5}}, "observation.bufferActivation"),
    ({"observation": {"bufferActivation": 999}}, "observation.bufferActivation"),
    ({"observation": {"bufferActivation": 30_000}}, "observation.bufferActivation"),
    # blockAfter
    ({"observation": {"blockAfter": 0.5}}, "observation.blockAfter"),
    ({"observation": {"blockAfter": 1}}, "observation.blockAfter"),
    ({"observation": {"blockAfter": 29_000}}, "observation.blockAfter"),
    ({"observation": {"blockAfter": 30_000}}, "observation.blockAfter"),
    ({"reflection": {"bufferActivation": 0}}, "reflection.bufferActivation"),
    ({"reflection": {"bufferActivation": 1.01}}, "reflection.bufferActivation"),
    ({"reflection": {"blockAfter": 1}}, "reflection.blockAfter"),
    ({"reflection": {"blockAfter": 39_000}}, "reflection.blockAfter"),
    # thresholds
    ({"observation": {"messageTokens": 0}}, "observation.messageTokens"),
    ({"observation": {"messageTokens": -5}}, "observation.messageTokens"),
    ({"observation": {"messageTokens": 1.5}}, "observation.messageTokens"),
    ({"observation": {"messageTokens": "30000"}}, "observation.messageTokens"),
    ({"observation": {"messageTokens": True}}, "observation.messageTokens"),
    ({"observation": {"messageTokens": {"min": 50_000, "max": 40_000}}}, "observation.messageTokens"),
    ({"observation": {"messageTokens": {"min": 50_000}}}, "observation.messageTokens"),
    ({"reflection": {"observationTokens": 0}}, "reflection.observationTokens"),
    ({"observation": {"maxTokensPerBatch": 0}}, "observation.maxTokensPerBatch"),
    ({"observation": {"previousObserverTokens": -1}}, "observation.previousObserverTokens"),
    ({"observation": {"previousObserverTokens": True}}, "observation.previousObserverTokens"),
    # idle
    ({"activateAfterIdle": "soon"}, "activateAfterIdle"),
    ({"activateAfterIdle": True}, "activateAfterIdle"),
    ({"observation": {"activateAfterIdle": "5 parsecs"}}, "observation.activateAfterIdle"),
    ({"reflection": {"activateAfterIdle": -1}}, "reflection.activateAfterIdle"),
    # combinations
    ({"shareTokenBudget": True}, "shareTokenBudget"),
    ({"shareTokenBudget": True, "observation": {"bufferTokens": 5_000}}, "shareTokenBudget"),
    (
        {"shareTokenBudget": True, "observation": {"bufferTokens": False, "messageTokens": {"min": 1, "max": 2}}},
        "observation.messageTokens",
    ),
    ({"scope": "resource", "observation": {"bufferTokens": 5_000}}, "observation.bufferTokens"),
    ({"scope": "resource", "reflection": {"bufferActivation": 0.5}}, "reflection.bufferActivation"),
    ({"scope": "global"}, "scope"),
    # unknown names
    ({"modle": "a/b"}, "modle"),
    ({"observation": {"messageToken": 20_000}}, "observation.messageToken"),
    ({"reflection": {"observationToken": 20_000}}, "reflection.observationToken"),
    ({"observation": {"modelSettings": {"maxTokens": 5}}}, "observation.modelSettings.maxTokens"),
    ({"retrieval": {"vectors": True}}, "retrieval.vectors"),
    ({"hooks": {"onObserve": print}}, "hooks.onObserve"),
    ({"observation": {"messageTokens": 1, "message_tokens": 2}}, "observation.messageTokens"),
    # wrong types
    ({"enabled": "yes"}, "enabled"),
    ({"temporalMarkers": 1}, "temporalMarkers"),
    ({"observation": "fast"}, "observation"),
    ({"observation": {"threadTitle": "true"}}, "observation.threadTitle"),
    ({"observation": {"extract": "current-task"}}, "observation.extract"),
    ({"observation": {"failurePolicy": "retry"}}, "observation.failurePolicy"),
    ({"observation": {"maxRetries": -1}}, "observation.maxRetries"),
    ({"observation": {"instruction": 5}}, "observation.instruction"),
    ({"observation": {"providerOptions": [1]}}, "observation.providerOptions"),
    ({"observation": {"modelSettings": {"temperature": -1}}}, "observation.modelSettings.temperature"),
    ({"reflection": {"modelSettings": {"maxOutputTokens": 0}}}, "reflection.modelSettings.maxOutputTokens"),
    ({"observation": {"observeAttachments": ["image"]}}, "observation.observeAttachments"),
    ({"observation": {"observeAttachments": "maybe"}}, "observation.observeAttachments"),
    ({"retrieval": {"scope": "global"}}, "retrieval.scope"),
    ({"retrieval": "yes"}, "retrieval"),
    ({"hooks": {"onObservationStart": 5}}, "hooks.onObservationStart"),
    ({"hooks": 5}, "hooks"),
    ({"onDebugEvent": "print"}, "onDebugEvent"),
    ({"obscureThreadIds": "no"}, "obscureThreadIds"),
    ({"observationalMemory": True, "options": {}}, "observationalMemory"),
]


@pytest.mark.parametrize(("options", "option"), ERRORS, ids=[e[1] + f"-{i}" for i, e in enumerate(ERRORS)])
def test_validation_errors_name_the_option(options, option):
    err = error_for(options)
    assert isinstance(err, ValueError)
    assert err.option == option
    assert str(err).startswith(f"{option}: ")


def test_error_messages_say_how_to_fix():
    assert "did you mean 'messageTokens'" in str(error_for({"observation": {"messageToken": 1}}))
    assert "bufferTokens" in str(error_for({"observation": {"messageToken": 1}}))  # lists valid names
    share = str(error_for({"shareTokenBudget": True}))
    assert "observation: { bufferTokens: false }" in share and "shareTokenBudget: true" in share
    assert "resource" in str(error_for({"scope": "resource", "observation": {"bufferTokens": 5_000}}))
    assert "less than messageTokens (30000)" in str(error_for({"observation": {"bufferTokens": 30_000}}))
    assert "must exceed messageTokens (30000)" in str(error_for({"observation": {"blockAfter": 1}}))


def test_config_error_pickles():
    err = error_for({"scope": "global"})
    clone = pickle.loads(pickle.dumps(err))
    assert (clone.option, str(clone)) == (err.option, str(err))


# --- SerializedMemoryConfig ---


def test_from_memory_config_keeps_the_other_fields():
    config = OMConfig.from_memory_config(
        {
            "observationalMemory": True,
            "options": {"lastMessages": 50},
            "vector": "pg-vector",
            "embedder": "openai/text-embedding-3-small",
            "embedderOptions": {"dimensions": 512},
        }
    )
    assert config.enabled and config.observation == OMConfig().observation
    assert config.extra == {
        "options": {"lastMessages": 50},
        "vector": "pg-vector",
        "embedder": "openai/text-embedding-3-small",
        "embedderOptions": {"dimensions": 512},
    }


def test_from_memory_config_without_om_is_disabled():
    assert OMConfig.from_memory_config({"options": {"lastMessages": 10}}).enabled is False


def test_from_memory_config_reads_om_under_options_and_resource_scope_obscures_ids():
    config = OMConfig.from_memory_config(
        {"options": {"lastMessages": 5, "observationalMemory": {"scope": "resource", "model": "openai/gpt-5-mini"}}}
    )
    assert config.scope == "resource" and config.obscure_thread_ids
    assert config.extra == {"options": {"lastMessages": 5}}
    explicit = OMConfig.from_memory_config({"observationalMemory": {"scope": "resource", "obscureThreadIds": False}})
    assert explicit.obscure_thread_ids is False


@pytest.mark.parametrize(
    ("serialized", "option"),
    [
        ({"observationalMemory": True, "options": {"observationalMemory": True}}, "observationalMemory"),
        ({"observationalMemory": True, "embeder": "x"}, "embeder"),
        ({"observationalMemory": {"retrieval": {"vector": True}}, "vector": False}, "retrieval.vector"),
        ({"observationalMemory": {"observation": {"bufferToken": 1}}}, "observation.bufferToken"),
        ({"options": 5}, "options"),
    ],
)
def test_from_memory_config_errors(serialized, option):
    with pytest.raises(ConfigError) as caught:
        OMConfig.from_memory_config(serialized)
    assert caught.value.option == option


# --- JSON ---


def test_from_json_text_file_and_memory_config(tmp_path):
    path = tmp_path / "om.json"
    path.write_text(SEED_CUSTOM_BUFFERING)
    assert OMConfig.from_json(path) == OMConfig.from_json(str(path)) == OMConfig.from_json(SEED_CUSTOM_BUFFERING)
    assert OMConfig.from_json("true") == OMConfig()
    assert OMConfig.from_json("false").enabled is False
    wrapped = OMConfig.from_json('{"observationalMemory": ' + SEED_SHARED_BUDGET + "}")
    assert wrapped == OMConfig.from_json(SEED_SHARED_BUDGET)
    memory = OMConfig.from_json('{"observationalMemory": true, "options": {"lastMessages": 50}}')
    assert memory.enabled and memory.extra == {"options": {"lastMessages": 50}}


def test_from_json_errors(tmp_path):
    with pytest.raises(ConfigError, match="invalid JSON"):
        OMConfig.from_json('{"observation": ')
    missing = tmp_path / "missing.json"
    with pytest.raises(ConfigError) as caught:
        OMConfig.from_json(missing)
    assert caught.value.option == str(missing)
    with pytest.raises(ConfigError):
        OMConfig.from_json("[1, 2]")


# --- provenance ---


def test_to_dict_is_json_safe_and_redacts_secrets():
    def on_start(_):
        return None

    config = build(
        observation={
            "model": "openai/gpt-5-mini",
            "providerOptions": {"openai": {"apiKey": "sk-SECRET", "reasoningEffort": "low"}},
        },
        hooks={"onObservationStart": on_start},
        storage=object(),
        reflection={"model": {"upTo": {"10000": "google/gemini-2.5-flash"}}},
    )
    snapshot = config.to_dict()
    text = json.dumps(snapshot)
    assert "sk-SECRET" not in text
    assert snapshot["observation"]["provider_options"]["openai"] == {"apiKey": "<redacted>", "reasoningEffort": "low"}
    assert snapshot["observation"]["model"] == "openai/gpt-5-mini"
    assert snapshot["reflection"]["model"] == "ModelByInputTokens(10000=google/gemini-2.5-flash)"
    assert snapshot["hooks"]["on_observation_start"].endswith("on_start")
    assert snapshot["storage"] == "builtins.object"
    assert snapshot["observation"]["buffer_tokens"] == 6_000 and snapshot["observation"]["block_after"] == 36_000
    assert "hooks" not in config.to_dict(include_runtime=False)


def test_shared_budget_snapshot_shows_the_range():
    snapshot = OMConfig.from_json(SEED_SHARED_BUDGET).to_dict()
    assert snapshot["observation"]["message_tokens"] == {"min": 20_000, "max": 100_000}


def test_config_hash_is_stable_and_tracks_behaviour():
    base = OMConfig()
    assert len(base.config_hash()) == 64 and base.config_hash() == OMConfig.from_options({}).config_hash()
    assert build(observation={"messageTokens": 30_001}).config_hash() != base.config_hash()
    assert build(reflection={"instruction": "x"}).config_hash() != base.config_hash()
    # runtime-only options do not change what the memory computes
    assert build(storage=object(), hooks={"onObservationStart": print}).config_hash() == base.config_hash()


def test_config_hash_is_the_same_in_another_process():
    code = (
        "from omlab.engine.config import OMConfig; import json; "
        f"print(OMConfig.from_json({SEED_CUSTOM_BUFFERING!r}).config_hash())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert other.stdout.strip() == OMConfig.from_json(SEED_CUSTOM_BUFFERING).config_hash()


# --- per-record overrides (§2.11) ---


def test_message_tokens_override_applies_and_rescales_block_after():
    config = OMConfig().with_overrides(message_tokens=20_000)
    assert config.observation.message_tokens == 20_000
    assert config.observation.block_after == 24_000  # 1.2x kept
    assert config.observation.buffer_tokens == 6_000  # absolute, as in the reference


@pytest.mark.parametrize("override", [5_000, 6_000])
def test_message_tokens_override_at_or_below_buffer_tokens_is_ignored(override):
    assert OMConfig().with_overrides(message_tokens=override) == OMConfig()


def test_message_tokens_override_below_absolute_retention_is_ignored():
    config = build(observation={"bufferActivation": 8_000})
    assert config.with_overrides(message_tokens=8_000) == config
    assert config.with_overrides(message_tokens=8_001).observation.message_tokens == 8_001


def test_observation_tokens_override():
    config = OMConfig().with_overrides(observation_tokens=60_000)
    assert config.reflection.observation_tokens == 60_000 and config.reflection.block_after == 72_000


def test_overrides_keep_the_shared_budget_range():
    config = OMConfig.from_json(SEED_SHARED_BUDGET)
    assert config.with_overrides(observation_tokens=50_000).observation.message_tokens == TokenRange(20_000, 70_000)
    assert config.with_overrides(message_tokens=25_000).observation.message_tokens == TokenRange(25_000, 105_000)


def test_invalid_override_names_the_option():
    with pytest.raises(ConfigError) as caught:
        OMConfig().with_overrides(message_tokens=0)
    assert caught.value.option == "observation.messageTokens"
    with pytest.raises(ConfigError) as caught:
        OMConfig().with_overrides(observation_tokens=-1)
    assert caught.value.option == "reflection.observationTokens"

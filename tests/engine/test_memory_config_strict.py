"""A SerializedMemoryConfig is read strictly: unknown keys are refused, unapplied ones warned by
name at the caller's line, and reference mode builds the engine as Mastra's Memory does."""

from __future__ import annotations

import warnings

import pytest

from omlab.engine.config import OMConfig
from omlab.engine.errors import ConfigError


def _warnings_of(serialized):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = OMConfig.from_memory_config(serialized)
    return config, caught


def test_a_misspelled_memory_option_is_refused_with_a_suggestion():
    with pytest.raises(ConfigError) as caught:
        OMConfig.from_memory_config({"observationalMemory": True, "options": {"readonly": True}})
    assert caught.value.option == "options.readonly"
    assert "did you mean 'readOnly'" in str(caught.value)


def test_the_documented_memory_options_are_accepted():
    serialized = {
        "observationalMemory": True,
        "options": {
            "readOnly": True,
            "lastMessages": 10,
            "messageHistory": {"maxTokens": 8000},
            "semanticRecall": False,
            "generateTitle": True,
        },
    }
    config, _ = _warnings_of(serialized)
    assert config.read_only and config.extra["options"]["messageHistory"] == {"maxTokens": 8000}


@pytest.mark.parametrize(
    ("serialized", "named"),
    [
        ({"observationalMemory": True, "options": {"messageHistory": {"maxTokens": 8000}}}, "options.messageHistory"),
        ({"observationalMemory": True, "options": {"lastMessages": 5}}, "options.lastMessages"),
        ({"observationalMemory": True, "vector": "pg-vector"}, "vector"),
        ({"observationalMemory": True, "embedder": "openai/text-embedding-3-small"}, "embedder"),
        ({"observationalMemory": True, "embedderOptions": {"dimensions": 512}}, "embedderOptions"),
    ],
)
def test_every_accepted_but_unapplied_key_is_warned_by_name_at_the_callers_line(serialized, named):
    config, caught = _warnings_of(serialized)
    mine = [w for w in caught if str(w.message).startswith(named + ":")]
    assert len(mine) == 1, [str(w.message) for w in caught]
    assert mine[0].filename == __file__, mine[0].filename  # the user's line, not omlab's
    assert config.enabled


def test_applied_options_raise_no_warning():
    _, caught = _warnings_of({"observationalMemory": True, "options": {"readOnly": True}, "vector": False})
    assert not caught, [str(w.message) for w in caught]


def test_reference_mode_builds_the_engine_as_mastras_memory_does():
    om = {
        "scope": "resource",
        "compat": "reference",
        "activateAfterIdle": "5m",
        "observation": {"activateAfterIdle": "1m", "activateOnProviderChange": True, "bufferTokens": False},
        "reflection": {"activateAfterIdle": "2m", "activateOnProviderChange": True},
    }
    config, caught = _warnings_of({"observationalMemory": om})
    # Memory (1.31.0) passes the top-level TTL but not the observation/reflection ones, and never
    # sets obscureThreadIds
    assert config.obscure_thread_ids is False
    assert config.observation.activate_after_idle == config.activate_after_idle
    assert config.observation.activate_on_provider_change is False
    assert config.reflection.activate_after_idle is None
    assert config.reflection.activate_on_provider_change is False
    named = {str(w.message).split(":")[0] for w in caught}
    assert {
        "observationalMemory.observation.activateAfterIdle",
        "observationalMemory.observation.activateOnProviderChange",
        "observationalMemory.reflection.activateAfterIdle",
        "observationalMemory.reflection.activateOnProviderChange",
    } <= named


def test_default_mode_applies_what_the_seed_documents():
    om = {
        "scope": "resource",
        "observation": {"activateAfterIdle": "1m", "activateOnProviderChange": True, "bufferTokens": False},
    }
    config, caught = _warnings_of({"observationalMemory": om})
    assert config.obscure_thread_ids is True
    assert config.observation.activate_after_idle is not None and config.observation.activate_on_provider_change
    assert not caught


def test_a_warning_from_a_json_document_also_points_at_the_caller():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        OMConfig.from_json('{"observationalMemory": true, "options": {"lastMessages": 5}}')
    assert [w.filename for w in caught] == [__file__]

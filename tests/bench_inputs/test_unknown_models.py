"""Unknown models are refused at construction, naming the option (issue 24 item 9): in
ObservationalMemory's options and in a suite's [engine] and [models] tables, fallback lists and
router tiers included. A real provider's model litellm has no price for is still accepted."""

from __future__ import annotations

import pytest

from omlab import ObservationalMemory
from omlab.bench.suite.suite_file import parse_suite
from omlab.bench.suite.tables import SuiteError
from omlab.engine.errors import ConfigError


@pytest.mark.parametrize(
    ("options", "option", "named"),
    [
        ({"model": "omlab/no-such"}, "model", ["'omlab/no-such'", "omlab/observer"]),
        ({"model": "omlab/observr"}, "model", ["did you mean 'omlab/observer'"]),
        ({"model": "opneai/gpt-4o-mini"}, "model", ["unknown provider 'opneai'", "did you mean 'openai'"]),
        (
            {"observation": {"model": ["openai/gpt-4o-mini", "nosuchprovider/x"]}},
            "observation.model",
            ["'nosuchprovider'"],
        ),
        (
            {"reflection": {"model": {"upTo": {1000: "omlab/reflector", 9000: "omlab/nope"}}}},
            "reflection.model",
            ["'omlab/nope'"],
        ),
        (
            {"observation": {"model": [{"model": "omlab/observer"}, {"model": "omlab/gone", "maxRetries": 1}]}},
            "observation.model",
            ["'omlab/gone'"],
        ),
    ],
)
def test_an_unknown_model_is_refused_at_construction_naming_the_option(options, option, named):
    with pytest.raises(ConfigError) as info:
        ObservationalMemory(**options)
    assert info.value.option == option
    for text in named:
        assert text in str(info.value)


def test_a_real_provider_model_without_a_price_is_accepted():
    ObservationalMemory(model="openai/gpt-99-not-priced-anywhere")
    ObservationalMemory(observation={"model": ["google/gemini-9-ultra", "omlab/observer"]})


def _suite(engine: str = "", models: str = "") -> dict:
    import tomllib

    text = f"""
[suite]
name = "s"
[dataset]
kind = "synthetic"
seeds = [1]
[engine]
{engine}
[models]
{models}
"""
    return tomllib.loads(text)


@pytest.mark.parametrize(
    ("engine", "models", "key", "named"),
    [
        ('observation = { model = ["omlab/observer", "omlab/nope"] }', "", "engine.observation.model", "'omlab/nope'"),
        ('reflection = { model = "opneai/gpt-4o" }', "", "engine.reflection.model", "did you mean 'openai'"),
        ('model = "omlab/observr"', "", "engine.model", "did you mean 'omlab/observer'"),
        ("", 'observer = ["omlab/observer", "omlab/nope"]', "models.observer", "'omlab/nope'"),
        ("", 'actor = "nosuchprovider/x"', "models.actor", "'nosuchprovider'"),
        ("", 'judge = { upTo = { 1000 = "omlab/judge", 9000 = "omlab/nope" } }', "models.judge", "'omlab/nope'"),
    ],
)
def test_an_unknown_model_in_a_suite_is_refused_at_load_naming_the_table(engine, models, key, named):
    with pytest.raises(SuiteError) as info:
        parse_suite(_suite(engine, models), source="my-suite.toml")
    message = str(info.value)
    assert "my-suite.toml" in message and key in message and named in message


@pytest.mark.parametrize("other", ["observation", "reflection"])
def test_engine_model_with_an_agent_model_is_refused_as_the_python_api_refuses_it(other):
    with pytest.raises(ConfigError) as api:
        ObservationalMemory(model="omlab/observer", **{other: {"model": "omlab/reflector"}})
    with pytest.raises(SuiteError) as suite:
        parse_suite(
            _suite(f'model = "omlab/observer"\n{other} = {{ model = "omlab/reflector" }}'), source="my-suite.toml"
        )
    message = str(suite.value)
    assert "my-suite.toml" in message and "engine.model" in message
    assert api.value.detail in message

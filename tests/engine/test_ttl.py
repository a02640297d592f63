"""activateAfterIdle parsing and the provider prompt-cache table behind "auto"."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omlab.engine.errors import ConfigError
from omlab.engine.ttl import activation_ttl_ms, parse_activate_after_idle, provider_cache_ttl_ms


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (300_000, 300_000),
        (0, 0),
        (1500.4, 1500),
        ("500ms", 500),
        ("30s", 30_000),
        ("5m", 300_000),
        ("5 min", 300_000),
        ("1h", 3_600_000),
        ("1hr", 3_600_000),
        ("2 hours", 7_200_000),
        ("1.5h", 5_400_000),
        ("2d", 172_800_000),
        ("1h30m", 5_400_000),
        ("1h 30m 15s", 5_415_000),
        ("  10SEC ", 10_000),
        ("auto", "auto"),
        ("AUTO", "auto"),
        (False, None),
        (None, None),
    ],
)
def test_parse_activate_after_idle(value, expected):
    assert parse_activate_after_idle(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "",
        "5",
        "300",
        "5 parsecs",
        "m5",
        "-5m",
        "5m-",
        "soon",
        True,
        -1,
        float("nan"),
        float("inf"),
        [5],
        {"openai": {"m": 5}},
        {"": "5m"},
    ],
)
def test_invalid_durations_name_the_option(value):
    with pytest.raises(ConfigError) as err:
        parse_activate_after_idle(value, "observation.activateAfterIdle")
    assert str(err.value).startswith("observation.activateAfterIdle: ")
    assert err.value.option == "observation.activateAfterIdle"


@given(st.integers(min_value=0, max_value=10_000), st.sampled_from(["ms", "s", "m", "h", "d"]))
def test_single_term_durations_scale_by_unit(amount, unit):
    factor = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}[unit]
    assert parse_activate_after_idle(f"{amount}{unit}") == amount * factor


@pytest.mark.parametrize(
    ("model", "minutes"),
    [
        ("anthropic/claude-sonnet-4-5", 5),
        ("claude-3-5-haiku", 5),
        ("openai/gpt-4o-mini", 5),
        ("openai/gpt-5", 5),
        ("openai/gpt-5-mini", 5),
        ("openai/gpt-5.4-mini", 5),
        ("openai/gpt-5.5", 60),
        ("openai/o3-mini", 5),
        ("google/gemini-2.5-flash", 1440),
        ("gemini-2.5-pro", 1440),
        ("vertex/gemini-2.5-pro", 1440),
        ("deepseek/deepseek-chat", 60),
        ("groq/llama-3.3-70b", 120),
        ("xai/grok-4", 5),
        ("openrouter/anthropic/claude-sonnet-4", 5),
        ("omlab/observer", 5),
        ("acme/unknown-model", 5),
        ("mystery", 5),
        (None, 5),
        ("", 5),
    ],
)
def test_provider_cache_ttl(model, minutes):
    assert provider_cache_ttl_ms(model) == minutes * 60_000


def test_activation_ttl_resolves_auto_with_the_actor_model():
    assert activation_ttl_ms(None, "openai/gpt-4o") is None
    assert activation_ttl_ms(120_000, "openai/gpt-4o") == 120_000
    assert activation_ttl_ms("auto", "google/gemini-2.5-flash") == 86_400_000
    assert activation_ttl_ms("auto", None) == 300_000

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omlab.llm.spec import (
    InputTooLargeError,
    ModelByInputTokens,
    ModelSpecError,
    ModelWithRetries,
    ResolvedAttempt,
    coerce_model_spec,
    describe_model,
    litellm_model_name,
    primary_model_name,
    resolve_model,
    validate_model_string,
)

TABLE = {40_000: "openai/gpt-5-mini", 10_000: "google/gemini-2.5-flash", "1_000_000": "openai/gpt-5.6-sol"}


# --- ModelByInputTokens -------------------------------------------------------------------------


def test_thresholds_are_sorted_whatever_the_input_order():
    router = ModelByInputTokens(upTo=TABLE)
    assert router.get_thresholds() == [10_000, 40_000, 1_000_000]
    assert router.getThresholds() == [10_000, 40_000, 1_000_000]


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (0, "google/gemini-2.5-flash"),
        (9_999, "google/gemini-2.5-flash"),
        (10_000, "google/gemini-2.5-flash"),  # equal to a threshold: that tier
        (10_001, "openai/gpt-5-mini"),
        (40_000, "openai/gpt-5-mini"),
        (40_001, "openai/gpt-5.6-sol"),
        (1_000_000, "openai/gpt-5.6-sol"),
    ],
)
def test_resolve_picks_smallest_threshold_at_or_above(tokens, expected):
    assert ModelByInputTokens(upTo=TABLE).resolve(tokens) == expected


def test_above_largest_threshold_raises_with_the_reference_message():
    router = ModelByInputTokens(upTo=TABLE)
    with pytest.raises(InputTooLargeError) as info:
        router.resolve(1_000_001)
    assert str(info.value) == (
        "input token count (1000001) exceeds the largest configured threshold (1000000); "
        "configure a higher threshold or use a larger model"
    )
    assert isinstance(info.value, ValueError)
    assert (info.value.input_tokens, info.value.largest_threshold) == (1_000_001, 1_000_000)


def test_the_three_spellings_build_the_same_router():
    a = ModelByInputTokens(TABLE)
    b = ModelByInputTokens(upTo=TABLE)
    c = ModelByInputTokens({"upTo": TABLE})
    d = coerce_model_spec({"upTo": {str(k): v for k, v in TABLE.items()}})
    assert a == b == c == d


@pytest.mark.parametrize("key", [0, -5, "abc", math.inf, "inf", math.nan, True, None, 0.5, "1e400"])
def test_bad_threshold_keys_are_rejected_naming_the_key(key):
    with pytest.raises(ModelSpecError) as info:
        ModelByInputTokens({key: "openai/gpt-4o-mini"})
    assert repr(key) in str(info.value)


def test_numeric_strings_and_floats_are_accepted_as_keys():
    router = ModelByInputTokens({"10000": "a/x", "2_000": "b/y", 30_000.0: "c/z", 40_000.9: "d/w"})
    assert router.get_thresholds() == [2_000, 10_000, 30_000, 40_000]
    assert router.resolve(40_000) == "d/w"  # n <= 40000.9 for integer n means n <= 40000
    with pytest.raises(InputTooLargeError):
        router.resolve(40_001)


def test_keys_that_collide_after_parsing_are_rejected():
    with pytest.raises(ModelSpecError, match="duplicates"):
        ModelByInputTokens({"10_000": "a/x", 10_000: "b/y"})


def test_empty_or_missing_table_is_an_error():
    with pytest.raises(ModelSpecError, match="at least one threshold"):
        ModelByInputTokens({})
    with pytest.raises(ModelSpecError, match="upTo"):
        ModelByInputTokens()
    with pytest.raises(ModelSpecError, match="not both"):
        ModelByInputTokens({1: "a/b"}, upTo={1: "a/b"})


def test_a_tier_with_a_bad_model_string_names_tier_and_value():
    with pytest.raises(ModelSpecError) as info:
        ModelByInputTokens({10_000: "gpt-4o"})
    assert "10000" in str(info.value) and "'gpt-4o'" in str(info.value)


def test_resolve_rejects_negative_or_non_integer_counts():
    router = ModelByInputTokens(upTo=TABLE)
    for bad in (-1, 1.5, "10"):
        with pytest.raises(ModelSpecError):
            router.resolve(bad)


def test_repr_and_routing_table_show_the_table():
    router = ModelByInputTokens(upTo=TABLE)
    assert repr(router) == (
        "ModelByInputTokens(upTo={10000: 'google/gemini-2.5-flash', 40000: 'openai/gpt-5-mini', "
        "1000000: 'openai/gpt-5.6-sol'})"
    )
    assert router.routing_table() == [
        {"up_to": 10_000, "model": "google/gemini-2.5-flash"},
        {"up_to": 40_000, "model": "openai/gpt-5-mini"},
        {"up_to": 1_000_000, "model": "openai/gpt-5.6-sol"},
    ]


@given(
    thresholds=st.sets(st.integers(min_value=1, max_value=10**7), min_size=1, max_size=8),
    tokens=st.integers(min_value=0, max_value=10**7 + 10),
)
def test_resolve_invariant(thresholds, tokens):
    router = ModelByInputTokens({t: f"p/m{t}" for t in thresholds})
    fitting = [t for t in thresholds if t >= tokens]
    if not fitting:
        with pytest.raises(InputTooLargeError):
            router.resolve(tokens)
    else:
        assert router.resolve(tokens) == f"p/m{min(fitting)}"


# --- model strings ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["gpt-4o", "/gpt-4o", "openai/", "", " openai/gpt-4o", "open ai/x", 42, None])
def test_model_strings_must_be_provider_slash_model(bad):
    with pytest.raises(ModelSpecError) as info:
        validate_model_string(bad)
    assert repr(bad) in str(info.value)


def test_model_names_may_contain_slashes_and_google_maps_to_gemini():
    assert validate_model_string("openrouter/anthropic/claude-3") == "openrouter/anthropic/claude-3"
    assert litellm_model_name("google/gemini-2.5-flash") == "gemini/gemini-2.5-flash"
    assert litellm_model_name("openai/gpt-4o-mini") == "openai/gpt-4o-mini"


# --- ModelWithRetries ---------------------------------------------------------------------------


def test_model_with_retries_from_camel_case_dict():
    entry = ModelWithRetries.from_dict(
        {
            "model": "openai/gpt-4o-mini",
            "maxRetries": 2,
            "enabled": False,
            "id": "backup",
            "modelSettings": {"temperature": 0.1},
            "providerOptions": {"openai": {"reasoningEffort": "low"}},
            "headers": {"X-Team": "secret-value"},
        }
    )
    assert entry == ModelWithRetries(
        "openai/gpt-4o-mini",
        max_retries=2,
        enabled=False,
        id="backup",
        model_settings={"temperature": 0.1},
        provider_options={"openai": {"reasoningEffort": "low"}},
        headers={"X-Team": "secret-value"},
    )
    assert "secret-value" not in repr(entry)


def test_model_with_retries_validation():
    with pytest.raises(ModelSpecError, match="unknown key 'retries'"):
        ModelWithRetries.from_dict({"model": "a/b", "retries": 1})
    with pytest.raises(ModelSpecError, match="max_retries"):
        ModelWithRetries("a/b", max_retries=-1)
    with pytest.raises(ModelSpecError, match="'nope'"):
        ModelWithRetries("nope")
    with pytest.raises(ModelSpecError, match="needs a 'model'"):
        ModelWithRetries.from_dict({"maxRetries": 1})


# --- describe / primary -------------------------------------------------------------------------


def my_selector(context):
    return "openai/gpt-4o-mini"


def test_describe_model_is_stable_and_secret_free():
    assert describe_model("openai/gpt-4o-mini") == "openai/gpt-4o-mini"
    assert (
        describe_model(ModelByInputTokens({40_000: "b/y", 10_000: "a/x"})) == "ModelByInputTokens(10000=a/x,40000=b/y)"
    )
    fallbacks = [
        ModelWithRetries("a/x", headers={"Authorization": "Bearer sk-123"}, model_settings={"api_key": "sk-456"}),
        "b/y",
        {"model": "c/z", "enabled": False},
    ]
    assert describe_model(fallbacks) == "fallbacks[a/x|b/y|c/z(disabled)]"
    assert describe_model(my_selector) == "callable:my_selector"
    assert (
        describe_model(lambda ctx: "a/b") == "callable:test_describe_model_is_stable_and_secret_free.<locals>.<lambda>"
    )


def test_primary_model_name_is_the_first_enabled_entry():
    assert primary_model_name("a/x") == "a/x"
    assert primary_model_name([ModelWithRetries("a/x", enabled=False), "b/y"]) == "b/y"
    assert primary_model_name(ModelByInputTokens({1: "a/x"})) is None
    assert primary_model_name(my_selector) is None


# --- resolve_model ------------------------------------------------------------------------------


async def test_resolve_a_plain_string():
    resolved = await resolve_model("openai/gpt-4o-mini", input_tokens=None, context={})
    assert resolved.attempts == [ResolvedAttempt("openai/gpt-4o-mini")]
    assert resolved.tier is None


async def test_fallback_list_skips_disabled_and_keeps_entry_settings():
    spec = [
        ModelWithRetries("a/x", enabled=False),
        {"model": "b/y", "maxRetries": 1, "modelSettings": {"temperature": 0}, "headers": {"X-K": "v"}},
        "c/z",
    ]
    resolved = await resolve_model(spec, input_tokens=None, context={})
    assert resolved.attempts == [
        ResolvedAttempt("b/y", max_retries=1, model_settings={"temperature": 0}, headers={"X-K": "v"}),
        ResolvedAttempt("c/z"),
    ]


async def test_all_disabled_or_empty_fallbacks_are_errors():
    with pytest.raises(ModelSpecError, match="disabled"):
        await resolve_model([ModelWithRetries("a/x", enabled=False)], input_tokens=None, context={})
    with pytest.raises(ModelSpecError, match="at least one entry"):
        await resolve_model([], input_tokens=None, context={})


async def test_router_tier_that_is_a_fallback_list_resolves_recursively():
    router = ModelByInputTokens({1_000: "small/a", 50_000: [ModelWithRetries("big/b", max_retries=3), "big/c"]})
    resolved = await resolve_model(router, input_tokens=20_000, context={})
    assert [a.model for a in resolved.attempts] == ["big/b", "big/c"]
    assert resolved.attempts[0].max_retries == 3
    assert resolved.tier == 50_000
    assert resolved.routing_thresholds == [1_000, 50_000]


async def test_router_needs_input_tokens():
    with pytest.raises(ModelSpecError, match="input_tokens"):
        await resolve_model(ModelByInputTokens({1: "a/b"}), input_tokens=None, context={})


async def test_callables_get_the_context_and_may_return_routers_or_be_async():
    seen = []

    def pick(context):
        seen.append(context)
        return ModelByInputTokens({100: "a/small", 1_000: "a/large"})

    async def pick_async(context):
        return "b/" + context["flavour"]

    resolved = await resolve_model(pick, input_tokens=500, context={"user": "u1"})
    assert seen == [{"user": "u1"}]
    assert [a.model for a in resolved.attempts] == ["a/large"] and resolved.tier == 1_000
    resolved = await resolve_model(pick_async, input_tokens=None, context={"flavour": "mint"})
    assert resolved.attempts[0].model == "b/mint"


async def test_a_callable_returning_itself_is_stopped():
    def loop(context):
        return loop

    with pytest.raises(ModelSpecError, match="nests"):
        await resolve_model(loop, input_tokens=None, context={})


async def test_entry_settings_merge_over_nested_entries():
    inner = ModelWithRetries("a/x", max_retries=1, provider_options={"google": {"a": 1, "b": 2}})
    outer = ModelWithRetries(inner, provider_options={"google": {"b": 3}})
    resolved = await resolve_model([outer], input_tokens=None, context={})
    assert resolved.attempts[0].provider_options == {"google": {"a": 1, "b": 3}}
    assert resolved.attempts[0].max_retries == 1

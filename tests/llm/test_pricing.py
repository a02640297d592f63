from __future__ import annotations

import pytest

from omlab.llm.pricing import Price, known_price, price_call


def test_openai_price_from_the_bundled_map_hand_computed():
    # litellm 1.110.2's map: gpt-4o-mini is $0.15 / $0.60 per million tokens.
    assert known_price("openai/gpt-4o-mini") == Price(0.15, 0.60)
    assert price_call("openai/gpt-4o-mini", 1000, 500) == pytest.approx(1000 * 0.15e-6 + 500 * 0.60e-6)
    assert price_call("openai/gpt-4o-mini", 1000, 500) == pytest.approx(0.00045)


def test_google_router_names_are_priced_as_litellm_gemini():
    # gemini-2.5-flash: $0.30 in / $2.50 out per million.
    assert price_call("google/gemini-2.5-flash", 10_000, 2_000) == pytest.approx(0.003 + 0.005)


def test_long_context_tier_prices_the_whole_call():
    # gemini-2.5-pro: $1.25/$10 up to 200k input tokens, $2.50/$15 above.
    assert price_call("google/gemini-2.5-pro", 200_000, 1_000) == pytest.approx(0.25 + 0.01)
    assert price_call("google/gemini-2.5-pro", 300_000, 1_000) == pytest.approx(0.75 + 0.015)


def test_offline_models_are_free_unless_priced_as_another_model():
    assert price_call("omlab/observer", 123_456, 7_890) == 0.0
    priced = price_call("omlab/observer", 1000, 500, overrides={"omlab/observer": "openai/gpt-4o-mini"})
    assert priced == pytest.approx(0.00045)


def test_explicit_price_overrides_and_mapping_form():
    assert price_call("acme/model", 2_000_000, 1_000_000, overrides={"acme/model": Price(1.0, 3.0)}) == 5.0
    overrides = {"acme/model": {"input_per_mtok": 2.0, "output_per_mtok": 0.0}}
    assert price_call("acme/model", 500_000, 9, overrides=overrides) == 1.0
    # an override wins over the bundled map
    assert price_call("openai/gpt-4o-mini", 1_000_000, 0, overrides={"openai/gpt-4o-mini": Price(9, 9)}) == 9.0


def test_priced_as_chains_and_cycles():
    chain = {"omlab/a": "omlab/b", "omlab/b": Price(1, 1)}
    assert price_call("omlab/a", 1_000_000, 0, overrides=chain) == 1.0
    with pytest.raises(ValueError, match="cycle"):
        price_call("omlab/a", 1, 1, overrides={"omlab/a": "omlab/b", "omlab/b": "omlab/a"})


def test_unknown_models_cost_none():
    assert price_call("acme/never-heard-of-it", 10, 10) is None
    # a bare-name entry of another provider is not borrowed
    assert price_call("anthropic/gpt-4o-mini", 10, 10) is None


def test_bad_inputs_are_errors():
    with pytest.raises(ValueError, match="input_tokens"):
        price_call("openai/gpt-4o-mini", -1, 0)
    with pytest.raises(ValueError, match="output_per_mtok"):
        Price(1.0, -2.0)
    with pytest.raises(ValueError, match="input_per_mtok and output_per_mtok"):
        price_call("acme/m", 1, 1, overrides={"acme/m": {"input": 1}})

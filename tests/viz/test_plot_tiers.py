"""Tier routing: shares per (tier, resolved model), hand-computed, and the grouped bars."""

from __future__ import annotations

import math

import pytest

from omlab.viz.plots import plot_tier_routing, tier_table
from tests.viz.frames import calls_frame, legend_texts, no_data_note, render, title


def _calls(cost: float | None = 1.0):
    return calls_frame(
        [
            {
                "role": "observer",
                "tier": 10_000,
                "resolved_model": "m/small",
                "input_tokens": 2_000,
                "output_tokens": 100,
                "cost_usd": None if cost is None else 0.01 * cost,
            },
            {
                "role": "observer",
                "tier": 10_000,
                "resolved_model": "m/small",
                "input_tokens": 4_000,
                "output_tokens": 100,
                "cost_usd": None if cost is None else 0.03 * cost,
            },
            {
                "role": "reflector",
                "tier": 100_000,
                "resolved_model": "m/big",
                "input_tokens": 54_000,
                "output_tokens": 900,
                "cost_usd": None if cost is None else 0.36 * cost,
            },
            {
                "role": "observer",
                "tier": 100_000,
                "resolved_model": "m/big-fallback",
                "input_tokens": 20_000,
                "output_tokens": 900,
                "cost_usd": None if cost is None else 0.0,
            },
            {
                "role": "actor",
                "tier": None,
                "resolved_model": "m/actor",
                "input_tokens": 9_999_999,
                "output_tokens": 10,
                "cost_usd": None if cost is None else 5.0,
            },
        ]
    )


def test_table_hand_computed():
    table = tier_table(_calls())
    assert table["label"].tolist() == [
        "≤ 10k tokens\n→ m/small",
        "≤ 100k tokens\n→ m/big",
        "≤ 100k tokens\n→ m/big-fallback",
    ]
    assert table["calls"].tolist() == [2, 1, 1]
    assert table["share_calls"].tolist() == [0.5, 0.25, 0.25]
    assert table["share_input_tokens"].tolist() == pytest.approx([6 / 80, 54 / 80, 20 / 80])
    assert table["share_cost"].tolist() == pytest.approx([0.1, 0.9, 0.0])  # the untiered actor is left out


def test_role_filter():
    table = tier_table(_calls(), role="reflector")
    assert table["calls"].tolist() == [1] and table["share_calls"].tolist() == [1.0]
    with pytest.raises(ValueError, match="role='judge' not found"):
        tier_table(_calls(), role="judge")


def test_plot_draws_three_measures_when_priced_and_two_when_not():
    ax = plot_tier_routing(_calls())
    render(ax)
    assert legend_texts(ax) == ["share of calls", "share of input tokens", "share of cost"]
    assert [bar.get_width() for bar in ax.containers[0]] == [0.5, 0.25, 0.25]
    assert "50.0% · 2 calls" in [t.get_text() for t in ax.texts]
    assert "90.0% · $0.360" in [t.get_text() for t in ax.texts]
    assert title(ax) == "ModelByInputTokens routing: what each tier took"

    unpriced = plot_tier_routing(_calls(cost=None))
    assert legend_texts(unpriced) == ["share of calls", "share of input tokens"]
    assert math.isnan(tier_table(_calls(cost=None))["share_cost"].iloc[0])


def test_no_routed_call_gives_a_no_data_note():
    calls = _calls().assign(tier=None)
    assert no_data_note(plot_tier_routing(calls)) == "no data: no call was routed by input size"
    assert no_data_note(plot_tier_routing(calls_frame([]))) == "no data: no model calls"


def test_missing_column_raises():
    with pytest.raises(ValueError, match="missing columns.*tier"):
        plot_tier_routing(_calls().drop(columns=["tier"]))


def test_each_tier_shows_the_routing_input_it_was_chosen_on_not_the_prompt_size():
    calls = _calls().assign(routing_tokens=[600, 9_000, 40_000, 70_000, None])
    table = tier_table(calls)
    assert table["routing_tokens_min"].tolist() == [600, 40_000, 70_000]
    assert table["routing_tokens_max"].tolist() == [9_000, 40_000, 70_000]
    ax = plot_tier_routing(calls)
    labels = [label.get_text() for label in ax.get_yticklabels()]
    assert any("routed on 600–9k tokens" in label for label in labels), labels


def test_calls_without_a_routing_column_still_plot():
    table = tier_table(_calls())  # a run written before routing_tokens was recorded
    assert table["routing_tokens_max"].isna().all()
    render(plot_tier_routing(_calls()))

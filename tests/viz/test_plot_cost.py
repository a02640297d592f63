"""Cost breakdown: the table behind the bars (hand-computed), offline fallback to tokens, ordering."""

from __future__ import annotations

import pytest

from omlab.viz.plots import cost_table, plot_cost_breakdown
from tests.viz.frames import calls_frame, legend_texts, no_data_note, render, title


def _priced_calls():
    return calls_frame(
        [
            {
                "role": "observer",
                "resolved_model": "m/small",
                "tier": 10_000,
                "input_tokens": 5_000,
                "output_tokens": 500,
                "cost_usd": 0.10,
            },
            {
                "role": "observer",
                "resolved_model": "m/big",
                "tier": 100_000,
                "input_tokens": 50_000,
                "output_tokens": 900,
                "cost_usd": 0.90,
            },
            {
                "role": "reflector",
                "resolved_model": "m/big",
                "tier": 100_000,
                "input_tokens": 40_000,
                "output_tokens": 2_000,
                "cost_usd": 0.50,
            },
            {
                "role": "judge",
                "resolved_model": "m/judge",
                "input_tokens": 800,
                "output_tokens": 10,
                "cost_usd": 0.02,
            },
            {
                "role": "actor",
                "resolved_model": None,
                "requested_model": "m/actor",
                "input_tokens": 3_000,
                "output_tokens": 100,
                "cost_usd": None,
            },
        ]
    )


def _bar_widths(ax):
    return [[bar.get_width() for bar in container] for container in ax.containers]


def test_cost_table_by_role_stacked_by_model():
    table = cost_table(_priced_calls(), by="role", stack="model")
    assert list(table.index) == ["observer", "reflector", "actor", "judge"]  # pipeline order
    assert list(table.columns) == ["m/big", "m/small", "m/judge", "m/actor", "calls"]
    assert table.loc["observer", "m/big"] == pytest.approx(0.90)
    assert table.loc["observer", "m/small"] == pytest.approx(0.10)
    assert table.loc["actor"].drop("calls").sum() == 0.0  # a missing cost counts as 0
    assert table["calls"].tolist() == [2, 1, 1, 1]


def test_tier_order_is_by_threshold_with_untiered_last():
    table = cost_table(_priced_calls(), by="tier")
    assert list(table.index) == ["≤ 10k tokens", "≤ 100k tokens", "no tier"]
    assert table["total"].tolist() == pytest.approx([0.10, 1.40, 0.02])


def test_priced_plot_draws_stacked_cost_bars_with_totals():
    ax = plot_cost_breakdown(_priced_calls(), by="model")
    render(ax)
    # one container per stack segment (role), one bar per model in each
    assert len(ax.containers) == 4
    assert all(len(container) == 4 for container in ax.containers)
    totals = [t.get_text() for t in ax.texts]
    assert totals == ["$1.40", "$0.100", "$0.020", "$0"]
    assert title(ax) == "Cost as configured by model: total $1.52"
    assert ax.get_xlabel() == "cost as configured (USD)"
    assert ax.get_yticklabels()[0].get_text() == "m/big\n(2 calls)"
    assert legend_texts(ax) == ["observer", "reflector", "actor", "judge"]


def test_the_title_gives_the_paid_cost_beside_the_configured_one():
    calls = _priced_calls().assign(cost_usd_paid=0.0)
    calls.loc[calls.index[0], "cost_usd_paid"] = 0.9
    ax = plot_cost_breakdown(calls, by="model")
    assert title(ax) == "Cost as configured by model: total $1.52 (paid in this run: $0.900)"


def test_unpriced_run_falls_back_to_tokens_and_says_so():
    calls = _priced_calls().assign(cost_usd=0.0)
    ax = plot_cost_breakdown(calls, by="role")
    render(ax)
    assert "offline run" in title(ax)
    assert legend_texts(ax) == ["input tokens", "output tokens"]
    inputs, outputs = _bar_widths(ax)
    assert inputs == [55_000, 40_000, 3_000, 800]
    assert outputs == [1_400, 2_000, 100, 10]
    assert ax.get_xlabel() == "tokens (input + output)"


def test_explicit_token_metric_has_no_offline_note():
    ax = plot_cost_breakdown(_priced_calls(), metric="tokens")
    assert title(ax).startswith("Tokens by role") and "offline" not in title(ax)


def test_no_stack_gives_single_bars():
    ax = plot_cost_breakdown(_priced_calls(), by="role", stack=None)
    assert _bar_widths(ax) == [pytest.approx([1.0, 0.5, 0.0, 0.02])]
    assert ax.get_legend() is None


def test_bad_options_and_columns_raise():
    with pytest.raises(ValueError, match="by must be"):
        plot_cost_breakdown(_priced_calls(), by="provider")
    with pytest.raises(ValueError, match="metric must be"):
        plot_cost_breakdown(_priced_calls(), metric="dollars")
    with pytest.raises(ValueError, match="stack must be"):
        plot_cost_breakdown(_priced_calls(), stack="provider")
    with pytest.raises(ValueError, match="missing columns.*cost_usd"):
        plot_cost_breakdown(_priced_calls().drop(columns=["cost_usd"]))


def test_no_calls_give_a_no_data_note():
    assert no_data_note(plot_cost_breakdown(calls_frame([]))) == "no data: no model calls"

"""Compression per cycle: which events count, the ratios (hand-computed) and the drawing."""

from __future__ import annotations

import pytest

from omlab.viz.plots import compression_cycles, plot_compression
from tests.viz.frames import events_frame, legend_texts, minutes, no_data_note, render, title


def _events():
    return events_frame(
        [
            # listed out of time order on purpose: cycles are numbered by time
            {
                "ts": minutes(5),
                "type": "data-om-activation",
                "operation_type": "observation",
                "tokens_in": 600,
                "tokens_out": 200,
            },
            {
                "ts": minutes(1),
                "type": "data-om-observation-end",
                "operation_type": "observation",
                "tokens_in": 1000,
                "tokens_out": 100,
            },
            {
                "ts": minutes(2),
                "type": "data-om-buffering-end",
                "operation_type": "observation",
                "tokens_in": 500,
                "tokens_out": 50,
            },
            {
                "ts": minutes(3),
                "type": "data-om-observation-failed",
                "operation_type": "observation",
                "tokens_in": 900,
                "tokens_out": None,
            },
            {
                "ts": minutes(4),
                "type": "data-om-observation-end",
                "operation_type": "observation",
                "tokens_in": 800,
                "tokens_out": 0,
            },
            {
                "ts": minutes(6),
                "type": "data-om-observation-end",
                "operation_type": "reflection",
                "tokens_in": 4000,
                "tokens_out": 1000,
            },
            {
                "ts": minutes(7),
                "type": "data-om-activation",
                "operation_type": "reflection",
                "tokens_in": 3000,
                "tokens_out": 1500,
            },
        ]
    )


def test_observation_cycles_hand_computed():
    cycles = compression_cycles(_events())
    assert cycles["cycle"].tolist() == [1, 2]
    assert cycles["source"].tolist() == ["synchronous", "buffered, then activated"]
    assert cycles["ratio"].tolist() == [10.0, 3.0]
    assert cycles["cumulative_ratio"].tolist() == pytest.approx([10.0, 1600 / 300])


def test_reflection_cycles_hand_computed():
    cycles = compression_cycles(_events(), operation="reflection")
    assert cycles["ratio"].tolist() == [4.0, 2.0]
    assert cycles["cumulative_ratio"].tolist() == pytest.approx([4.0, 7000 / 2500])


def test_plot_has_one_bar_per_cycle_and_the_cumulative_line():
    ax = plot_compression(_events())
    render(ax)
    bars = ax.containers[0]
    assert [bar.get_height() for bar in bars] == [10.0, 3.0]
    cumulative = next(line for line in ax.lines if line.get_label().startswith("cumulative"))
    assert list(cumulative.get_ydata()) == pytest.approx([10.0, 16 / 3])
    assert title(ax) == "Observation compression per cycle (messages → observations): overall 5.33×"
    assert "synchronous cycle (1)" in legend_texts(ax)
    assert "buffered, then activated cycle (1)" in legend_texts(ax)
    assert ax.get_ylabel() == "compression (input tokens ÷ output tokens)"


def test_reflection_variant_title():
    ax = plot_compression(_events(), operation="reflection")
    assert title(ax).startswith("Reflection compression per cycle (observations → reflection): overall 2.8×")


def test_conversation_filter():
    events = _events()
    events.loc[1, "conversation_id"] = "c2"
    assert compression_cycles(events, conversation_id="c2")["ratio"].tolist() == [10.0]


def test_no_cycles_or_no_rows_give_a_no_data_note():
    only_buffering = _events().iloc[[2]]
    assert (
        no_data_note(plot_compression(only_buffering)) == "no data: no completed observation cycles with token counts"
    )
    assert no_data_note(plot_compression(_events().iloc[0:0])) is not None
    assert compression_cycles(_events().iloc[0:0]).empty


def test_bad_input_raises():
    with pytest.raises(ValueError, match="operation must be"):
        plot_compression(_events(), operation="buffering")
    with pytest.raises(ValueError, match="missing columns.*tokens_out"):
        plot_compression(_events().drop(columns=["tokens_out"]))

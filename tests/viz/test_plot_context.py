"""The sawtooth: series, thresholds, event markers, conversation selection, empty input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from omlab.viz.plots import plot_context_timeline, select_conversation, timeline_markers
from tests.viz.frames import (
    events_frame,
    horizontal_lines,
    legend_texts,
    minutes,
    no_data_note,
    render,
    sawtooth_steps,
    steps_frame,
    title,
)


def _line(ax, label_start: str):
    matches = [line for line in ax.lines if line.get_label().startswith(label_start)]
    assert len(matches) == 1, [line.get_label() for line in ax.lines]
    return matches[0]


def test_draws_token_series_and_threshold_lines():
    steps = sawtooth_steps()
    ax = plot_context_timeline(steps)
    render(ax)
    assert list(_line(ax, "raw messages").get_ydata()) == list(steps["pending_tokens"])
    assert list(_line(ax, "observation log").get_ydata()) == list(steps["observation_tokens"])
    assert list(_line(ax, "raw messages").get_xdata()) == list(range(8))
    assert horizontal_lines(ax) == {
        "observation threshold (messageTokens) = 30k": 30_000.0,
        "blockAfter (forced synchronous observation) = 36k": 36_000.0,
        "reflection threshold (observationTokens) = 40k": 40_000.0,
    }
    assert title(ax) == "Context over time: conversation c1"
    assert ax.get_xlabel().startswith("engine step")
    assert ax.get_ylabel() == "tokens"
    # The data must fit under the event band: the y range reaches past the highest value drawn.
    assert ax.get_ylim()[1] > 41_000


def test_markers_from_step_flags():
    markers = timeline_markers(sawtooth_steps().assign(ts=lambda f: pd.to_datetime(f["ts"], utc=True)))
    assert sorted(zip(markers["kind"], markers["step"], strict=True)) == [
        ("activation", 6),
        ("blocking", 3),
        ("buffering", 4),
        ("buffering", 5),
        ("observation", 3),
        ("reflection", 7),
    ]
    assert markers.loc[markers["kind"] == "blocking", "blocked_s"].tolist() == [2.5]


def test_markers_from_events_map_each_event_to_the_last_step_at_or_before_it():
    steps = select_conversation(sawtooth_steps())
    events = events_frame(
        [
            {"ts": minutes(3.2), "type": "data-om-observation-end", "operation_type": "observation"},
            {"ts": minutes(6), "type": "data-om-activation", "operation_type": "observation"},
            {"ts": minutes(7.5), "type": "data-om-activation", "operation_type": "reflection"},
            {"ts": minutes(-1), "type": "data-om-observation-end", "operation_type": "reflection"},
            {"ts": minutes(4.9), "type": "data-om-buffering-end", "operation_type": "observation"},
            {"ts": minutes(3.2), "type": "data-om-observation-start", "operation_type": "observation"},
            {"ts": minutes(3.2), "type": "observation_complete", "kind": "debug", "operation_type": None},
        ]
    )
    markers = timeline_markers(steps, events)
    assert sorted(zip(markers["kind"], markers["step"], strict=True)) == [
        ("activation", 6),
        ("blocking", 3),
        ("buffering", 4),
        ("observation", 3),
        ("reflection", 0),
        ("reflection", 7),
    ]


def test_event_markers_are_drawn_in_lanes_with_counts_in_the_legend():
    events = events_frame(
        [
            {"ts": minutes(3.2), "type": "data-om-observation-end", "operation_type": "observation"},
            {"ts": minutes(6), "type": "data-om-activation", "operation_type": "observation"},
            {
                "ts": minutes(2),
                "type": "data-om-activation",
                "operation_type": "observation",
                "conversation_id": "other",
            },
        ]
    )
    ax = plot_context_timeline(sawtooth_steps(), events)
    render(ax)
    labels = legend_texts(ax)
    assert "synchronous observation (1)" in labels
    assert "activation of buffered observations (1)" in labels  # the other conversation's is left out
    assert "actor blocked (1 step, 2.5 virtual s)" in labels
    assert list(_line(ax, "synchronous observation").get_xdata()) == [3]
    assert list(_line(ax, "activation").get_xdata()) == [6]


def test_time_axis_uses_the_virtual_timestamps():
    ax = plot_context_timeline(sawtooth_steps(), x="time")
    render(ax)
    xs = _line(ax, "raw messages").get_xdata()
    assert np.asarray(xs).dtype.kind == "M"
    assert pd.Timestamp(xs[3]) == minutes(3).tz_localize(None)
    assert ax.get_xlabel() == "virtual time (UTC)"


def test_a_moving_threshold_is_drawn_as_a_step_line():
    steps = sawtooth_steps()
    steps["threshold"] = [30_000, 30_000, 28_000, 28_000, 25_000, 25_000, 25_000, 25_000]
    ax = plot_context_timeline(steps)
    assert "observation threshold (messageTokens) = 30k" not in horizontal_lines(ax)
    assert list(_line(ax, "observation threshold (messageTokens) (varies)").get_ydata()) == list(steps["threshold"])


def test_no_block_after_means_no_block_after_line():
    steps = sawtooth_steps().assign(block_after=None)
    ax = plot_context_timeline(steps)
    assert not any(label.startswith("blockAfter") for label in horizontal_lines(ax))


def test_several_conversations_need_a_choice():
    steps = pd.concat([sawtooth_steps("c1"), sawtooth_steps("c2").assign(pending_tokens=7)])
    with pytest.raises(ValueError, match="conversation_id"):
        plot_context_timeline(steps)
    ax = plot_context_timeline(steps, conversation_id="c2")
    assert set(_line(ax, "raw messages").get_ydata()) == {7}
    with pytest.raises(ValueError, match=r"'c1', 'c2'|\['c1', 'c2'\]"):
        plot_context_timeline(steps, conversation_id="nope")


def test_thread_selection():
    steps = sawtooth_steps()
    steps.loc[steps["step"] >= 4, "thread_id"] = "t2"
    ax = plot_context_timeline(steps, thread_id="t2")
    assert list(_line(ax, "raw messages").get_xdata()) == [4, 5, 6, 7]
    assert title(ax).endswith("thread t2")


def test_nullable_dtypes_from_duckdb_are_accepted():
    steps = sawtooth_steps()
    steps["block_after"] = pd.array([36_000] * 7 + [None], dtype="Int64")
    steps["observed"] = pd.array([False, False, False, True, None, False, False, False], dtype="boolean")
    render(plot_context_timeline(steps))


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="missing columns.*pending_tokens"):
        plot_context_timeline(sawtooth_steps().drop(columns=["pending_tokens"]))
    with pytest.raises(ValueError, match="x must be"):
        plot_context_timeline(sawtooth_steps(), x="seconds")
    with pytest.raises(ValueError, match="run_id"):
        plot_context_timeline(pd.concat([sawtooth_steps(), sawtooth_steps().assign(run_id="R2")]))


def test_empty_steps_give_a_no_data_note():
    ax = plot_context_timeline(steps_frame([]).iloc[0:0])
    assert no_data_note(ax) == "no data: no engine steps"
    assert no_data_note(plot_context_timeline(pd.DataFrame())) is not None
    render(ax)


def test_draws_into_a_given_axes_and_leaves_pyplot_alone():
    before = plt.get_fignums()
    ax = Figure().add_subplot()
    assert plot_context_timeline(sawtooth_steps(), ax=ax) is ax
    plot_context_timeline(sawtooth_steps())
    assert plt.get_fignums() == before


def test_steps_are_drawn_in_step_order_whatever_the_row_order():
    steps = sawtooth_steps().sample(frac=1.0, random_state=3)
    ax = plot_context_timeline(steps)
    assert list(_line(ax, "raw messages").get_xdata()) == list(range(8))
    assert list(_line(ax, "raw messages").get_ydata()) == list(sawtooth_steps()["pending_tokens"])


def test_without_step_times_events_cannot_be_placed_and_flags_are_used():
    steps = select_conversation(sawtooth_steps().assign(ts=pd.NaT))
    events = events_frame([{"ts": minutes(1), "type": "data-om-observation-end", "operation_type": "observation"}])
    markers = timeline_markers(steps, events)
    assert sorted(markers.loc[markers["kind"] == "observation", "step"]) == [3]  # from the observed flag
    with pytest.raises(ValueError, match="no ts"):
        plot_context_timeline(sawtooth_steps().assign(ts=pd.NaT), x="time")
    render(plot_context_timeline(sawtooth_steps().assign(ts=pd.NaT), events))


def test_several_events_at_one_step_are_counted_as_such():
    events = events_frame(
        [{"ts": minutes(6), "type": "data-om-activation", "operation_type": "observation"}] * 3
        + [{"ts": minutes(2), "type": "data-om-activation", "operation_type": "observation"}]
    )
    ax = plot_context_timeline(sawtooth_steps(), events)
    assert "activation of buffered observations (4 at 2 steps)" in legend_texts(ax)

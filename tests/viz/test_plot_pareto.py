"""The Pareto front helper (hand-computed and property-tested) and the cost-vs-accuracy scatter."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.container import ErrorbarContainer
from matplotlib.text import Text

from omlab.viz.plots import pareto_front, plot_cost_vs_accuracy
from tests.viz.frames import legend_texts, no_data_note, render, title


def _points():
    return pd.DataFrame(
        {
            "label": ["A", "B", "C", "D", "E", "F"],
            "cost_usd": [1.0, 2.0, 3.0, 2.0, 0.5, math.nan],
            "accuracy": [0.5, 0.7, 0.6, 0.7, 0.4, 0.9],
        },
        index=[10, 11, 12, 13, 14, 15],
    )


def test_front_hand_computed():
    mask = pareto_front(_points(), "cost_usd", "accuracy")
    # C is beaten by B (cheaper and more accurate); B and D tie and both stay; F has no cost.
    assert mask.to_dict() == {10: True, 11: True, 12: False, 13: True, 14: True, 15: False}


def test_front_directions_flip():
    points = _points().iloc[:5]
    # maximise cost, minimise accuracy: C (most expensive) and E (least accurate) win, and A
    # (1.0, 0.5) survives too: only E is less accurate, and E is cheaper; C beats B and D.
    mask = pareto_front(points, "cost_usd", "accuracy", minimize_x=False, maximize_y=False)
    assert mask.tolist() == [True, False, True, False, True]


def test_front_needs_its_columns():
    with pytest.raises(ValueError, match="missing columns.*accuracy"):
        pareto_front(pd.DataFrame({"cost_usd": [1]}), "cost_usd", "accuracy")


_coordinate = st.one_of(st.integers(0, 6).map(float), st.just(math.nan))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_coordinate, _coordinate), min_size=1, max_size=25))
def test_front_invariants(pairs):
    frame = pd.DataFrame(pairs, columns=["x", "y"])
    mask = pareto_front(frame, "x", "y").to_numpy()
    valid = frame.notna().all(axis=1).to_numpy()
    xs, ys = frame["x"].to_numpy(), frame["y"].to_numpy()

    def dominates(j: int, i: int) -> bool:
        return xs[j] <= xs[i] and ys[j] >= ys[i] and (xs[j] < xs[i] or ys[j] > ys[i])

    assert not (mask & ~valid).any()
    for i in np.flatnonzero(mask):
        assert not any(dominates(j, i) for j in np.flatnonzero(valid))
    for i in np.flatnonzero(valid & ~mask):
        assert any(dominates(j, i) for j in np.flatnonzero(mask))
    assert mask.any() == valid.any()


def test_plot_marks_and_names_the_front():
    points = _points().iloc[:5].assign(lo=lambda f: f["accuracy"] - 0.05, hi=lambda f: f["accuracy"] + 0.05)
    ax = plot_cost_vs_accuracy(points)
    render(ax)
    dominated, front = ax.collections[-2], ax.collections[-1]
    assert [tuple(p) for p in dominated.get_offsets()] == [(3.0, 0.6)]
    assert sorted(tuple(p) for p in front.get_offsets()) == [(0.5, 0.4), (1.0, 0.5), (2.0, 0.7), (2.0, 0.7)]
    front_line = next(line for line in ax.lines if line.get_drawstyle() == "steps-post")
    assert list(front_line.get_xdata()) == [0.5, 1.0, 2.0, 2.0]
    # few points: all named; B and D sit on the same spot and share one label
    assert sorted(t.get_text() for t in ax.texts) == ["A", "B, D", "C", "E"]
    assert "Pareto front (4): nothing is cheaper and as accurate" in legend_texts(ax)
    assert "dominated (1)" in legend_texts(ax)
    assert ax.get_xlabel() == "cost as configured (USD) (lower is better)"
    assert title(ax) == "Cost vs accuracy"


def test_many_points_name_only_the_front():
    n = 30
    points = pd.DataFrame(
        {
            "label": [f"p{i}" for i in range(n)],
            "cost_usd": np.arange(n, dtype=float),
            "accuracy": np.r_[0.9, np.full(n - 1, 0.1)],
        }
    )
    ax = plot_cost_vs_accuracy(points, log_x=False)
    assert [t.get_text() for t in ax.texts] == ["p0"]


def test_crowded_labels_never_overlap_and_the_left_out_are_counted():
    n = 12  # all named (<= 15), most of them crowded into a sliver of the cost axis
    points = pd.DataFrame(
        {
            "label": [f"bufferTokens=0.{i},blockAfter=1.{i}" for i in range(n)],
            "cost_usd": np.r_[np.linspace(0.1480, 0.1482, n - 1), 0.1620],
            "accuracy": np.full(n, 2 / 3),
        }
    )
    ax = plot_cost_vs_accuracy(points)
    render(ax)
    # more than a few points: numbers beside them (names in the key), placed without overlapping
    labels = [t for t in ax.texts if t.get_text() and set(t.get_text()) <= set("0123456789, ")]
    # the text alone, without leader lines (the annotation's own extent positions it first)
    boxes = [(t.get_window_extent(), Text.get_window_extent(t))[1] for t in labels]
    assert all(not a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    frame = ax.get_window_extent()
    assert all(frame.x0 <= b.x0 and b.x1 <= frame.x1 and frame.y0 <= b.y0 and b.y1 <= frame.y1 for b in boxes)
    placed = len(labels)
    note = [t.get_text() for t in ax.texts if "left out" in t.get_text()]
    assert note == ([f"{n - placed} labels left out where they would overlap"] if placed < n else [])
    assert "1: bufferTokens=0.0,blockAfter=1.0 · $0.148 · 66.7%" in legend_texts(ax)  # the front comes first


def test_free_runs_are_flagged_in_the_title():
    points = _points().iloc[:3].assign(cost_usd=0.0)
    ax = plot_cost_vs_accuracy(points)
    assert title(ax) == "Cost vs accuracy (every cost is $0: offline run)"


def test_empty_and_bad_input():
    assert no_data_note(plot_cost_vs_accuracy(_points().iloc[0:0])) == "no data: no configs to compare"
    assert no_data_note(plot_cost_vs_accuracy(_points().iloc[[5]].assign(accuracy=None))) is not None
    with pytest.raises(ValueError, match="missing columns.*label"):
        plot_cost_vs_accuracy(_points().drop(columns=["label"]))


def test_sweep_table_ci_columns_draw_error_bars():
    points = (
        _points()
        .iloc[:5]
        .assign(accuracy_lo=lambda f: f["accuracy"] - 0.05, accuracy_hi=lambda f: f["accuracy"] + 0.08)
    )
    ax = plot_cost_vs_accuracy(points)
    (bars,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    _, _, (segments,) = bars.lines
    spans = sorted((round(float(s[0][1]), 3), round(float(s[1][1]), 3)) for s in segments.get_segments())
    assert spans[0] == (0.35, 0.48)  # E: 0.40 - 0.05 to 0.40 + 0.08
    assert "95% CI" in legend_texts(ax)


def test_plain_lo_hi_columns_still_draw_error_bars():
    points = _points().iloc[:5].assign(lo=lambda f: f["accuracy"] - 0.05, hi=lambda f: f["accuracy"] + 0.05)
    ax = plot_cost_vs_accuracy(points)
    assert any(isinstance(c, ErrorbarContainer) for c in ax.containers)


def test_constant_accuracy_is_noted_on_the_plot():
    points = _points().iloc[:5].assign(accuracy=0.5333)
    ax = plot_cost_vs_accuracy(points)
    assert title(ax).splitlines() == ["Cost vs accuracy", "accuracy does not vary: 53.3% at every point"]
    custom = plot_cost_vs_accuracy(points, title="Sweep S")
    assert title(custom).splitlines()[1] == "accuracy does not vary: 53.3% at every point"


def test_differences_inside_overlapping_intervals_are_noted():
    points = _points().iloc[:5].assign(lo=0.3, hi=0.8)
    ax = plot_cost_vs_accuracy(points)
    assert "every 95% CI overlaps every other" in title(ax)
    apart = _points().iloc[:5].assign(lo=lambda f: f["accuracy"] - 0.01, hi=lambda f: f["accuracy"] + 0.01)
    assert title(plot_cost_vs_accuracy(apart)) == "Cost vs accuracy"


def test_many_points_get_numbers_beside_them_and_their_names_in_the_key():
    points = pd.DataFrame(
        {
            "label": [f"bufferTokens={b},blockAfter={a}" for b in (0.1, 0.2, 0.4) for a in (1.1, 1.5, 2.0)],
            "cost_usd": [0.161, 0.148, 0.148, 0.152, 0.1481, 0.1481, 0.154, 0.1479, 0.1479],
            "accuracy": [2 / 3] * 9,
        }
    )
    ax = plot_cost_vs_accuracy(points)
    annotations = [t.get_text() for t in ax.texts if t.get_text() and "left out" not in t.get_text()]
    assert annotations and all(set(text) <= set("0123456789, ") for text in annotations), annotations
    key = [text for text in legend_texts(ax) if ":" in text and "·" in text]
    assert len(key) == 6  # coincident points share a line: 1, 2 / 3, 4 / 5, 6 / 7 / 8 / 9
    assert key[0].startswith("1, 2: bufferTokens=0.4,blockAfter=1.5, bufferTokens=0.4,blockAfter=2.0 · $0.148")
    assert key[-1].startswith("9: bufferTokens=0.1,blockAfter=1.1 · $0.161")

"""CompareState over two recorded runs, and the comparison view."""

from __future__ import annotations

import pandas as pd
import pytest

from omlab.bench.results import metrics_df
from omlab.viz.simulate import simulate
from omlab.viz.widgets import CompareState
from omlab.viz.widgets.compare import CompareView
from omlab.viz.widgets.compare_state import DIFF_COLUMNS
from tests.viz_widgets.samples import SMALL, small_sample, write_simulation

LEFT, RIGHT = "20250101T000000-aaaaaa", "20250102T000000-bbbbbb"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    tight = simulate(small_sample(), **{**SMALL, "block_after": 1.1})
    loose = simulate(small_sample(), **{**SMALL, "block_after": 2.0})
    write_simulation(results, LEFT, tight, "blockAfter=1.1")
    write_simulation(results, RIGHT, loose, "blockAfter=2.0")
    return results, tight, loose


def test_metrics_diff_lines_up_both_runs(runs):
    results, tight, loose = runs
    state = CompareState(results, LEFT, RIGHT)
    diff = state.metrics_diff()
    assert list(diff.columns) == list(DIFF_COLUMNS)
    assert (diff["group_key"] == "all").all()
    assert diff["name"].tolist() == sorted(diff["name"])
    blocked = diff.set_index("name").loc["blocked_s"]
    assert blocked["left"] == pytest.approx(tight.summary["blocked_s"])
    assert blocked["right"] == pytest.approx(loose.summary["blocked_s"])
    assert blocked["delta"] == pytest.approx(loose.summary["blocked_s"] - tight.summary["blocked_s"])
    assert blocked["relative"] == pytest.approx(blocked["delta"] / abs(blocked["left"]))
    left_metrics = metrics_df(results, LEFT)
    assert len(diff) == (left_metrics["group_key"] == "all").sum()
    every_group = state.metrics_diff(groups=None)
    assert len(every_group) >= len(diff)


def test_timeline_diff_recomputes_the_summaries(runs):
    results, tight, loose = runs
    state = CompareState(results, LEFT, RIGHT)
    diff = state.timeline_diff().set_index("name")
    for name in ("blocked_s", "activations", "context_tokens_peak", "sync_observations"):
        assert diff.loc[name, "left"] == pytest.approx(tight.summary[name])
        assert diff.loc[name, "right"] == pytest.approx(loose.summary[name])
    # a loose blockAfter lets context grow higher before the actor has to wait
    assert diff.loc["context_tokens_peak", "delta"] > 0
    assert diff.loc["blocked_s", "delta"] < 0
    state.select_conversation(small_sample().conversation_id)
    one = state.timeline_diff()
    assert (one["group_key"] == small_sample().conversation_id).all()
    assert one.set_index("name").loc["blocked_s", "left"] == pytest.approx(tight.summary["blocked_s"])


def test_sides_conversations_and_timelines(runs):
    results, tight, _ = runs
    state = CompareState(results, LEFT, RIGHT)
    left, right = state.sides()
    assert (left.label, right.label) == ("blockAfter=1.1", "blockAfter=2.0")
    assert state.conversations() == [small_sample().conversation_id]
    steps, events = state.timeline(left)
    assert len(steps) == len(tight.steps) and len(events) == len(tight.events)
    with pytest.raises(ValueError, match="not in both runs"):
        state.select_conversation("nope")


def test_same_run_on_both_sides_is_labelled_by_run_id(runs):
    results, _, _ = runs
    state = CompareState(results, LEFT, LEFT)
    assert state.left.label == f"what-if-tests [blockAfter=1.1] {LEFT}"
    diff = state.metrics_diff()
    assert (diff["delta"].dropna() == 0).all()
    zero_left = diff["left"] == 0
    assert diff.loc[zero_left, "relative"].isna().all()  # no ratio to a zero baseline
    assert (diff.loc[~zero_left & diff["left"].notna(), "relative"] == 0).all()


def test_unknown_run_is_named(runs):
    results, _, _ = runs
    with pytest.raises(ValueError, match="right run 'nope'"):
        CompareState(results, LEFT, "nope")


def test_view_draws_both_sides(runs):
    results, _, _ = runs
    view = CompareView(CompareState(results, LEFT, RIGHT))
    for image in (view.timelines, view.costs, view.accuracy):
        assert image.value[:4] == b"\x89PNG"
    assert "blocked_s" in view.metrics.value and "context_tokens_peak" in view.timeline_table.value
    assert view.conversation.value == small_sample().conversation_id
    assert "blockAfter=1.1" in view.widget.children[0].value


def test_labels_fall_back_to_suite_names():
    import pandas as pd

    from omlab.viz.widgets.compare_state import side_labels

    runs = pd.DataFrame(
        {"run_id": ["a", "b"], "suite": ["tiers-single", "tiers-routed"], "config_name": ["default", "default"]}
    )
    assert side_labels(runs, "a", "b") == ("tiers-single", "tiers-routed")
    runs["config_name"] = ["x", "y"]
    assert side_labels(runs, "b", "a") == ("y", "x")


def test_timelines_share_one_y_scale_one_legend_and_wide_axes(runs):
    from omlab.viz.widgets.compare import draw_timeline, side_by_side
    from omlab.viz.widgets.compare_state import CompareState as State

    state = State(runs[0], LEFT, RIGHT)
    figure = side_by_side(state, lambda side, ax: draw_timeline(state, side, ax), (10.0, 4.8), same_scale="y")
    figure.canvas.draw()
    left, right = figure.axes[:2]
    assert left.get_ylim() == right.get_ylim()
    assert list(left.get_yticks()) == list(right.get_yticks())
    assert left.get_legend() is None and right.get_legend() is None
    assert len(figure.legends) == 1
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert len(labels) == len(set(labels))
    figure_width = figure.bbox.width
    for ax in (left, right):
        # each side keeps over a third of the figure's width (the old per-side legends left ~5%)
        assert ax.get_window_extent().width > 0.35 * figure_width


def test_deltas_of_metrics_with_intervals_get_an_interval():
    from omlab.viz.widgets.compare_state import line_up_metrics

    left = pd.DataFrame([{"name": "accuracy", "group_key": "all", "value": 0.5, "lo": 0.3, "hi": 0.7}])
    right = pd.DataFrame([{"name": "accuracy", "group_key": "all", "value": 0.8, "lo": 0.6, "hi": 0.9}])
    row = line_up_metrics(left, right, groups="all").iloc[0]
    assert row["delta"] == pytest.approx(0.3)
    # Newcombe's method from the two Wilson intervals: d ∓ sqrt of the squared half-widths
    assert row["delta_lo"] == pytest.approx(0.3 - ((0.8 - 0.6) ** 2 + (0.7 - 0.5) ** 2) ** 0.5)
    assert row["delta_hi"] == pytest.approx(0.3 + ((0.9 - 0.8) ** 2 + (0.5 - 0.3) ** 2) ** 0.5)


def test_the_relative_column_prints_as_a_signed_percent():
    from omlab.viz.widgets.compare import diff_html

    frame = pd.DataFrame(
        [
            {"name": "accuracy", "group_key": "all", "left": 0.5, "right": 0.49, "delta": -0.01, "relative": -0.02},
            {"name": "cost", "group_key": "all", "left": 0.0, "right": 1.0, "delta": 1.0, "relative": float("nan")},
        ]
    ).assign(delta_lo=[-0.2, float("nan")], delta_hi=[0.18, float("nan")])
    html = diff_html(frame)
    assert "<td>-2.0%</td>" in html and "<td>-0.0</td>" not in html
    assert "[-0.200, +0.180]" in html

"""Accuracy by question type from a metrics frame or an answers frame."""

from __future__ import annotations

import pandas as pd
import pytest

from omlab.viz.plots import accuracy_table, plot_accuracy_by_type
from tests.viz.frames import answers_frame, metrics_frame, no_data_note, render, title, vertical_lines


def _metrics(**extra_rows):
    rows = [
        {"group_key": "temporal-reasoning", "value": 0.5, "lo": 0.3, "hi": 0.7, "n": 10},
        {"group_key": "single-session-user", "value": 0.9, "lo": 0.8, "hi": 1.0, "n": 30},
        {"group_key": "all", "value": 0.8, "lo": 0.7, "hi": 0.9, "n": 40},
        {"name": "f1", "group_key": "all", "value": 0.33, "lo": 0.3, "hi": 0.4, "n": 40},
    ]
    return metrics_frame(rows + list(extra_rows.values()))


def test_metrics_table_orders_types_and_takes_the_all_row_as_micro():
    table = accuracy_table(_metrics())
    assert table.by_group["group"].tolist() == ["single-session-user", "temporal-reasoning"]  # official order
    assert table.overall == 0.8
    assert table.task_averaged == pytest.approx(0.7)  # mean of 0.9 and 0.5


def test_metrics_table_uses_a_task_averaged_row_when_present():
    table = accuracy_table(
        _metrics(
            extra={
                "name": "task_averaged_accuracy",
                "group_key": "all",
                "value": 0.66,
                "lo": None,
                "hi": None,
                "n": 40,
            }
        )
    )
    assert table.task_averaged == 0.66


def test_metrics_table_without_all_row_weights_types_by_n():
    metrics = _metrics()
    table = accuracy_table(metrics[metrics["group_key"] != "all"])
    assert table.overall == pytest.approx((0.5 * 10 + 0.9 * 30) / 40)


def test_plot_from_metrics_draws_bars_ci_and_both_lines():
    ax = plot_accuracy_by_type(_metrics())
    render(ax)
    assert [bar.get_width() for bar in ax.containers[0]] == [0.9, 0.5]
    errorbar = next(c for c in ax.containers if c.__class__.__name__ == "ErrorbarContainer")
    segments = errorbar.lines[2][0].get_segments()
    assert [tuple(seg[:, 0]) for seg in segments] == [pytest.approx((0.8, 1.0)), pytest.approx((0.3, 0.7))]
    assert vertical_lines(ax) == {
        "overall, micro (all questions): 80.0%": 0.8,
        "task-averaged (mean of types): 70.0%": pytest.approx(0.7),
    }
    assert [t.get_text() for t in ax.texts] == ["90.0% (n=30)", "50.0% (n=10)"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["single-session-user", "temporal-reasoning"]
    assert title(ax) == "Accuracy by question type"


def test_answers_table_hand_computed():
    answers = answers_frame(
        [{"question_type": "multi-session", "judge": v} for v in (True, True, False, None)]
        + [
            {"question_type": "knowledge-update", "judge": v, "is_abstention": a}
            for v, a in ((True, True), (False, True), (False, False), (False, False))
        ]
    )
    table = accuracy_table(answers, n_boot=200)
    groups = table.by_group.set_index("group")
    assert list(groups.index) == ["multi-session", "knowledge-update", "abstention"]
    assert groups.loc["multi-session", "value"] == pytest.approx(2 / 3)  # the missing verdict is left out
    assert groups.loc["multi-session", "n"] == 3
    assert groups.loc["knowledge-update", "value"] == 0.25
    assert groups.loc["abstention", "value"] == 0.5 and groups.loc["abstention", "subset"]
    assert table.overall == pytest.approx(3 / 7)
    assert table.task_averaged == pytest.approx((2 / 3 + 0.25) / 2)
    assert (groups["lo"] <= groups["value"]).all() and (groups["value"] <= groups["hi"]).all()


def test_plot_from_answers_uses_the_chosen_scorer():
    answers = answers_frame([{"question_type": "temporal", "f1": v} for v in (0.2, 0.4)])
    ax = plot_accuracy_by_type(answers, scorer="f1", n_boot=100)
    render(ax)
    assert title(ax) == "F1 by question type"
    assert ax.containers[0][0].get_width() == pytest.approx(0.3)


def test_bad_input_raises():
    with pytest.raises(ValueError, match="no metrics named 'recall'.*accuracy"):
        plot_accuracy_by_type(_metrics(), metric="recall")
    with pytest.raises(ValueError, match="expected a metrics frame"):
        plot_accuracy_by_type(pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError, match="missing columns.*judge"):
        plot_accuracy_by_type(answers_frame([{"question_type": "a"}]).drop(columns=["judge"]), scorer="judge")
    with pytest.raises(ValueError, match="run_id"):
        plot_accuracy_by_type(pd.concat([_metrics(), _metrics().assign(run_id="R2")]))
    # the table refuses answers without a score; the plot draws them as "no data"
    # (tests/viz/test_plots_all_missing.py)
    with pytest.raises(ValueError, match="no answer has a 'judge' score"):
        accuracy_table(answers_frame([{"question_type": "a", "judge": None}]), scorer="judge")
    with pytest.raises(ValueError, match="no score in any of.*judge_correct"):
        accuracy_table(answers_frame([{"question_type": "a"}]))


def test_empty_frame_gives_a_no_data_note():
    assert no_data_note(plot_accuracy_by_type(metrics_frame([]))) == "no data: no scored questions"


def test_default_scorer_is_the_first_score_column_with_values():
    both = answers_frame([{"question_type": "a", "judge": 1.0, "f1": 0.2}, {"question_type": "a", "judge": 0.0}])
    assert accuracy_table(both, n_boot=50).overall == 0.5
    ax = plot_accuracy_by_type(both, n_boot=50)
    assert title(ax) == "Accuracy by question type (LLM judge)"
    verdicts = answers_frame([{"question_type": "a"}] * 4)
    verdicts["judge_correct"] = pd.array([True, True, False, None], dtype="boolean")
    table = accuracy_table(verdicts, n_boot=50)
    assert table.metric == "judge_correct"
    assert table.overall == pytest.approx(2 / 3)
    only_f1 = answers_frame([{"question_type": "a", "f1": 0.4}])
    assert title(plot_accuracy_by_type(only_f1, n_boot=50)) == "F1 by question type"


def test_error_bars_name_the_interval_they_draw():
    # per-type accuracy in metrics rows comes from Wilson score intervals (a share of correct answers)
    assert "Wilson" in plot_accuracy_by_type(_metrics()).get_xlabel()
    f1 = metrics_frame([{"name": "f1", "group_key": "temporal-reasoning", "value": 0.4, "lo": 0.3, "hi": 0.5, "n": 9}])
    assert "bootstrap" in plot_accuracy_by_type(f1, metric="f1").get_xlabel()
    verdicts = answers_frame([{"question_type": "temporal", "judge": v} for v in (True, False, True)])
    assert "Wilson" in plot_accuracy_by_type(verdicts, n_boot=100).get_xlabel()
    scores = answers_frame([{"question_type": "temporal", "f1": v} for v in (0.2, 0.4)])
    assert "bootstrap" in plot_accuracy_by_type(scores, scorer="f1", n_boot=100).get_xlabel()


def test_all_correct_still_has_an_interval():
    answers = answers_frame([{"question_type": "temporal-reasoning", "judge": True}] * 6)
    row = accuracy_table(answers, n_boot=200).by_group.iloc[0]
    assert row["value"] == 1.0 and row["hi"] == 1.0
    assert 0.5 < row["lo"] < 0.7  # 6/6: the Wilson interval reaches down to about 61%

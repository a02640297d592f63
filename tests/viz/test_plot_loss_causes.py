"""Loss causes per question type: the counts and shares (hand-computed), their order and the bars."""

from __future__ import annotations

import pandas as pd
import pytest

from omlab.viz.plots import loss_cause_table, plot_loss_causes
from tests.viz.frames import legend_texts, no_data_note, render


def questions_frame(rows: list[tuple[str, str]], run_id: str = "R1") -> pd.DataFrame:
    """``lineage_questions_df``-shaped rows from (question_type, loss_cause) pairs."""
    return pd.DataFrame(
        [
            {
                "run_id": run_id,
                "conversation_id": "c1",
                "question_id": f"q{i}",
                "question_type": question_type,
                "is_abstention": False,
                "loss_cause": cause,
            }
            for i, (question_type, cause) in enumerate(rows)
        ]
    )


def _questions() -> pd.DataFrame:
    return questions_frame(
        [
            ("zzz-custom", "answered_right"),
            ("multi-session", "lost_at_reflection"),
            ("multi-session", "lost_at_reflection"),
            ("multi-session", "lost_at_observation"),
            ("multi-session", "answered_right"),
            ("single-session-user", "present_answered_wrong"),
            ("single-session-user", "no_evidence"),
            ("single-session-user", "answered_right"),
        ]
    )


def _cells(table: pd.DataFrame, question_type: str) -> dict[str, tuple[int, float]]:
    rows = table[table["question_type"] == question_type]
    return {cause: (n, share) for cause, n, share in zip(rows["loss_cause"], rows["n"], rows["share"], strict=True)}


def test_counts_and_shares_per_type_in_benchmark_order():
    table = loss_cause_table(_questions())
    assert list(dict.fromkeys(table["question_type"])) == [
        "single-session-user",
        "multi-session",
        "zzz-custom",
        "all types",
    ]
    assert _cells(table, "multi-session") == {
        "lost_at_observation": (1, 0.25),
        "lost_at_reflection": (2, 0.5),
        "present_answered_wrong": (0, 0.0),
        "answered_right": (1, 0.25),
        "no_evidence": (0, 0.0),
    }
    assert _cells(table, "single-session-user")["no_evidence"] == (1, 1 / 3)
    assert _cells(table, "all types") == {
        "lost_at_observation": (1, 1 / 8),
        "lost_at_reflection": (2, 2 / 8),
        "present_answered_wrong": (1, 1 / 8),
        "answered_right": (3, 3 / 8),
        "no_evidence": (1, 1 / 8),
    }
    assert set(table["n_type"][table["question_type"] == "multi-session"]) == {4}
    # present_unjudged never occurs, so it is not listed; no_evidence occurs once, so it is
    assert "present_unjudged" not in set(table["loss_cause"])


def test_overall_group_can_be_left_out_and_a_question_counts_once():
    doubled = pd.concat([_questions(), _questions()], ignore_index=True)
    table = loss_cause_table(doubled, overall=False)
    assert "all types" not in set(table["question_type"])
    assert _cells(table, "zzz-custom")["answered_right"] == (1, 1.0)


def test_configs_are_counted_apart():
    tight = questions_frame([("multi-session", "lost_at_reflection"), ("multi-session", "answered_right")])
    loose = questions_frame([("multi-session", "answered_right")], run_id="R2")
    table = loss_cause_table({"tight": tight, "loose": loose}, overall=False)
    assert list(dict.fromkeys(table["config"])) == ["tight", "loose"]
    by_config = table.set_index(["config", "loss_cause"])
    assert by_config.loc[("tight", "lost_at_reflection"), "share"] == 0.5
    assert by_config.loc[("loose", "answered_right"), "share"] == 1.0
    assert by_config.loc[("loose", "lost_at_reflection"), "n"] == 0


def test_bars_stack_the_shares_of_each_type():
    ax = plot_loss_causes(_questions())
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks == ["single-session-user", "multi-session", "zzz-custom", "all types"]
    multi = ax.get_yticks()[1]
    segments = sorted(
        (p.get_x(), p.get_width()) for p in ax.patches if abs(p.get_y() + p.get_height() / 2 - multi) < 1e-9
    )
    assert segments == [(0.0, 0.25), (0.25, 0.5), (0.75, 0.25)]  # observation, reflection, right
    assert legend_texts(ax) == [
        "lost at observation",
        "lost at reflection",
        "present but answered wrong",
        "answered right",
        "no evidence cited",
    ]
    assert "n=4" in [t.get_text() for t in ax.texts]
    render(ax)


def test_several_configs_get_one_bar_each_within_a_type():
    tight = questions_frame([("multi-session", "lost_at_reflection")])
    loose = questions_frame([("single-session-user", "answered_right"), ("multi-session", "answered_right")], "R2")
    both = pd.concat([tight.assign(config_name="tight"), loose.assign(config_name="loose")])
    ax = plot_loss_causes(both, by="config_name")
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "single-session-user · loose",
        "multi-session · tight",
        "multi-session · loose",
        "all types · tight",
        "all types · loose",
    ]


def test_no_questions_draws_a_no_data_panel():
    ax = plot_loss_causes(pd.DataFrame())
    assert no_data_note(ax) == "no data: no questions in the lineage"
    render(ax)


def test_unknown_cause_or_missing_column_is_named():
    with pytest.raises(ValueError, match=r"plot_loss_causes: unknown loss_cause values \['forgot'\]"):
        loss_cause_table(questions_frame([("multi-session", "forgot")]))
    with pytest.raises(ValueError, match=r"lineage_questions frame is missing columns \['loss_cause'\]"):
        loss_cause_table(_questions().drop(columns=["loss_cause"]))


def test_many_settings_are_one_grid_of_setting_by_cause_not_a_bar_each():
    types = ("single-session-user", "multi-session", "temporal-reasoning", "knowledge-update")
    frames = {
        f"bufferTokens={b},blockAfter={a}": questions_frame(
            [(t, "answered_right") for t in types] + [(types[1], "present_answered_wrong")]
        )
        for b in (0.1, 0.2, 0.4)
        for a in (1.1, 1.5, 2.0)
    }
    ax = plot_loss_causes(frames)
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks == list(frames)  # nine rows, one per setting (45 bars before)
    assert "the same in every setting" in ax.get_title(loc="left")
    assert "4 · 80.0%" in [t.get_text() for t in ax.texts]
    render(ax)

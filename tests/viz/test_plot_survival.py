"""Fact survival: which evidence turns count at which age, the shares (hand-computed) and the drawing."""

from __future__ import annotations

import pandas as pd
import pytest

from omlab.viz.plots import fact_survival, plot_fact_survival
from tests.viz.frames import legend_texts, no_data_note, render, title

LINEAGE_DEFAULTS = {
    "run_id": "R1",
    "conversation_id": "c1",
    "observed_generation": None,
    "dropped_generation": None,
    "final_generation": 3,
    "ingested_at_tokens": None,
    "dropped_at_tokens": None,
    "final_tokens": 1000,
}


def lineage_frame(rows: list[dict]) -> pd.DataFrame:
    """``lineage_df``-shaped rows (nullable integer columns, as the DuckDB getter returns them)."""
    full = [{**LINEAGE_DEFAULTS, "question_id": f"q{i}", **row} for i, row in enumerate(rows)]
    frame = pd.DataFrame(full)
    for column in (
        "observed_generation",
        "dropped_generation",
        "final_generation",
        "ingested_at_tokens",
        "dropped_at_tokens",
        "final_tokens",
    ):
        frame[column] = frame[column].astype("Int64")
    return frame


def _five_turns() -> pd.DataFrame:
    """A kept at gen 0; B dropped by gen 2; C lost at observation; D merged, observed late; E unobserved.

    Ages reached (final 3 − observed): A 3, B 3, C 2, D 1. B is cited by two questions.
    """
    return lineage_frame(
        [
            {"evidence_id": "A", "fate": "kept", "observed_generation": 0, "ingested_at_tokens": 0},
            {
                "evidence_id": "B",
                "fate": "dropped",
                "observed_generation": 0,
                "dropped_generation": 2,
                "ingested_at_tokens": 100,
                "dropped_at_tokens": 400,
            },
            {
                "evidence_id": "B",
                "fate": "dropped",
                "observed_generation": 0,
                "dropped_generation": 2,
                "ingested_at_tokens": 100,
                "dropped_at_tokens": 400,
            },
            {"evidence_id": "C", "fate": "lost_at_observation", "observed_generation": 1, "ingested_at_tokens": 300},
            {"evidence_id": "D", "fate": "merged", "observed_generation": 2, "ingested_at_tokens": 700},
            {"evidence_id": "E", "fate": "unobserved", "ingested_at_tokens": 950},
        ]
    )


def _points(curves: pd.DataFrame, config: str | None = None) -> list[tuple]:
    if config is not None:
        curves = curves[curves["config"] == config]
    return list(zip(curves["age"], curves["n"], curves["surviving"], strict=True))


def test_generation_ages_count_each_turn_until_the_age_it_reached():
    table = fact_survival(_five_turns())
    # age 0: A B C D, C lost at observation; age 1: A B C D (B dropped at 2); age 2: A B C; age 3: A B
    assert _points(table.curves) == [(0, 4, 3), (1, 4, 3), (2, 3, 1), (3, 2, 1)]
    assert list(table.curves["share"]) == [0.75, 0.75, 1 / 3, 0.5]
    assert table.unit == "generations"
    assert table.observed == {"R1": 4} and table.unobserved == {"R1": 1} and table.ageless == {"R1": 0}
    assert list(table.curves["config"].unique()) == ["R1"]  # one run: the curve is named after it


def test_token_ages_lose_a_dropped_turn_at_its_drop_and_a_missed_one_at_zero():
    table = fact_survival(_five_turns(), age="tokens", ages=[0, 250, 300, 700, 900])
    # reach: A 1000, B 900, C 700, D 300; lost at: B 300 (400 − 100), C 0
    assert _points(table.curves) == [(0, 4, 3), (250, 4, 3), (300, 4, 2), (700, 3, 1), (900, 2, 1)]
    assert table.unit == "tokens"


def test_token_grid_defaults_to_round_steps_up_to_the_oldest_turn():
    table = fact_survival(_five_turns(), age="tokens")
    assert list(table.curves["age"]) == [50.0 * k for k in range(21)]  # oldest 1000 tokens / 20 points
    assert table.curves["n"].iloc[-1] == 1  # only A reached 1000 tokens


def test_configs_from_a_mapping_or_a_column_are_separate_curves():
    tight = _five_turns()
    loose = lineage_frame([{"evidence_id": "A", "fate": "kept", "observed_generation": 0, "final_generation": 1}])
    by_mapping = fact_survival({"tight": tight, "loose": loose}).curves
    assert list(by_mapping["config"].unique()) == ["tight", "loose"]
    assert _points(by_mapping, "loose") == [(0, 1, 1), (1, 1, 1)]
    assert _points(by_mapping, "tight") == [(0, 4, 3), (1, 4, 3), (2, 3, 1), (3, 2, 1)]
    merged = pd.concat([tight.assign(config_name="tight"), loose.assign(run_id="R2", config_name="loose")])
    by_column = fact_survival(merged, by="config_name").curves
    pd.testing.assert_frame_equal(by_column, by_mapping)


def test_the_same_turn_in_two_runs_of_one_config_counts_twice():
    two_runs = pd.concat([_five_turns(), _five_turns().assign(run_id="R2")], ignore_index=True)
    table = fact_survival(two_runs)
    assert _points(table.curves) == [(0, 8, 6), (1, 8, 6), (2, 6, 2), (3, 4, 2)]
    assert table.observed == {"all runs": 8}


def test_turns_without_token_ages_are_left_out_and_said_so():
    frame = _five_turns()
    frame["ingested_at_tokens"] = pd.array([None] * len(frame), dtype="Int64")
    table = fact_survival(frame, age="tokens")
    assert table.curves.empty and table.ageless == {"R1": 4}
    ax = plot_fact_survival(frame, age="tokens")
    assert no_data_note(ax) == "no data: no observed evidence turn has its ingested_at_tokens, final_tokens"
    assert len(ax.lines) == 0


@pytest.mark.parametrize(
    ("frame", "note"),
    [
        (pd.DataFrame(), "no data: no evidence turn in the lineage"),
        (
            lineage_frame([{"evidence_id": "E", "fate": "unobserved"}, {"evidence_id": "F", "fate": "unobserved"}]),
            "no data: none of the 2 evidence turns was observed",
        ),
    ],
)
def test_no_observed_evidence_draws_a_no_data_panel(frame, note):
    ax = plot_fact_survival(frame)
    assert no_data_note(ax) == note
    assert title(ax).startswith("Fact survival")
    render(ax)


def test_plot_draws_one_line_per_config_at_the_table_shares():
    tight = _five_turns()
    loose = tight.assign(fate=tight["fate"].replace({"dropped": "kept", "lost_at_observation": "kept"}))
    frames = {"tight": tight, "loose": loose}
    ax = plot_fact_survival(frames, min_n=2)
    assert [list(line.get_ydata()) for line in ax.lines] == [[0.75, 0.75, 1 / 3, 0.5], [1.0, 1.0, 1.0, 1.0]]
    assert [list(line.get_xdata()) for line in ax.lines] == [[0, 1, 2, 3]] * 2
    assert ax.lines[0].get_color() != ax.lines[1].get_color()
    assert legend_texts(ax) == ["tight (4 observed evidence turns)", "loose (4 observed evidence turns)"]
    assert ax.get_ylim() == (0, 1.05)
    assert ax.yaxis.get_major_formatter()(0.5, 0) == "50%"
    assert "reflection generations" in ax.get_xlabel()
    render(ax)


def test_ages_few_turns_reached_get_open_markers():
    ax = plot_fact_survival(_five_turns(), min_n=3)  # n by age: 4, 4, 3, 2
    assert ax.lines[0].get_markevery() == [0, 1, 2]
    [open_points] = ax.collections
    assert open_points.get_offsets().tolist() == [[3.0, 0.5]]
    assert legend_texts(ax)[-1] == "n < 3 turns"
    assert len(plot_fact_survival(_five_turns(), min_n=2).collections) == 0


def test_token_plot_labels_its_axis_in_tokens():
    ax = plot_fact_survival(_five_turns(), age="tokens", ages=[0, 500, 1000])
    assert list(ax.lines[0].get_xdata()) == [0, 500, 1000]
    assert list(ax.lines[0].get_ydata()) == [0.75, 1 / 3, 1.0]  # at 500: A B C reached it, B and C lost
    assert ax.xaxis.get_major_formatter()(1500, 0) == "1.5k"
    assert "tokens since ingestion" in ax.get_xlabel()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda f: fact_survival(f, age="seconds"), "age must be 'generations' or 'tokens'"),
        (lambda f: fact_survival(f, ages=[1, 2]), "ages= sets the token ages"),
        (lambda f: fact_survival(f, by="config_name"), "by='config_name' is not a column of the lineage frame"),
        (lambda f: fact_survival({"a": f}, by="run_id"), "not to a mapping"),
        (lambda f: fact_survival(f.drop(columns=["fate"])), "lineage frame is missing columns ['fate']"),
        (
            lambda f: fact_survival(f.drop(columns=["final_tokens"]), age="tokens"),
            "missing columns ['final_tokens']",
        ),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match="plot_fact_survival") as caught:
        call(_five_turns())
    assert message in str(caught.value)


def test_no_reflection_in_any_setting_says_so_in_words():
    never = lineage_frame([{"evidence_id": "A", "fate": "kept", "observed_generation": 0, "final_generation": 0}])
    ax = plot_fact_survival({f"bufferTokens={b}": never for b in (0.1, 0.2, 0.4)})
    note = no_data_note(ax)
    assert note is not None and "no reflection ran in any setting" in note and "100.0%" in note
    assert not ax.lines


def test_settings_with_the_same_curve_are_one_line():
    same = {f"blockAfter={b}": _five_turns() for b in (1.1, 1.5, 2.0)}
    other = lineage_frame([{"evidence_id": "A", "fate": "kept", "observed_generation": 0, "final_generation": 1}])
    ax = plot_fact_survival({**same, "loose": other})
    labels = legend_texts(ax)
    assert len(ax.lines) == 2
    assert labels[0].startswith("3 settings, identical: blockAfter=1.1, blockAfter=1.5, blockAfter=2.0")
    assert labels[1].startswith("loose")


def test_more_settings_than_colours_differ_by_line_style():
    curves = {
        f"s{i}": lineage_frame(
            [{"evidence_id": "A", "fate": "kept", "observed_generation": 0, "final_generation": i + 1}]
        )
        for i in range(10)
    }
    ax = plot_fact_survival(curves)
    styles = {(line.get_color(), line.get_linestyle()) for line in ax.lines}
    assert len(styles) == 10

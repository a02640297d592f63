"""Fact survival and loss causes of a real offline sweep over the reflection threshold.

The survival oracle reads other columns than :func:`fact_survival` does: the ``lines`` a turn's
observation wrote and the per-generation fates in ``generations`` (not ``fate`` or
``dropped_generation``). The loss-cause check counts right answers in the ``answers`` table.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from bench_runner.suites import offline_synthetic_suite

from omlab.bench.results import answers_df, lineage_df, lineage_questions_df, runs_df
from omlab.bench.run.options import RunOptions
from omlab.bench.run.sweep import run_sweep
from omlab.viz.plots import fact_survival, loss_cause_table, plot_fact_survival
from tests.viz.frames import legend_texts, render

TIGHT, LOOSE = "observationTokens=500", "observationTokens=3000"
SUITE = offline_synthetic_suite(
    "survival",
    engine="observation = { messageTokens = 1500, bufferTokens = false }\nreflection = { observationTokens = 600 }",
    target_tokens=8000,
    extra='[grid]\n"reflection.observationTokens" = [500, 3000]',
)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("survival")
    suite = folder / "survival.toml"
    suite.write_text(SUITE, encoding="utf-8")
    results = folder / "results"
    ids = [s.run_id for s in run_sweep(suite, RunOptions(results_dir=results, progress=False)).summaries]
    configs = runs_df(results)[["run_id", "config_name"]]
    return (
        lineage_df(results, ids).merge(configs, on="run_id"),
        lineage_questions_df(results, ids).merge(configs, on="run_id"),
        answers_df(results, ids).merge(configs, on="run_id"),
    )


def _oracle(lineage: pd.DataFrame) -> dict[str, list[tuple[int, int, int]]]:
    """(age, n, surviving) per config, from each turn's lines and per-generation fates."""
    turns = lineage.drop_duplicates(["run_id", "conversation_id", "evidence_id"])
    curves = {}
    for config, rows in turns.groupby("config_name"):
        lives = []
        for row in rows.itertuples():
            if pd.isna(row.observed_generation):  # never observed: not in the observation log
                continue
            reach = int(row.final_generation) - int(row.observed_generation)
            drops = [g["generation"] for g in json.loads(row.generations) if g["fate"] == "dropped"]
            lost_at = 0 if not json.loads(row.lines) else drops[0] - int(row.observed_generation) if drops else None
            lives.append((reach, lost_at))
        curves[config] = [
            (
                age,
                sum(reach >= age for reach, _ in lives),
                sum(reach >= age and (lost is None or lost > age) for reach, lost in lives),
            )
            for age in range(max(reach for reach, _ in lives) + 1)
        ]
    return curves


def test_survival_shares_match_the_per_generation_fates(sweep):
    lineage, _, _ = sweep
    curves = fact_survival(lineage, by="config_name").curves
    expected = _oracle(lineage)
    assert set(curves["config"]) == {TIGHT, LOOSE}
    for config, points in expected.items():
        mine = curves[curves["config"] == config]
        assert list(zip(mine["age"], mine["n"], mine["surviving"], strict=True)) == points, config
    # the sweep shows what the tight threshold costs: fewer facts outlive their first reflection
    at_one = curves[curves["age"] == 1].set_index("config")["share"]
    assert at_one[TIGHT] < at_one[LOOSE]


def test_survival_plot_of_the_sweep_has_a_line_per_config(sweep):
    lineage, _, _ = sweep
    table = fact_survival(lineage, by="config_name")
    ax = plot_fact_survival(lineage, by="config_name")
    assert len(ax.lines) == 2
    for line, label in zip(ax.lines, legend_texts(ax), strict=True):
        config = label.split(" (")[0]
        assert list(line.get_ydata()) == list(table.curves.loc[table.curves["config"] == config, "share"])
        assert label == f"{config} ({table.observed[config]} observed evidence turns)"
    render(ax)


def test_right_answers_per_type_are_the_judge_verdicts(sweep):
    _, questions, answers = sweep
    table = loss_cause_table(questions, by="config_name", overall=False)
    right = table[table["loss_cause"] == "answered_right"].set_index(["config", "question_type"])["n"]
    judged = answers[answers["judge_correct"].astype("boolean").fillna(False).astype(bool)]
    counted = judged.groupby(["config_name", "question_type"]).size()
    assert right.sum() > 0
    for key, n in right.items():
        assert n == counted.get(key, 0), key
    shares = table.groupby(["config", "question_type"])["share"].sum()
    assert shares.round(12).eq(1.0).all()

"""DataFrame getters: fixed columns and dtypes, filters, answers joined with scores."""

from __future__ import annotations

import pandas as pd
import pytest

from omlab.bench.results import (
    TABLES,
    ResultsCatalog,
    answers_df,
    calls_df,
    conversations_df,
    events_df,
    join_scores,
    metrics_df,
    runs_df,
    scores_df,
    steps_df,
)
from omlab.bench.results.schema import pandas_dtype

from .samples import T0, event_rows, open_writer

RUN_A = "20240501T093000-aaaaaa"
RUN_B = "20240502T093000-bbbbbb"
GETTERS = {
    "runs": runs_df,
    "conversations": conversations_df,
    "steps": steps_df,
    "events": events_df,
    "model_calls": calls_df,
    "scores": scores_df,
    "metrics": metrics_df,
}


def _expected_dtypes(table):
    return {c.name: pandas_dtype(c) for c in TABLES[table]}


@pytest.mark.parametrize("table", list(GETTERS))
def test_empty_results_have_the_schema_columns_and_dtypes(tmp_path, table):
    frame = GETTERS[table](tmp_path)
    assert frame.empty
    assert {name: str(dtype) for name, dtype in frame.dtypes.items()} == _expected_dtypes(table)


@pytest.mark.parametrize("table", list(GETTERS))
def test_filled_results_keep_the_same_dtypes(tmp_path, table):
    with open_writer(tmp_path, RUN_A) as writer:
        writer.add_steps([{"conversation_id": "c", "step": 0, "ts": T0, "observed": True}])
        writer.add_events(event_rows(2))
        writer.add_model_calls([{"role": "judge", "cached": False, "started_at": T0}])
        writer.add_scores([{"question_id": "q", "scorer": "f1", "value": 0.5}])
        writer.add_metrics([{"name": "m", "value": 1.0, "n": 3}])
        writer.mark_conversation("c", "answer", "failed", error="boom")
    frame = GETTERS[table](tmp_path)
    assert len(frame) >= 1
    assert {name: str(dtype) for name, dtype in frame.dtypes.items()} == _expected_dtypes(table)


def test_answers_df_joins_one_column_per_scorer(tmp_path):
    with open_writer(tmp_path, RUN_A) as writer:
        writer.add_answers(
            [
                {"question_id": q, "conversation_id": c, "hypothesis": h, "status": "ok"}
                for q, c, h in (("q1", "c1", "a"), ("q2", "c1", "b"), ("q3", "c2", "c"))
            ]
        )
        writer.add_scores(
            [
                {"question_id": "q1", "scorer": "judge", "correct": True},
                {"question_id": "q2", "scorer": "judge", "correct": False},
                {"question_id": "q1", "scorer": "f1", "value": 0.25},
                {"question_id": "q3", "scorer": "retention", "value": 0.5, "correct": False},
                {"question_id": "q9", "scorer": "f1", "value": 1.0},  # no answer row: not joined
            ]
        )
    answers = answers_df(tmp_path).set_index("question_id")
    assert answers["judge_correct"].dtype == "boolean"
    assert answers["judge_correct"].tolist() == [True, False, pd.NA]
    assert answers["judge"].tolist()[:2] == [1.0, 0.0]
    assert answers["f1"].tolist()[0] == 0.25 and answers["f1"].isna().tolist() == [False, True, True]
    assert answers["retention"].tolist()[2] == 0.5
    assert answers["retention_correct"].tolist() == [pd.NA, pd.NA, False]
    only_c2 = answers_df(tmp_path, conversation_id="c2")
    assert only_c2["question_id"].tolist() == ["q3"]


def test_answers_df_has_score_columns_before_any_scoring(tmp_path):
    with open_writer(tmp_path, RUN_A) as writer:
        writer.add_answers([{"question_id": "q1", "hypothesis": "x"}])
    answers = answers_df(tmp_path)
    assert answers["judge_correct"].dtype == "boolean" and answers["judge_correct"].isna().all()
    assert answers["f1"].dtype == "float64" and answers["retention"].dtype == "float64"


def test_a_scorer_named_like_an_answers_column_gets_a_prefix():
    answers = pd.DataFrame({"run_id": ["r"], "question_id": ["q"], "status": ["ok"]})
    scores = pd.DataFrame(
        {
            "run_id": ["r"],
            "question_id": ["q"],
            "scorer": ["status"],
            "value": [0.3],
            "correct": pd.array([pd.NA], dtype="boolean"),
            "details": [None],
        }
    )
    joined = join_scores(answers, scores)
    assert joined["status"].tolist() == ["ok"] and joined["score_status"].tolist() == [0.3]


def test_getters_filter_and_span_runs(tmp_path):
    for run_id in (RUN_B, RUN_A):
        with open_writer(tmp_path, run_id) as writer:
            writer.add_events(event_rows(3, "c1") + event_rows(2, "c2", start=3))
            writer.add_model_calls(
                [{"conversation_id": "c1", "role": "observer"}, {"conversation_id": "c1", "role": "actor"}]
            )
    catalog = ResultsCatalog(tmp_path)
    assert runs_df(catalog)["run_id"].tolist() == [RUN_B, RUN_A]  # by started_at: B was written first
    assert events_df(catalog)["run_id"].tolist() == [RUN_A] * 5 + [RUN_B] * 5
    assert len(events_df(catalog, run_id=RUN_A, conversation_id="c2")) == 2
    assert len(events_df(catalog, types=["observation_triggered"])) == 6  # i = 0, 2, 4 in each run
    assert calls_df(tmp_path, roles="actor")["role"].tolist() == ["actor", "actor"]
    with pytest.raises(TypeError, match="results directory or a ResultsCatalog"):
        runs_df(42)

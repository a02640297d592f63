"""Metrics on a tiny hand-built fixture; every expected value is worked out by hand below."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from omlab.bench.report.metrics import RunFrames, compute_metrics, metric_value, metrics_records, sweep_table


def _steps() -> pd.DataFrame:
    # conversation a: 3 steps, blocked 0 + 1.5 + 0; conversation b: 1 step blocked 0.5
    return pd.DataFrame(
        {
            "conversation_id": ["a", "a", "a", "b"],
            "step": [1, 2, 3, 1],
            "context_tokens": [100, 300, 200, 400],
            "blocked_s": [0.0, 1.5, 0.0, 0.5],
        }
    )


def _events() -> pd.DataFrame:
    rows = [
        # sync observation: 1000 message tokens -> 250 observation tokens (4x)
        ("data-om-observation-end", "observation", None, 1000, 250),
        # buffered chunk activated: 600 -> 200 (3x), by threshold
        ("data-om-activation", "observation", "threshold", 600, 200),
        # another chunk activated after idle: 300 -> 150 (2x)
        ("data-om-activation", "observation", "ttl", 300, 150),
        # sync reflection: log of 400 tokens -> 100 (4x)
        ("data-om-observation-end", "reflection", None, 400, 100),
        # buffered reflection activated: 500 -> 250 (2x)
        ("data-om-activation", "reflection", "threshold", 500, 250),
        # background work that finished (counted, not a compression cycle)
        ("data-om-buffering-end", "observation", None, 600, 900),
        ("data-om-buffering-end", "observation", None, 300, 1050),
        ("data-om-buffering-end", "reflection", None, 500, 250),
    ]
    return pd.DataFrame(rows, columns=["type", "operation_type", "triggered_by", "tokens_in", "tokens_out"])


def _calls() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "role": ["observer", "observer", "actor", "judge", "judge"],
            "requested_model": ["omlab/observer"] * 2 + ["omlab/reader", "omlab/judge", "omlab/judge"],
            "resolved_model": ["omlab/observer", "omlab/observer", "omlab/reader", "omlab/judge", None],
            "tier": [10000, 40000, None, None, None],
            "input_tokens": [1000, 3000, 500, 200, 0],
            "output_tokens": [100, 300, 20, 1, 0],
            "cost_usd": [0.01, 0.03, 0.002, 0.001, None],
            "latency_s": [1.0, 3.0, 0.5, 0.2, 0.1],
            "cached": pd.array([False, True, False, False, False], dtype="boolean"),
            "error": [None, None, None, None, "RateLimitError"],
        }
    )


def _answers() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "question_id": ["q1", "q2", "q3", "q4_abs", "q5"],
            "question_type": [
                "single-session-user",
                "single-session-user",
                "knowledge-update",
                "single-session-user",
                "knowledge-update",
            ],
            "is_abstention": pd.array([False, False, False, True, False], dtype="boolean"),
            "category": pd.array([None] * 5, dtype="Int64"),
            "status": ["ok", "ok", "ok", "ok", "failed"],
            "context_tokens": [100, 200, 300, 400, None],
            "full_history_tokens": [1000, 1000, 1500, 1600, None],
        }
    )


def _scores() -> pd.DataFrame:
    return pd.DataFrame(
        [
            ("q1", "judge", 1.0, True),
            ("q2", "judge", 0.0, False),
            ("q3", "judge", 1.0, True),
            ("q4_abs", "judge", 1.0, True),
            ("q1", "retention", 1.0, True),
            ("q2", "retention", 0.0, False),
            ("q3", "retention", 1.0, True),
            ("q1", "evidence_retention", 0.5, None),
            ("q3", "evidence_retention", 1.0, None),
        ],
        columns=["question_id", "scorer", "value", "correct"],
    )


def _frames(**replace) -> RunFrames:
    parts = {
        "steps": _steps(),
        "events": _events(),
        "calls": _calls(),
        "answers": _answers(),
        "scores": _scores(),
    }
    parts.update(replace)
    return RunFrames(**parts)


@pytest.fixture(scope="module")
def metrics() -> pd.DataFrame:
    return compute_metrics(_frames(), dataset_kind="synthetic", on_missing="wrong", n_boot=200)


def value(metrics, name, group="all"):
    return metric_value(metrics, name, group)


def test_accuracy_counts_failed_questions_as_wrong(metrics):
    # verdicts: q1 yes, q2 no, q3 yes, q4 yes; q5's answer failed -> wrong: 3/5
    assert value(metrics, "accuracy") == pytest.approx(3 / 5)
    # single-session-user: q1, q2, q4 -> 2/3; knowledge-update: q3 yes, q5 failed -> 1/2
    assert value(metrics, "accuracy", "single-session-user") == pytest.approx(2 / 3)
    assert value(metrics, "accuracy", "knowledge-update") == pytest.approx(1 / 2)
    assert value(metrics, "accuracy", "abstention") == pytest.approx(1.0)
    assert value(metrics, "task_averaged_accuracy") == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert value(metrics, "questions") == 5
    assert value(metrics, "answered") == 4
    assert value(metrics, "failed_questions") == 1
    assert value(metrics, "judge_missing") == 0
    row = metrics[(metrics["name"] == "accuracy") & (metrics["group_key"] == "all")].iloc[0]
    assert row["lo"] <= 0.6 <= row["hi"] and row["n"] == 5 and row["n_missing"] == 1


def _row(metrics, name, group="all"):
    return metrics[(metrics["name"] == name) & (metrics["group_key"] == group)].iloc[0]


def test_by_default_a_missing_score_is_left_out_and_counted_as_missing():
    dropped = compute_metrics(_frames(), dataset_kind="synthetic", n_boot=50)
    assert value(dropped, "accuracy") == pytest.approx(3 / 4)
    assert value(dropped, "failed_questions") == 1  # still reported
    overall = _row(dropped, "accuracy")
    assert (overall["n"], overall["n_missing"]) == (4, 1)
    knowledge = _row(dropped, "accuracy", "knowledge-update")  # q3 yes, q5 failed
    assert (knowledge["value"], knowledge["n"], knowledge["n_missing"]) == (1.0, 1, 1)
    assert _row(dropped, "accuracy", "single-session-user")["n_missing"] == 0
    assert _row(dropped, "task_averaged_accuracy")["n_missing"] == 1
    assert pd.isna(_row(dropped, "questions")["n_missing"])  # counts have nothing missing


def test_missing_verdicts_are_counted():
    scores = _scores()
    scores = scores[~((scores["question_id"] == "q3") & (scores["scorer"] == "judge"))]
    metrics = compute_metrics(_frames(scores=scores), dataset_kind="synthetic", on_missing="wrong", n_boot=50)
    assert value(metrics, "judge_missing") == 1
    assert value(metrics, "accuracy") == pytest.approx(2 / 5)
    assert _row(metrics, "accuracy")["n_missing"] == 2  # q3 no verdict, q5 no answer
    dropped = compute_metrics(_frames(scores=scores), dataset_kind="synthetic", n_boot=50)
    assert value(dropped, "accuracy") == pytest.approx(2 / 3)


def test_retention(metrics):
    assert value(metrics, "retention") == pytest.approx(2 / 3)
    assert value(metrics, "retention", "single-session-user") == pytest.approx(1 / 2)
    assert value(metrics, "evidence_retention") == pytest.approx(0.75)


def test_context_and_compression(metrics):
    assert value(metrics, "context_tokens_avg") == pytest.approx(250.0)
    assert value(metrics, "context_tokens_peak") == 400
    assert value(metrics, "question_context_tokens_avg") == pytest.approx(250.0)
    assert value(metrics, "full_history_tokens_avg") == pytest.approx(1275.0)
    # observation cycles: (1000 + 600 + 300) / (250 + 200 + 150) = 1900 / 600; per cycle (4 + 3 + 2) / 3
    assert value(metrics, "compression_observation") == pytest.approx(1900 / 600)
    assert value(metrics, "compression_observation_per_cycle") == pytest.approx(3.0)
    # reflection: (400 + 500) / (100 + 250); per cycle (4 + 2) / 2
    assert value(metrics, "compression_reflection") == pytest.approx(900 / 350)
    assert value(metrics, "compression_reflection_per_cycle") == pytest.approx(3.0)
    # at question time: 1000/100, 1000/200, 1500/300, 1600/400 -> (10 + 5 + 5 + 4) / 4
    assert value(metrics, "compression_context") == pytest.approx(6.0)


def test_cost(metrics):
    assert value(metrics, "cost_usd") == pytest.approx(0.043)
    assert value(metrics, "cost_usd_paid") == pytest.approx(0.013)  # the 0.03 call was a cache hit
    assert value(metrics, "cost_usd", "role:observer") == pytest.approx(0.04)
    assert value(metrics, "cost_usd", "role:judge") == pytest.approx(0.001)
    assert value(metrics, "cost_usd", "model:omlab/judge") == pytest.approx(0.001)  # resolved, else requested
    assert value(metrics, "cost_usd", "tier:10000") == pytest.approx(0.01)
    assert value(metrics, "cost_usd", "tier:40000") == pytest.approx(0.03)
    assert value(metrics, "calls") == 5 and value(metrics, "calls", "role:judge") == 2
    assert value(metrics, "cached_calls") == 1 and value(metrics, "call_errors") == 1
    assert value(metrics, "input_tokens", "role:observer") == 4000
    # latency over calls actually made: the cached observer call is left out
    assert value(metrics, "latency_s_p50", "role:observer") == pytest.approx(1.0)
    assert value(metrics, "latency_s_p95", "role:judge") == pytest.approx(0.195)


def test_blocking(metrics):
    assert value(metrics, "blocked_s") == pytest.approx(2.0)
    assert value(metrics, "blocked_s_per_conversation") == pytest.approx(1.0)  # (1.5 + 0.5) / 2
    assert value(metrics, "blocked_steps") == 2
    assert value(metrics, "sync_observations") == 1
    assert value(metrics, "sync_reflections") == 1
    assert value(metrics, "buffered_observations") == 2
    assert value(metrics, "buffered_reflections") == 1
    assert value(metrics, "activations") == 2
    assert value(metrics, "activations", "trigger:threshold") == 1
    assert value(metrics, "activations", "trigger:ttl") == 1
    assert value(metrics, "reflection_activations") == 1


def test_locomo_reports_f1_for_all_categories_and_j_for_one_to_four():
    answers = pd.DataFrame(
        {
            "question_id": ["a", "b", "c", "d"],
            "question_type": ["single-hop", "multi-hop", "adversarial", "temporal"],
            "is_abstention": pd.array([False, False, True, False], dtype="boolean"),
            "category": pd.array([4, 1, 5, 2], dtype="Int64"),
            "status": ["ok", "ok", "ok", "failed"],
            "context_tokens": [1, 1, 1, None],
            "full_history_tokens": [2, 2, 2, None],
        }
    )
    scores = pd.DataFrame(
        [
            ("a", "judge", 1.0, True),
            ("b", "judge", 0.0, False),
            ("a", "f1", 0.5, None),
            ("b", "f1", 0.25, None),
            ("c", "f1", 1.0, None),
        ],
        columns=["question_id", "scorer", "value", "correct"],
    )
    metrics = compute_metrics(
        RunFrames(_steps().iloc[0:0], _events().iloc[0:0], _calls().iloc[0:0], answers, scores),
        dataset_kind="locomo",
        on_missing="wrong",
        n_boot=50,
    )
    # F1 over all four (the failed one scores 0): (0.5 + 0.25 + 1 + 0) / 4
    assert value(metrics, "f1") == pytest.approx(1.75 / 4)
    assert value(metrics, "f1", "adversarial") == pytest.approx(1.0)
    # J over categories 1-4 only: a yes, b no, d failed -> 1/3
    assert value(metrics, "accuracy") == pytest.approx(1 / 3)
    assert value(metrics, "accuracy", "single-hop") == pytest.approx(1.0)
    assert math.isnan(value(metrics, "accuracy", "adversarial"))
    assert (_row(metrics, "f1")["n"], _row(metrics, "f1")["n_missing"]) == (4, 1)
    assert _row(metrics, "f1", "temporal")["n_missing"] == 1
    # by default the missing F1 is left out, never counted as 0
    dropped = compute_metrics(
        RunFrames(_steps().iloc[0:0], _events().iloc[0:0], _calls().iloc[0:0], answers, scores),
        dataset_kind="locomo",
        n_boot=50,
    )
    assert value(dropped, "f1") == pytest.approx(1.75 / 3)
    assert (_row(dropped, "f1")["n"], _row(dropped, "f1")["n_missing"]) == (3, 1)
    assert value(dropped, "accuracy") == pytest.approx(1 / 2)


def test_empty_frames_give_no_rows():
    empty = RunFrames(*(frame.iloc[0:0] for frame in (_steps(), _events(), _calls(), _answers(), _scores())))
    assert compute_metrics(empty, dataset_kind="synthetic").empty


def test_records_turn_nan_into_null(metrics):
    records = metrics_records(metrics)
    assert len(records) == len(metrics)
    assert all(r["lo"] is None or not math.isnan(r["lo"]) for r in records)


def test_sweep_table_puts_grid_values_beside_the_metrics():
    import json

    runs = pd.DataFrame(
        {
            "run_id": ["r1", "r2"],
            "config_name": ["bufferTokens=0.1", "bufferTokens=0.2"],
            "config_json": [
                json.dumps({"grid_point": {"observation.bufferTokens": 0.1, "observation.blockAfter": 1.2}}),
                json.dumps({"grid_point": {"observation.bufferTokens": 0.2, "observation.blockAfter": 1.2}}),
            ],
        }
    )
    metrics = pd.DataFrame(
        [
            ("r1", "blocked_s", "all", 12.0),
            ("r2", "blocked_s", "all", 3.0),
            ("r1", "accuracy", "all", 0.5),
        ],
        columns=["run_id", "name", "group_key", "value"],
    )
    table = sweep_table(runs, metrics)
    assert list(table.columns[:4]) == ["run_id", "config_name", "buffer_tokens", "block_after"]
    assert table["blocked_s"].tolist() == [12.0, 3.0]
    assert table.loc[0, "accuracy"] == 0.5 and math.isnan(table.loc[1, "accuracy"])


def test_sweep_table_rows_follow_the_swept_values_not_the_finish_order():
    import json

    points = [(0.4, 1.1), (0.1, 2.0), (0.1, 1.1)]
    runs = pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(3)],
            "config_name": ["c"] * 3,
            "config_json": [
                json.dumps({"grid_point": {"observation.bufferTokens": b, "observation.blockAfter": a}})
                for b, a in points
            ],
        }
    )
    table = sweep_table(runs, pd.DataFrame(columns=["run_id", "name", "group_key", "value"]))
    assert list(zip(table["buffer_tokens"], table["block_after"], strict=True)) == [(0.1, 1.1), (0.1, 2.0), (0.4, 1.1)]


def test_task_averaged_accuracy_over_a_subset_names_the_absent_types_and_is_missing_in_the_official_protocol():
    absent = {
        "single-session-assistant",
        "single-session-preference",
        "multi-session",
        "temporal-reasoning",
    }
    ours = compute_metrics(_frames(), dataset_kind="longmemeval", n_boot=50)
    assert value(ours, "task_averaged_accuracy") == pytest.approx((2 / 3 + 1) / 2)  # the two types present
    assert set(ours.loc[ours["name"] == "task_type_absent", "group_key"]) == absent
    official = compute_metrics(_frames(), dataset_kind="longmemeval", protocol="official", n_boot=50)
    assert math.isnan(value(official, "task_averaged_accuracy"))  # the official script prints nan
    assert value(official, "accuracy") == value(ours, "accuracy")  # micro accuracy is unaffected
    # a dataset of other question types has no LongMemEval types to be absent
    own_types = _answers().assign(question_type="my-type")
    assert (
        compute_metrics(_frames(answers=own_types), dataset_kind="jsonl", n_boot=50)
        .query("name == 'task_type_absent'")
        .empty
    )


def test_sweep_table_carries_the_accuracy_interval_after_the_old_columns():
    import json

    runs = pd.DataFrame(
        {
            "run_id": ["r1", "r2"],
            "config_name": ["a", "b"],
            "config_json": [json.dumps({"grid_point": {"observation.bufferTokens": b}}) for b in (0.1, 0.2)],
        }
    )
    metrics = pd.DataFrame(
        [
            ("r1", "accuracy", "all", 0.5, 0.45, 0.55, 300),
            ("r1", "accuracy", "temporal", 0.9, 0.8, 1.0, 20),
            ("r2", "blocked_s", "all", 3.0, None, None, None),
        ],
        columns=["run_id", "name", "group_key", "value", "lo", "hi", "n"],
    )
    table = sweep_table(runs, metrics)
    assert list(table.columns[-3:]) == ["accuracy_lo", "accuracy_hi", "accuracy_n"]
    assert list(table.columns[:-3]) == list(
        sweep_table(runs, metrics[["run_id", "name", "group_key", "value"]]).columns[:-3]
    )
    assert table.loc[0, ["accuracy", "accuracy_lo", "accuracy_hi", "accuracy_n"]].tolist() == [0.5, 0.45, 0.55, 300]
    assert table.loc[1, ["accuracy_lo", "accuracy_hi", "accuracy_n"]].isna().all()

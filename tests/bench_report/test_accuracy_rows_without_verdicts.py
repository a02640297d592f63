"""Accuracy by question type keeps a row for every judged type even when none of its questions
has a verdict: value missing, n 0 and the missing count, as docs/results-queries.md's query
gives it (the report used to drop the whole section when the judge never answered)."""

from __future__ import annotations

import math

import pandas as pd

from omlab.bench.report.metrics import RunFrames, compute_metrics
from omlab.bench.report.run_report import report_sections

_EMPTY = pd.DataFrame()


def _frames(answers: pd.DataFrame, scores: pd.DataFrame) -> RunFrames:
    return RunFrames(_EMPTY, _EMPTY, _EMPTY, answers, scores)


def _answers(types: list[str], categories: list[int | None], abstention: list[bool] | None = None) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "question_id": [f"q{i}" for i in range(len(types))],
            "question_type": types,
            "is_abstention": pd.array(abstention or [False] * len(types), dtype="boolean"),
            "category": pd.array(categories, dtype="Int64"),
            "status": ["ok"] * len(types),
            "context_tokens": [1] * len(types),
            "full_history_tokens": [2] * len(types),
        }
    )


def _scores(rows: list[tuple[str, str, float, bool | None]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["question_id", "scorer", "value", "correct"])


def _accuracy_rows(metrics: pd.DataFrame) -> dict[str, tuple[float, int, int]]:
    rows = metrics[metrics["name"] == "accuracy"]
    return {r.group_key: (r.value, int(r.n), int(r.n_missing)) for r in rows.itertuples()}


def _by_type_section(metrics: pd.DataFrame) -> list[list[str]]:
    header = pd.Series({"run_id": "R", "status": "incomplete", "config_json": "{}", "error": "INCOMPLETE"})
    (section,) = [s for s in report_sections(header, metrics) if s.title == "Accuracy by question type"]
    return section.rows


def test_locomo_without_a_single_verdict_keeps_a_row_per_judged_category():
    answers = _answers(["multi-hop", "temporal", "temporal", "single-hop", "adversarial"], [1, 2, 2, 4, 5])
    scores = _scores([(f"q{i}", "f1", 0.5, None) for i in range(5)])
    metrics = compute_metrics(_frames(answers, scores), dataset_kind="locomo", judged=True, n_boot=20)
    rows = _accuracy_rows(metrics)
    assert set(rows) == {"all", "multi-hop", "temporal", "single-hop"}  # adversarial is never judged
    assert all(math.isnan(value) and n == 0 for value, n, _ in rows.values())
    assert {key: missing for key, (_, _, missing) in rows.items()} == {
        "all": 4,
        "multi-hop": 1,
        "temporal": 2,
        "single-hop": 1,
    }
    assert _by_type_section(metrics) == [
        ["single-hop", "—", "", "0", "1"],
        ["multi-hop", "—", "", "0", "1"],
        ["temporal", "—", "", "0", "2"],
    ]


def test_locomo_a_category_without_verdicts_beside_judged_ones_keeps_its_row():
    answers = _answers(["multi-hop", "temporal", "single-hop"], [1, 2, 4])
    scores = _scores(
        [("q0", "judge", 1.0, True), ("q2", "judge", 0.0, False), *((f"q{i}", "f1", 0.5, None) for i in range(3))]
    )
    rows = _accuracy_rows(compute_metrics(_frames(answers, scores), dataset_kind="locomo", n_boot=20))
    assert rows["multi-hop"] == (1.0, 1, 0) and rows["single-hop"] == (0.0, 1, 0)
    value, n, missing = rows["temporal"]
    assert math.isnan(value) and (n, missing) == (0, 1)


def test_longmemeval_without_a_single_verdict_keeps_a_row_per_type_and_abstention():
    answers = _answers(
        ["multi-session", "multi-session", "knowledge-update"], [None] * 3, abstention=[False, True, False]
    )
    metrics = compute_metrics(_frames(answers, _scores([])), dataset_kind="longmemeval", judged=True, n_boot=20)
    rows = _accuracy_rows(metrics)
    assert set(rows) == {"all", "multi-session", "knowledge-update", "abstention"}
    assert all(math.isnan(value) and n == 0 for value, n, _ in rows.values())
    assert rows["multi-session"][2] == 2 and rows["abstention"][2] == 1
    assert [row[0] for row in _by_type_section(metrics)] == ["multi-session", "knowledge-update", "abstention"]

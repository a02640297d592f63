import math

import pandas as pd
import pytest

from omlab.bench.scoring.aggregate import locomo_report, longmemeval_report
from omlab.bench.scoring.bootstrap import wilson_ci

SSU, SSA, SSP = "single-session-user", "single-session-assistant", "single-session-preference"
MS, TR, KU = "multi-session", "temporal-reasoning", "knowledge-update"

ROWS = [  # (type, correct, abstention)
    (SSU, True, False),
    (SSU, False, False),
    (SSU, True, False),
    (SSA, True, False),
    (SSP, False, False),
    (MS, True, False),
    (MS, False, False),
    (MS, True, True),
    (MS, False, True),
    (TR, True, False),
    (TR, True, True),
    (KU, False, False),
    (KU, False, False),
]


def _lme(rows=ROWS) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"question_id": f"q{i}", "question_type": t, "correct": c, "is_abstention": a}
            for i, (t, c, a) in enumerate(rows)
        ]
    )


def test_longmemeval_headline_numbers_hand_computed():
    report = longmemeval_report(_lme())
    assert report.n == 13 and report.n_abstention == 3
    assert report.overall_accuracy == pytest.approx(7 / 13)
    # per type: 2/3, 1, 0, 2/4, 2/2, 0
    assert report.task_averaged_accuracy == pytest.approx((2 / 3 + 1 + 0 + 0.5 + 1 + 0) / 6)
    assert report.abstention_accuracy == pytest.approx(2 / 3)
    assert report.missing_types == ()
    lo, hi = report.overall_ci.lo, report.overall_ci.hi
    assert lo < 7 / 13 < hi


def test_longmemeval_per_type_table():
    table = longmemeval_report(_lme()).by_type
    assert list(table.index) == [SSU, SSA, SSP, MS, TR, KU]
    assert table["n"].tolist() == [3, 1, 1, 4, 2, 2]
    assert table["n_correct"].tolist() == [2, 1, 0, 2, 2, 0]
    assert table["accuracy"].tolist() == pytest.approx([2 / 3, 1, 0, 0.5, 1, 0])
    assert (table["ci_lo"] <= table["accuracy"]).all() and (table["accuracy"] <= table["ci_hi"]).all()
    # 2/2 correct: the Wilson interval reaches 1 but is not a certainty
    low, high = table.loc[TR, ["ci_lo", "ci_hi"]].tolist()
    assert high == 1.0 and low == pytest.approx(0.3424, abs=1e-4)


@pytest.mark.parametrize(
    ("correct", "n", "low", "high"),
    [(0, 6, 0.0, 0.3903), (6, 6, 0.6097, 1.0), (7, 12, 0.3195, 0.8067), (1, 1, 0.2065, 1.0)],
)
def test_wilson_intervals_never_collapse_for_a_proportion(correct, n, low, high):
    interval = wilson_ci([True] * correct + [False] * (n - correct))
    assert interval.mean == pytest.approx(correct / n)
    assert (interval.lo, interval.hi) == (pytest.approx(low, abs=1e-4), pytest.approx(high, abs=1e-4))
    assert interval.hi - interval.lo > 0


def test_wilson_takes_proportions_only():
    with pytest.raises(ValueError, match="proportions only"):
        wilson_ci([0.5, 1.0])
    with pytest.raises(ValueError, match="non-empty"):
        wilson_ci([])


def test_task_average_over_present_types_only():
    report = longmemeval_report(_lme([r for r in ROWS if r[0] != SSP]))
    assert report.missing_types == (SSP,)
    assert report.task_averaged_accuracy == pytest.approx((2 / 3 + 1 + 0.5 + 1 + 0) / 5)
    assert report.overall_accuracy == pytest.approx(7 / 12)


def test_no_abstention_rows_gives_nan():
    report = longmemeval_report(_lme([r for r in ROWS if not r[2]]))
    assert math.isnan(report.abstention_accuracy) and report.n_abstention == 0


def test_judge_failures_are_an_explicit_choice():
    frame = _lme()
    frame["correct"] = frame["correct"].astype(object)
    frame.loc[0, "correct"] = None  # an SSU that was correct
    with pytest.raises(ValueError, match=r"1 results have no verdict \(e.g. \['q0'\]\)"):
        longmemeval_report(frame)
    assert longmemeval_report(frame, on_missing="wrong").overall_accuracy == pytest.approx(6 / 13)
    dropped = longmemeval_report(frame, on_missing="drop")
    assert dropped.n == 12 and dropped.overall_accuracy == pytest.approx(6 / 12)


def test_longmemeval_bad_input():
    with pytest.raises(ValueError, match="missing columns"):
        longmemeval_report(_lme().drop(columns="is_abstention"))
    with pytest.raises(ValueError, match="no results"):
        longmemeval_report(_lme().iloc[0:0])
    with pytest.raises(ValueError, match="booleans or 0/1"):
        longmemeval_report(_lme().assign(correct="yes"))


LOCOMO_ROWS = [  # (category, f1, correct)
    (1, 0.5, True),
    (1, 1.0, False),
    (2, 0.0, True),
    (4, 1.0, True),
    (4, 0.5, True),
    (4, 0.0, False),
    (5, 1.0, True),
    (5, 0.0, True),
]


def _locomo(rows=LOCOMO_ROWS) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"question_id": f"c:q{i}", "question_type": "x", "category": cat, "f1": f1, "correct": ok}
            for i, (cat, f1, ok) in enumerate(rows)
        ]
    )


def test_locomo_f1_per_category_and_overall():
    report = locomo_report(_locomo())
    assert report.f1_overall == pytest.approx(4 / 8)
    table = report.f1_by_category
    assert list(table.index) == [4, 1, 2, 5]  # official order, category 3 absent
    assert table["name"].tolist() == ["single-hop", "multi-hop", "temporal", "adversarial"]
    assert table["n"].tolist() == [3, 2, 1, 2]
    assert table["f1"].tolist() == pytest.approx([0.5, 0.75, 0.0, 0.5])


def test_locomo_j_excludes_category_5():
    report = locomo_report(_locomo())
    assert report.j_n == 6
    assert report.j == pytest.approx(4 / 6)
    table = report.j_by_category
    assert list(table.index) == [4, 1, 2]
    assert table["accuracy"].tolist() == pytest.approx([2 / 3, 0.5, 1.0])
    assert table["n_correct"].tolist() == [2, 1, 1]
    assert report.j_ci.lo <= report.j <= report.j_ci.hi


def test_locomo_with_only_one_metric():
    f1_only = locomo_report(_locomo().drop(columns="correct"))
    assert math.isnan(f1_only.j) and f1_only.j_ci is None and f1_only.j_n == 0
    assert f1_only.j_by_category.empty
    judge_only = locomo_report(_locomo().drop(columns="f1"))
    assert math.isnan(judge_only.f1_overall) and judge_only.f1_by_category.empty
    assert judge_only.j == pytest.approx(4 / 6)


def test_locomo_bad_input():
    with pytest.raises(ValueError, match="1-5"):
        locomo_report(_locomo([(6, 0.5, True)]))
    with pytest.raises(ValueError, match="'f1' column, a 'correct' column"):
        locomo_report(_locomo().drop(columns=["f1", "correct"]))
    with pytest.raises(ValueError, match="no f1 score"):
        locomo_report(_locomo().assign(f1=[None] * 8))

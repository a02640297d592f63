"""Benchmark numbers from a DataFrame of per-question results.

Expected columns (one row per question): ``question_id``, ``question_type``, ``is_abstention``,
``correct`` (judge verdict: bool or 0/1; None/NaN = judge failure), and for LoCoMo ``category``
(``locomo10.json`` numbering) and ``f1``.

LongMemEval (as the official printer reports it, benchmarks.md §1.5):
  - overall accuracy: micro mean of ``correct`` over all questions;
  - task-averaged accuracy: unweighted mean of the per-type accuracies of the LongMemEval types
    present (all six on a full run; Mastra's harness calls this "overall");
  - abstention accuracy: mean of ``correct`` over ``is_abstention`` rows (they also count in their
    type);
  - a per-type table with percentile-bootstrap CIs.
LoCoMo: mean F1 per category and overall (all categories, as the official script), and J, the
judge accuracy over categories 1-4 only (category 5 has no gold answer; n = 1,540 on the full set).

Judge failures (``correct`` missing) are an explicit choice, ``on_missing``: ``"error"`` (raise,
default), ``"wrong"`` (count as incorrect) or ``"drop"`` (leave out of every denominator).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pandas as pd

from omlab.bench.datasets.locomo import CATEGORY_NAMES
from omlab.bench.datasets.schema import LONGMEMEVAL_TYPES
from omlab.bench.scoring.bootstrap import ConfidenceInterval, bootstrap_ci, wilson_ci
from omlab.bench.scoring.required_scorers import J_CATEGORIES

MissingPolicy = Literal["error", "wrong", "drop"]
LOCOMO_CATEGORY_ORDER: tuple[int, ...] = (4, 1, 2, 3, 5)
"""The official printing order (= the paper's: single-hop, multi-hop, temporal, open, adversarial)."""


@dataclass(frozen=True)
class LongMemEvalReport:
    """LongMemEval's three headline numbers plus the per-type table.

    Attributes:
        overall_accuracy: Micro accuracy over all questions.
        task_averaged_accuracy: Mean of per-type accuracies over the LongMemEval types present.
        abstention_accuracy: Accuracy on abstention questions (NaN when there are none).
        n: Questions counted.
        n_abstention: Abstention questions counted.
        overall_ci: Bootstrap CI of the overall accuracy.
        by_type: One row per type (index ``question_type``): ``n``, ``n_correct``, ``accuracy``,
            ``ci_lo``, ``ci_hi``.
        missing_types: LongMemEval types absent from the results (task average excludes them).
    """

    overall_accuracy: float
    task_averaged_accuracy: float
    abstention_accuracy: float
    n: int
    n_abstention: int
    overall_ci: ConfidenceInterval
    by_type: pd.DataFrame
    missing_types: tuple[str, ...]


@dataclass(frozen=True)
class LoCoMoReport:
    """LoCoMo's F1 (official) and J (LLM judge, categories 1-4).

    Attributes:
        f1_overall: Mean F1 over all questions (NaN without an ``f1`` column).
        f1_by_category: Index ``category`` in official order: ``name``, ``n``, ``f1``, ``ci_lo``,
            ``ci_hi`` (empty without an ``f1`` column).
        j: Judge accuracy over categories 1-4 (NaN without a ``correct`` column or such rows).
        j_n: Questions counted in J.
        j_ci: Bootstrap CI of J (None when J is NaN).
        j_by_category: Index ``category`` (4, 1, 2, 3): ``name``, ``n``, ``n_correct``,
            ``accuracy``, ``ci_lo``, ``ci_hi``.
    """

    f1_overall: float
    f1_by_category: pd.DataFrame
    j: float
    j_n: int
    j_ci: ConfidenceInterval | None
    j_by_category: pd.DataFrame


def longmemeval_report(
    results: pd.DataFrame,
    *,
    on_missing: MissingPolicy = "error",
    n_boot: int = 2000,
    alpha: float = 0.05,
    seed: int = 0,
) -> LongMemEvalReport:
    """Overall (micro), task-averaged and abstention accuracy, plus a per-type table with CIs.

    Raises:
        ValueError: Missing columns, no rows, or judge failures with ``on_missing="error"``.
    """
    frame = _with_correct(results, ("question_id", "question_type", "is_abstention"), on_missing)
    if frame.empty:
        raise ValueError("no results to aggregate")
    by_type = _accuracy_table(
        frame, "question_type", _type_order(frame["question_type"]), n_boot=n_boot, alpha=alpha, seed=seed
    )
    present = [t for t in LONGMEMEVAL_TYPES if t in by_type.index]
    task_averaged = float(by_type.loc[present, "accuracy"].mean()) if present else float(by_type["accuracy"].mean())
    abstention = frame.loc[frame["is_abstention"].astype(bool), "correct"]
    return LongMemEvalReport(
        overall_accuracy=float(frame["correct"].mean()),
        task_averaged_accuracy=task_averaged,
        abstention_accuracy=float(abstention.mean()) if len(abstention) else float("nan"),
        n=len(frame),
        n_abstention=len(abstention),
        overall_ci=wilson_ci(frame["correct"].astype(float).tolist(), alpha=alpha),
        by_type=by_type,
        missing_types=tuple(t for t in LONGMEMEVAL_TYPES if t not in by_type.index),
    )


def locomo_report(
    results: pd.DataFrame,
    *,
    on_missing: MissingPolicy = "error",
    n_boot: int = 2000,
    alpha: float = 0.05,
    seed: int = 0,
) -> LoCoMoReport:
    """Mean F1 per category and overall, and J on categories 1-4, with bootstrap CIs.

    Needs ``category`` and at least one of ``f1`` / ``correct``.

    Raises:
        ValueError: Missing columns, categories outside 1-5, NaN F1, or judge failures with
            ``on_missing="error"``.
    """
    _require(results, ("question_id", "category"))
    if "f1" not in results.columns and "correct" not in results.columns:
        raise ValueError("results need an 'f1' column, a 'correct' column, or both")
    bad = sorted(set(results["category"].dropna().astype(int)) - set(CATEGORY_NAMES))
    if bad or results["category"].isna().any():
        raise ValueError(f"LoCoMo categories must be 1-5, found {bad or 'missing values'}")
    frame = results.assign(category=results["category"].astype(int))
    order = [c for c in LOCOMO_CATEGORY_ORDER if c in set(frame["category"])]

    if "f1" in frame.columns:
        if frame["f1"].isna().any():
            raise ValueError(f"{int(frame['f1'].isna().sum())} rows have no f1 score")
        f1_table = _named(_mean_table(frame, "category", order, "f1", n_boot=n_boot, alpha=alpha, seed=seed))
        f1_overall = float(frame["f1"].mean()) if len(frame) else float("nan")
    else:
        f1_table, f1_overall = _empty_table("f1"), float("nan")

    j_frame = frame[frame["category"].isin(J_CATEGORIES)]
    if "correct" in frame.columns and len(j_frame):
        j_frame = _with_correct(j_frame, (), on_missing)
    if "correct" in frame.columns and len(j_frame):
        kept = set(j_frame["category"])  # a category whose every verdict is missing has no row here
        j_order = [c for c in order if c in J_CATEGORIES and c in kept]
        j_table = _named(_accuracy_table(j_frame, "category", j_order, n_boot=n_boot, alpha=alpha, seed=seed))
        j = float(j_frame["correct"].mean())
        j_ci = wilson_ci(j_frame["correct"].astype(float).tolist(), alpha=alpha)
    else:
        j_table, j, j_ci = _empty_table("accuracy"), float("nan"), None
    return LoCoMoReport(
        f1_overall=f1_overall,
        f1_by_category=f1_table,
        j=j,
        j_n=len(j_frame) if j_ci is not None else 0,
        j_ci=j_ci,
        j_by_category=j_table,
    )


def _require(frame: pd.DataFrame, columns: tuple[str, ...]) -> None:
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(f"results are missing columns {missing}; have {list(frame.columns)}")


def _with_correct(results: pd.DataFrame, columns: tuple[str, ...], on_missing: MissingPolicy) -> pd.DataFrame:
    """Rows with a float 0/1 ``correct``, judge failures handled per ``on_missing``."""
    _require(results, (*columns, "correct"))
    if on_missing not in ("error", "wrong", "drop"):
        raise ValueError(f"on_missing must be 'error', 'wrong' or 'drop', got {on_missing!r}")
    failed = results["correct"].isna()
    if failed.any() and on_missing == "error":
        ids = results.loc[failed, "question_id"].head(5).tolist() if "question_id" in results else []
        raise ValueError(
            f"{int(failed.sum())} results have no verdict (e.g. {ids}); pass "
            "on_missing='wrong' or 'drop' to decide how they count"
        )
    frame = results[~failed] if on_missing == "drop" else results
    try:
        values = frame["correct"].astype(object).where(frame["correct"].notna(), False).astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError("'correct' must hold booleans or 0/1") from exc
    if not values.isin([0.0, 1.0]).all():
        raise ValueError("'correct' must hold booleans or 0/1")
    return frame.assign(correct=values)


def _type_order(types: pd.Series) -> list[str]:
    present = set(types)
    return [t for t in LONGMEMEVAL_TYPES if t in present] + sorted(present - set(LONGMEMEVAL_TYPES))


def _accuracy_table(
    frame: pd.DataFrame, key: str, order: list, *, n_boot: int, alpha: float, seed: int
) -> pd.DataFrame:
    table = _mean_table(frame, key, order, "correct", n_boot=n_boot, alpha=alpha, seed=seed, proportion=True)
    table = table.rename(columns={"correct": "accuracy"})
    table.insert(1, "n_correct", [int(frame.loc[frame[key] == k, "correct"].sum()) for k in order])
    return table


def _mean_table(
    frame: pd.DataFrame,
    key: str,
    order: list,
    column: str,
    *,
    n_boot: int,
    alpha: float,
    seed: int,
    proportion: bool = False,
) -> pd.DataFrame:
    """Per ``key`` value: n, the mean of ``column`` and its interval (Wilson for a ``proportion``,
    else bootstrap)."""
    rows = []
    for value in order:
        scores = frame.loc[frame[key] == value, column].astype(float).tolist()
        interval = (
            wilson_ci(scores, alpha=alpha) if proportion else bootstrap_ci(scores, n=n_boot, alpha=alpha, seed=seed)
        )
        rows.append({"n": len(scores), column: interval.mean, "ci_lo": interval.lo, "ci_hi": interval.hi})
    table = pd.DataFrame(rows, index=pd.Index(order, name=key))
    return table if rows else _empty_table(column)


def _named(table: pd.DataFrame) -> pd.DataFrame:
    """Add LoCoMo's category names as the first column."""
    return table.assign(name=[CATEGORY_NAMES[c] for c in table.index])[["name", *table.columns]]


def _empty_table(column: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "n": pd.Series(dtype=int),
            column: pd.Series(dtype=float),
            "ci_lo": pd.Series(dtype=float),
            "ci_hi": pd.Series(dtype=float),
        }
    )

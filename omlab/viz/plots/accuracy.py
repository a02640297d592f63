"""Recall accuracy per question type, with confidence intervals and the two headline averages.

LongMemEval quotes two overall numbers (benchmarks.md §1.5): the *micro* accuracy over all
questions, and the *task-averaged* accuracy (the unweighted mean of the per-type accuracies).
They differ when types have different sizes, so the plot draws both as vertical lines.

The plot reads either frame:

* ``metrics_df`` rows (``name``, ``group_key``, ``value``, ``lo``, ``hi``, ``n``): rows named
  ``metric`` give one bar per ``group_key``; the ``all`` row is the micro accuracy; a row named
  ``task_averaged_<metric>`` gives the task average (else it is the mean of the type bars); the
  ``abstention`` group is drawn hatched, as a subset that also counts in its type;
* ``answers_df`` rows (``question_type``, one score column per scorer, optional
  ``is_abstention``): per-type means of the ``scorer`` column with Wilson score intervals for 0/1
  verdicts and percentile-bootstrap ones for graded scores. With no ``scorer`` given, the first
  column of :data:`SCORER_PREFERENCE` holding a score is used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from omlab.bench.datasets.locomo import CATEGORY_NAMES
from omlab.bench.datasets.schema import LONGMEMEVAL_TYPES
from omlab.bench.scoring.aggregate import LOCOMO_CATEGORY_ORDER
from omlab.bench.scoring.bootstrap import score_ci
from omlab.viz.plots import _format as fmt
from omlab.viz.plots._canvas import axes_or_new, draw_no_data, legend_below
from omlab.viz.plots._frames import has_rows, numeric, require_columns, single_value
from omlab.viz.style import BLACK, BLUE, FIGSIZE_BARS, FONT, GREY, SKY_BLUE, plain_text_plot, style_axes

PLOT = "plot_accuracy_by_type"
METRIC_COLUMNS: tuple[str, ...] = ("name", "group_key", "value", "lo", "hi", "n")
"""``metrics_df`` columns the accuracy plot needs."""
SCORER_PREFERENCE: tuple[str, ...] = ("judge", "judge_correct", "f1", "retention")
"""Score columns of ``answers_df`` tried in order when no scorer is named."""
OVERALL_KEY = "all"
ABSTENTION_KEY = "abstention"

_MEASURE_NAMES = {"f1": "F1", "retention": "Retention recall"}
_MEASURE_SOURCES = {
    "judge": " (LLM judge)",
    "judge_correct": " (LLM judge)",
    "retention": " (gold answer still in memory)",
}
_TYPE_ORDER: tuple[str, ...] = (*LONGMEMEVAL_TYPES, *(CATEGORY_NAMES[c] for c in LOCOMO_CATEGORY_ORDER))


class NoScoresError(ValueError):
    """The frame has rows but no question in it has a score (e.g. every judge verdict is missing)."""


@dataclass(frozen=True)
class AccuracyTable:
    """The numbers behind the accuracy plot.

    Attributes:
        by_group: One row per question type (display order), abstention last: columns ``group``,
            ``value``, ``lo``, ``hi``, ``n`` and ``subset`` (True for the abstention row, whose
            questions also count in their type).
        overall: Micro accuracy over all questions (NaN when unknown).
        task_averaged: Unweighted mean of the per-type values (NaN without types).
        metric: What ``value`` measures (``accuracy``, ``f1``, a scorer name...).
        interval: How ``lo``/``hi`` were computed (``Wilson score`` for a share of correct
            answers, ``percentile bootstrap`` for graded scores such as F1), for the plot's label.
    """

    by_group: pd.DataFrame
    overall: float
    task_averaged: float
    metric: str
    interval: str = "Wilson score"


def accuracy_table(
    frame: pd.DataFrame,
    *,
    metric: str = "accuracy",
    scorer: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> AccuracyTable:
    """Per-type values, CIs and the micro / task-averaged lines from a metrics or answers frame.

    A frame with ``group_key`` and ``value`` columns is read as ``metrics_df`` (rows named
    ``metric``); a frame with ``question_type`` as ``answers_df`` (column ``scorer``, booleans
    or 0-1 scores; missing scores are left out). Bootstrap settings apply to answers only.

    Raises:
        NoScoresError: The frame has rows but no score (a ``ValueError``).
        ValueError: Neither shape, missing columns, several runs, or no usable rows.
    """
    if not has_rows(frame):
        raise ValueError(f"{PLOT}: no rows to aggregate")
    if "group_key" in frame.columns and "value" in frame.columns:
        return _from_metrics(frame, metric)
    if "question_type" in frame.columns:
        return _from_answers(frame, scorer, n_boot=n_boot, seed=seed)
    raise ValueError(
        f"{PLOT}: expected a metrics frame (name, group_key, value, lo, hi, n) or an "
        f"answers frame (question_type and a score column); got columns {list(frame.columns)}"
    )


def _from_metrics(metrics: pd.DataFrame, metric: str) -> AccuracyTable:
    require_columns(metrics, METRIC_COLUMNS, frame_name="metrics", plot=PLOT)
    if "run_id" in metrics.columns:
        single_value(metrics, "run_id", plot=PLOT, option="a metrics frame filtered to one run_id")
    rows = metrics[metrics["name"].astype(str) == metric]
    if rows.empty:
        names = sorted(metrics["name"].dropna().astype(str).unique())
        raise ValueError(f"{PLOT}: no metrics named {metric!r}; available: {names}")
    groups = rows[rows["group_key"].astype(str) != OVERALL_KEY]
    table = pd.DataFrame(
        {
            "group": groups["group_key"].astype(str).to_numpy(),
            "value": numeric(groups["value"]).to_numpy(),
            "lo": numeric(groups["lo"]).to_numpy(),
            "hi": numeric(groups["hi"]).to_numpy(),
            "n": numeric(groups["n"]).to_numpy(),
        }
    )
    table = _in_display_order(table.assign(subset=table["group"] == ABSTENTION_KEY))
    overall_rows = rows[rows["group_key"].astype(str) == OVERALL_KEY]
    types = table[~table["subset"]]
    if len(overall_rows):
        overall = float(numeric(overall_rows["value"]).iloc[0])
    elif len(types) and types["n"].notna().all() and types["n"].sum() > 0:
        overall = float((types["value"] * types["n"]).sum() / types["n"].sum())
    else:
        overall = float("nan")
    averaged_rows = metrics[metrics["name"].astype(str) == f"task_averaged_{metric}"]
    task_averaged = (
        float(numeric(averaged_rows["value"]).iloc[0])
        if len(averaged_rows)
        else float(types["value"].mean())
        if len(types)
        else float("nan")
    )
    # the harness's metrics: shares of correct answers (accuracy, J, retention) carry Wilson score
    # intervals, LoCoMo's F1 a percentile bootstrap (omlab.bench.scoring.aggregate)
    interval = "percentile bootstrap" if metric == "f1" else "Wilson score"
    return AccuracyTable(table, overall, task_averaged, metric, interval)


def _from_answers(answers: pd.DataFrame, scorer: str | None, *, n_boot: int, seed: int) -> AccuracyTable:
    if scorer is None:
        scorer = scored_column(answers)
        if scorer is None:
            raise NoScoresError(
                f"{PLOT}: answers have no score in any of {list(SCORER_PREFERENCE)}; "
                "pass scorer= to name the score column"
            )
    require_columns(answers, ("question_type", scorer), frame_name="answers", plot=PLOT)
    scores = numeric(answers[scorer])
    scored = answers.assign(_score=scores)[scores.notna()]
    if scored.empty:
        raise NoScoresError(f"{PLOT}: no answer has a {scorer!r} score")
    rows = []
    for group, values in scored.groupby(scored["question_type"].astype(str))["_score"]:
        rows.append(_ci_row(group, values, subset=False, n_boot=n_boot, seed=seed))
    if "is_abstention" in scored.columns:
        abstention = scored.loc[scored["is_abstention"].astype("boolean").fillna(False).astype(bool), "_score"]
        if len(abstention):
            rows.append(_ci_row(ABSTENTION_KEY, abstention, subset=True, n_boot=n_boot, seed=seed))
    table = _in_display_order(pd.DataFrame(rows))
    types = table[~table["subset"]]
    # one method for the whole plot: Wilson only when every score is a 0/1 verdict
    interval = score_ci(scored["_score"].tolist(), n=1)[1]
    return AccuracyTable(
        table.drop(columns="method"), float(scored["_score"].mean()), float(types["value"].mean()), scorer, interval
    )


def scored_column(answers: pd.DataFrame) -> str | None:
    """The first column of :data:`SCORER_PREFERENCE` in ``answers`` that holds a score, else None."""
    for column in SCORER_PREFERENCE:
        if column in answers.columns and numeric(answers[column]).notna().any():
            return column
    return None


def _ci_row(group: str, values: pd.Series, *, subset: bool, n_boot: int, seed: int) -> dict[str, object]:
    interval, method = score_ci(values.tolist(), n=n_boot, seed=seed)
    return {
        "group": group,
        "value": interval.mean,
        "lo": interval.lo,
        "hi": interval.hi,
        "n": float(len(values)),
        "subset": subset,
        "method": method,
    }


def _in_display_order(table: pd.DataFrame) -> pd.DataFrame:
    def position(row: pd.Series) -> tuple[int, int, str]:
        if row["subset"]:
            return (2, 0, row["group"])
        if row["group"] in _TYPE_ORDER:
            return (0, _TYPE_ORDER.index(row["group"]), "")
        return (1, 0, row["group"])

    keys = table.apply(position, axis=1)
    return table.iloc[sorted(range(len(table)), key=lambda i: keys.iloc[i])].reset_index(drop=True)


@plain_text_plot
def plot_accuracy_by_type(
    frame: pd.DataFrame,
    *,
    metric: str = "accuracy",
    scorer: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Horizontal bar per question type with CI error bars, plus micro and task-averaged lines.

    Args:
        frame: ``metrics_df`` or ``answers_df`` rows (see the module docstring).
        metric: Metric name to read from a metrics frame.
        scorer: Score column to read from an answers frame (None: see :data:`SCORER_PREFERENCE`).
        n_boot: Bootstrap resamples (answers frame only).
        seed: Bootstrap seed (answers frame only).
        title: Replaces the default title.
        ax: Draw here; a new figure is made when None.

    Returns:
        The Axes; a "no data" note when the frame has no rows or no question in it has a score
        (a run whose judge never answered).

    Raises:
        ValueError: See :func:`accuracy_table`.
    """
    ax = axes_or_new(ax, FIGSIZE_BARS)
    default_title = title or "Accuracy by question type"
    if not has_rows(frame):
        return draw_no_data(ax, title=default_title, reason="no scored questions")
    try:
        table = accuracy_table(frame, metric=metric, scorer=scorer, n_boot=n_boot, seed=seed)
    except NoScoresError:
        return draw_no_data(ax, title=default_title, reason="no question has a score")
    groups = table.by_group
    if not np.isfinite(groups["value"].to_numpy(dtype=float)).any():
        return draw_no_data(ax, title=default_title, reason="no question has a score")
    rows = np.arange(len(groups))[::-1]
    values = groups["value"].to_numpy(dtype=float)
    lo = np.clip(values - groups["lo"].fillna(groups["value"]).to_numpy(dtype=float), 0, None)
    hi = np.clip(groups["hi"].fillna(groups["value"]).to_numpy(dtype=float) - values, 0, None)
    subset = groups["subset"].to_numpy(dtype=bool)
    ax.barh(rows[~subset], values[~subset], height=0.6, color=BLUE, alpha=0.85)
    if subset.any():
        ax.barh(
            rows[subset],
            values[subset],
            height=0.6,
            color="white",
            edgecolor=SKY_BLUE,
            hatch="///",
            linewidth=1.2,
            label="abstention questions (also counted in their type)",
        )
    ax.errorbar(values, rows, xerr=np.vstack([lo, hi]), fmt="none", ecolor=BLACK, elinewidth=1.1, capsize=3)
    for row, value, upper, n in zip(rows, values, values + hi, groups["n"], strict=True):
        count = "" if pd.isna(n) else f" (n={int(n)})"
        ax.annotate(
            f"{fmt.percent(value)}{count}",
            (upper, row),
            xytext=(5, 0),
            textcoords="offset points",
            va="center",
            fontsize=FONT.annotation,
            zorder=4,
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5, "alpha": 0.85},
        )
    if np.isfinite(table.overall):
        ax.axvline(
            table.overall,
            color=BLACK,
            linewidth=1.4,
            zorder=1.5,
            label=f"overall, micro (all questions): {fmt.percent(table.overall)}",
        )
    if np.isfinite(table.task_averaged):
        ax.axvline(
            table.task_averaged,
            color=GREY,
            linewidth=1.4,
            linestyle="--",
            zorder=1.5,
            label=f"task-averaged (mean of types): {fmt.percent(table.task_averaged)}",
        )
    ax.set_yticks(rows, list(groups["group"]))
    ends = (values + hi)[np.isfinite(values + hi)]
    ax.set_xlim(0, max(1.0, float(ends.max())) + 0.2)  # room for the labels
    ax.set_xticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.xaxis.set_major_formatter(fmt.PERCENT_AXIS)
    legend_below(ax, ncol=1)
    measure = _MEASURE_NAMES.get(table.metric, "Accuracy")
    source = _MEASURE_SOURCES.get(table.metric, "")
    style_axes(
        ax,
        title=title or f"{measure} by question type{source}",
        xlabel=f"{measure} (error bars: 95% {table.interval} interval)",
        ylabel="",
        grid_axis="x",
    )
    return ax

"""Per-run metrics from the results frames, and the sweep table across runs.

:func:`compute_metrics` is pure: frames in (``steps``, ``events``, ``model_calls``, ``answers``,
``scores``, as the ``omlab.bench.results`` getters return them), ``metrics`` rows out (``name``,
``group_key``, ``value``, ``lo``, ``hi``, ``n``, ``n_missing``). ``n`` is how many items the value
is computed over; ``n_missing`` (scores only) how many questions of the group have no score: with
``on_missing="drop"`` (the default) they are left out of ``n``, with ``"wrong"`` they are in ``n``
and count as wrong (F1 0). Names and groups:

* accuracy (LongMemEval-style datasets: judge verdicts): ``accuracy`` per question type, ``all``
  (micro, with a Wilson score CI) and ``abstention``; ``task_averaged_accuracy``. LoCoMo:
  ``accuracy`` is J (judge, categories 1-4) per category name and ``all``, and ``f1`` per
  category name and ``all`` (every category). Failed questions (no answer, or no verdict) are
  left out with ``on_missing="drop"`` (the default) or count as wrong with ``"wrong"``; either way
  ``n_missing``, ``failed_questions`` and ``judge_missing`` say how many there were. With the
  official protocol, LongMemEval's task-averaged accuracy over a subset that lacks one of its six
  types is missing (NaN), as the official ``print_qa_metrics.py`` prints ``nan``; either way
  ``task_type_absent`` has a row (value 1) per absent type;
* ``retention`` (gold answer still in the memory context, per type and ``all``) and
  ``evidence_retention`` (share of evidence content words still there);
* ``questions``, ``answered``, ``failed_questions``, ``judge_missing`` (counts);
* context: ``context_tokens_avg`` / ``context_tokens_peak`` over engine steps,
  ``question_context_tokens_avg`` and ``full_history_tokens_avg`` at question time;
* compression: ``compression_observation`` = observed message tokens / observation tokens summed
  over observation cycles (synchronous ones from ``data-om-observation-end``, buffered ones from
  the ``data-om-activation`` that puts a chunk in the log), ``compression_observation_per_cycle``
  (mean per-cycle ratio), the same two for reflection (input log tokens / output log tokens), and
  ``compression_context`` = mean over questions of full-history tokens / context tokens;
* cost: ``cost_usd``, *as configured* (every call's tokens priced with the run's own prices,
  cached calls included), and ``cost_usd_paid``, *paid* (only calls sent to a provider in this
  run; a response-cache hit or a reused prepared memory costs 0), each for ``all``, ``role:<r>``,
  ``model:<m>``, ``tier:<t>``; ``calls`` (``all`` and per role), ``cached_calls``,
  ``call_errors``, ``unpriced_calls`` (calls no price resolved for, counted at $0),
  ``input_tokens`` / ``output_tokens`` per role;
* blocking: ``blocked_s`` (virtual seconds the actor waited, summed over steps),
  ``blocked_s_per_conversation``, ``blocked_steps``, ``sync_observations``, ``sync_reflections``,
  ``buffered_observations``, ``buffered_reflections``, ``activations`` (buffered observation
  chunks put in the log: ``all`` and ``trigger:<t>``), ``reflection_activations``;
* latency: ``latency_s_p50`` / ``latency_s_p95`` per role (calls actually made).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from omlab.bench.datasets.locomo import CATEGORY_NAMES
from omlab.bench.datasets.schema import LONGMEMEVAL_TYPES
from omlab.bench.results.frames import paid_costs
from omlab.bench.scoring import locomo_report, longmemeval_report, wilson_ci
from omlab.bench.scoring.judged_groups import blank_row, judged_groups, with_every_group
from omlab.bench.scoring.locomo_protocol import aggregate_f1_values

METRIC_COLUMNS = ("name", "group_key", "value", "lo", "hi", "n", "n_missing")
SWEEP_METRICS: tuple[tuple[str, str, str], ...] = (
    ("blocked_s", "blocked_s", "all"),
    ("sync_observations", "sync_observations", "all"),
    ("sync_reflections", "sync_reflections", "all"),
    ("activations", "activations", "all"),
    ("context_tokens_avg", "context_tokens_avg", "all"),
    ("context_tokens_peak", "context_tokens_peak", "all"),
    ("accuracy", "accuracy", "all"),
    ("retention", "retention", "all"),
    ("cost_usd", "cost_usd", "all"),
)
"""``(column, metric name, group)`` of the sweep table, after the grid columns."""
COUNT_METRICS: frozenset[str] = frozenset(
    {
        "sync_observations",
        "sync_reflections",
        "buffered_observations",
        "buffered_reflections",
        "activations",
        "reflection_activations",
        "blocked_steps",
        "calls",
        "cached_calls",
        "call_errors",
        "unpriced_calls",
        "questions",
        "answered",
        "failed_questions",
        "judge_missing",
        "failed_phases",
        "unscored_questions",
    }
)
"""Metrics (and sweep-table columns) that count things: shown as whole numbers."""
SWEEP_INTERVALS: tuple[tuple[str, str, str], ...] = (("accuracy", "accuracy", "all"),)
"""``(column, metric name, group)`` whose 95% CI and sample size the sweep table also carries, as
``<column>_lo``, ``<column>_hi`` and ``<column>_n`` after the :data:`SWEEP_METRICS` columns."""
SWEEP_INTERVAL_COLUMNS: tuple[str, ...] = tuple(
    f"{column}_{part}" for column, _, _ in SWEEP_INTERVALS for part in ("lo", "hi", "n")
)

# A cycle's compression: synchronous cycles report it on their observation-end part, buffered ones
# on the activation that puts their output in the log (tokensActivated in, observationTokens out).
_CYCLE_TYPES = ("data-om-observation-end", "data-om-activation")
_EVENT_TYPES = ("data-om-observation-end", "data-om-buffering-end", "data-om-activation")


@dataclass(frozen=True, slots=True)
class RunFrames:
    """The frames of one run that metrics are computed from (any may be empty)."""

    steps: pd.DataFrame
    events: pd.DataFrame
    calls: pd.DataFrame
    answers: pd.DataFrame
    scores: pd.DataFrame


def load_run_frames(db: Any, run_id: str) -> RunFrames:
    """Read one run's frames with the ``omlab.bench.results`` getters (``db``: a results directory
    or a catalog; a running run is read from its live snapshot)."""
    from omlab.bench.results import calls_df, events_df, scores_df, steps_df
    from omlab.bench.results.frames import catalog_of

    catalog = catalog_of(db)
    return RunFrames(
        steps=steps_df(catalog, run_id),
        events=events_df(catalog, run_id, types=list(_EVENT_TYPES)),
        calls=calls_df(catalog, run_id),
        answers=catalog.read_table("answers", run_id),
        scores=scores_df(catalog, run_id),
    )


def compute_metrics(
    frames: RunFrames,
    *,
    dataset_kind: str,
    on_missing: str = "drop",
    judged: bool | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    f1_aggregation: str = "mean",
    protocol: str = "omlab",
) -> pd.DataFrame:
    """Every metric of the module docstring that the frames allow, as a ``metrics`` frame.

    ``f1_aggregation``: ``mean`` averages LoCoMo's per-question F1 as computed, ``official`` rounds
    each to 3 decimals first, as the official ``evaluate_qa.py`` does.

    ``judged`` says whether the run had a judge phase (None: whether any verdict exists); with it,
    accuracy is reported even when every question failed (as 0 with ``on_missing="wrong"``).
    ``protocol``: ``official`` reports LongMemEval's task-averaged accuracy as missing when a type
    is absent (the official script's ``nan``); ``omlab`` averages the types present."""
    rows: list[dict[str, Any]] = []
    rows += _question_metrics(
        frames.answers, frames.scores, dataset_kind, on_missing, judged, n_boot, seed, f1_aggregation, protocol
    )
    rows += _context_metrics(frames.steps, frames.answers)
    rows += _compression_metrics(frames.events, frames.answers)
    rows += _cost_metrics(frames.calls)
    rows += _blocking_metrics(frames.steps, frames.events)
    frame = pd.DataFrame(rows, columns=list(METRIC_COLUMNS))
    return frame.astype({"value": "float64", "lo": "float64", "hi": "float64", "n_missing": "Int64"})


def metric_value(metrics: pd.DataFrame, name: str, group: str = "all") -> float:
    """The value of metric ``name`` for ``group`` (NaN when absent)."""
    hit = metrics[(metrics["name"] == name) & (metrics["group_key"] == group)]
    return float(hit["value"].iloc[0]) if len(hit) else math.nan


def metric_interval(metrics: pd.DataFrame, name: str, group: str = "all") -> tuple[float, float, float]:
    """``(lo, hi, n)`` of metric ``name`` for ``group``: its 95% CI and sample size (NaN for each
    one that is absent, or for all three when the metric or those columns are)."""
    columns = [column for column in ("lo", "hi", "n") if column in metrics.columns]
    hit = metrics[(metrics["name"] == name) & (metrics["group_key"] == group)]
    found = {column: pd.to_numeric(hit[column], errors="coerce").iloc[0] for column in columns} if len(hit) else {}
    return tuple(float(found.get(column, math.nan)) for column in ("lo", "hi", "n"))  # type: ignore[return-value]


def sweep_table(runs: pd.DataFrame, metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per run, sorted by the swept values: its grid values (columns named like
    ``buffer_tokens``), then the :data:`SWEEP_METRICS` columns, then the
    :data:`SWEEP_INTERVAL_COLUMNS` (``accuracy_lo``, ``accuracy_hi``, ``accuracy_n``). ``runs``
    needs ``run_id``, ``config_name`` and ``config_json`` (whose ``grid_point`` holds the cell's
    values)."""
    import json

    table = []
    swept: dict[str, None] = {}
    for _, run in runs.iterrows():
        point = json.loads(run["config_json"]).get("grid_point", {}) if isinstance(run["config_json"], str) else {}
        row: dict[str, Any] = {"run_id": run["run_id"], "config_name": run["config_name"]}
        row.update({_column_name(key): _cell_value(value) for key, value in point.items()})
        swept.update(dict.fromkeys(_column_name(key) for key in point))
        own = metrics[metrics["run_id"] == run["run_id"]]
        row.update({column: metric_value(own, name, group) for column, name, group in SWEEP_METRICS})
        for column, name, group in SWEEP_INTERVALS:
            row.update(
                zip((f"{column}_{part}" for part in ("lo", "hi", "n")), metric_interval(own, name, group), strict=True)
            )
        table.append(row)
    frame = pd.DataFrame(table)
    if swept:  # rows in grid order, whatever order the runs finished in
        frame = frame.sort_values(list(swept), kind="stable", na_position="last", ignore_index=True)
    return frame


# --------------------------------------------------------------------------- questions


def _question_metrics(
    answers: pd.DataFrame,
    scores: pd.DataFrame,
    kind: str,
    on_missing: str,
    judged_run: bool | None,
    n_boot: int,
    seed: int,
    f1_aggregation: str = "mean",
    protocol: str = "omlab",
) -> list[dict[str, Any]]:
    if answers.empty:
        return []
    frame = answers.copy()
    ok = frame["status"].fillna("") != "failed"
    verdicts = _scores_of(scores, "judge", "correct")
    frame["correct"] = frame["question_id"].map(verdicts).astype(object)
    frame.loc[~ok, "correct"] = None
    frame["correct"] = frame["correct"].where(frame["correct"].notna(), None)
    judged = frame["category"].isin((1, 2, 3, 4)) if kind == "locomo" else pd.Series(True, index=frame.index)
    rows = [
        _row("questions", "all", len(frame), n=len(frame)),
        _row("answered", "all", int(ok.sum()), n=len(frame)),
        _row("failed_questions", "all", int((~ok).sum()), n=len(frame)),
        _row(
            "judge_missing",
            "all",
            int((ok & judged & frame["correct"].isna()).sum()),
            n=int((ok & judged).sum()),
        ),
    ]
    policy = "wrong" if on_missing == "wrong" else "drop"
    has_verdicts = bool(frame.loc[judged, "correct"].notna().any()) if judged_run is None else judged_run
    if kind == "locomo":
        f1 = frame["question_id"].map(_scores_of(scores, "f1", "value")).astype("float64")
        if f1_aggregation != "mean":
            f1 = f1.map(lambda v: v if math.isnan(v) else aggregate_f1_values([v], f1_aggregation)[0])
        frame["f1"] = f1
        rows += _locomo_rows(frame, policy, has_verdicts, n_boot, seed)
    elif has_verdicts and policy == "drop" and frame["correct"].isna().all():
        # nothing to aggregate: the figures are missing (n 0), never 0%
        rows.append(_row("accuracy", "all", math.nan, n=0))
        rows.append(_row("task_averaged_accuracy", "all", math.nan, n=0))
    elif has_verdicts:
        report = longmemeval_report(
            frame.assign(is_abstention=frame["is_abstention"].fillna(False).astype(bool)),
            on_missing=policy,
            n_boot=n_boot,
            seed=seed,
        )
        rows.append(
            _row(
                "accuracy",
                "all",
                report.overall_accuracy,
                report.overall_ci.lo,
                report.overall_ci.hi,
                report.n,
            )
        )
        for group, table_row in report.by_type.iterrows():
            rows.append(
                _row(
                    "accuracy",
                    str(group),
                    table_row["accuracy"],
                    table_row["ci_lo"],
                    table_row["ci_hi"],
                    int(table_row["n"]),
                )
            )
        if report.n_abstention:
            rows.append(_row("accuracy", "abstention", report.abstention_accuracy, n=report.n_abstention))
        official_nan = protocol == "official" and kind == "longmemeval" and bool(report.missing_types)
        task_averaged = math.nan if official_nan else report.task_averaged_accuracy
        rows.append(_row("task_averaged_accuracy", "all", task_averaged, n=report.n))
        if len(report.missing_types) < len(LONGMEMEVAL_TYPES):  # a LongMemEval run, some types absent
            rows += [_row("task_type_absent", t, 1.0) for t in report.missing_types]
    rows = with_every_group(rows, judged_groups(frame, judged, locomo=kind == "locomo"), blank_row("accuracy"))
    rows += _retention_rows(frame, scores)
    return _with_missing_counts(rows, frame, scores, kind, judged)


def _with_missing_counts(
    rows: list[dict[str, Any]], frame: pd.DataFrame, scores: pd.DataFrame, kind: str, judged: pd.Series
) -> list[dict[str, Any]]:
    """Fill ``n_missing`` on the score rows: the questions of each group with no score (groups
    are question types; a LoCoMo question's type is its category name)."""
    missing = {
        "accuracy": judged & frame["correct"].isna(),
        "task_averaged_accuracy": judged & frame["correct"].isna(),
        "retention": frame["question_id"].map(_scores_of(scores, "retention", "value")).isna(),
        "evidence_retention": frame["question_id"].map(_scores_of(scores, "evidence_retention", "value")).isna(),
    }
    if kind == "locomo":
        missing["f1"] = frame["f1"].isna() & frame["category"].notna()
    types = frame["question_type"].astype(object)
    for row in rows:
        flags = missing.get(row["name"])
        if flags is None:
            continue
        group = row["group_key"]
        if group == "all":
            row["n_missing"] = int(flags.sum())
        elif group == "abstention":
            row["n_missing"] = int((flags & frame["is_abstention"].fillna(False).astype(bool)).sum())
        else:
            row["n_missing"] = int((flags & (types == group)).sum())
    return rows


def _locomo_rows(frame: pd.DataFrame, policy: str, has_verdicts: bool, n_boot: int, seed: int) -> list[dict[str, Any]]:
    scored = frame.copy()
    if policy == "wrong":
        scored["f1"] = scored["f1"].fillna(0.0)
    else:
        scored = scored[scored["f1"].notna()]
    if scored.empty or scored["category"].isna().any():
        return []
    columns = ["question_id", "category", "f1"] + (["correct"] if has_verdicts else [])
    report = locomo_report(scored[columns], on_missing=policy, n_boot=n_boot, seed=seed)
    rows = [_row("f1", "all", report.f1_overall, n=len(scored))]
    for category, table_row in report.f1_by_category.iterrows():
        rows.append(
            _row(
                "f1",
                CATEGORY_NAMES[int(category)],
                table_row["f1"],
                table_row["ci_lo"],
                table_row["ci_hi"],
                int(table_row["n"]),
            )
        )
    if report.j_ci is None and has_verdicts and scored["category"].isin((1, 2, 3, 4)).any():
        rows.append(_row("accuracy", "all", math.nan, n=0))  # no verdict at all: missing, never 0%
    if report.j_ci is not None:
        rows.append(_row("accuracy", "all", report.j, report.j_ci.lo, report.j_ci.hi, report.j_n))
        for category, table_row in report.j_by_category.iterrows():
            rows.append(
                _row(
                    "accuracy",
                    CATEGORY_NAMES[int(category)],
                    table_row["accuracy"],
                    table_row["ci_lo"],
                    table_row["ci_hi"],
                    int(table_row["n"]),
                )
            )
    return rows


def _retention_rows(frame: pd.DataFrame, scores: pd.DataFrame) -> list[dict[str, Any]]:
    rows = []
    retained = frame["question_id"].map(_scores_of(scores, "retention", "value")).astype("float64")
    if retained.notna().any():
        with_type = frame.assign(retained=retained).dropna(subset=["retained"])
        interval = wilson_ci(with_type["retained"].tolist())  # a share of questions: never zero-width
        rows.append(_row("retention", "all", interval.mean, interval.lo, interval.hi, len(with_type)))
        for group, values in with_type.groupby("question_type", sort=True)["retained"]:
            rows.append(_row("retention", str(group), float(values.mean()), n=len(values)))
    coverage = frame["question_id"].map(_scores_of(scores, "evidence_retention", "value")).astype("float64").dropna()
    if len(coverage):
        rows.append(_row("evidence_retention", "all", float(coverage.mean()), n=len(coverage)))
    return rows


def _scores_of(scores: pd.DataFrame, scorer: str, column: str) -> pd.Series:
    if scores.empty:
        return pd.Series(dtype=object)
    picked = scores[scores["scorer"] == scorer].set_index("question_id")[column]
    return picked.astype(object).where(picked.notna(), None)


# --------------------------------------------------------------------------- engine


def _context_metrics(steps: pd.DataFrame, answers: pd.DataFrame) -> list[dict[str, Any]]:
    rows = []
    context = _numeric(steps.get("context_tokens")).dropna()
    if len(context):
        rows.append(_row("context_tokens_avg", "all", float(context.mean()), n=len(context)))
        rows.append(_row("context_tokens_peak", "all", float(context.max()), n=len(context)))
    at_question = _numeric(answers.get("context_tokens")).dropna()
    if len(at_question):
        rows.append(_row("question_context_tokens_avg", "all", float(at_question.mean()), n=len(at_question)))
    history = _numeric(answers.get("full_history_tokens")).dropna()
    if len(history):
        rows.append(_row("full_history_tokens_avg", "all", float(history.mean()), n=len(history)))
    return rows


def _compression_metrics(events: pd.DataFrame, answers: pd.DataFrame) -> list[dict[str, Any]]:
    rows = []
    if not events.empty:
        ends = events[events["type"].isin(_CYCLE_TYPES)]
        for label in ("observation", "reflection"):
            cycles = ends[ends["operation_type"] == label]
            tokens_in, tokens_out = _numeric(cycles["tokens_in"]), _numeric(cycles["tokens_out"])
            valid = tokens_in.notna() & tokens_out.notna() & (tokens_out > 0)
            if valid.any():
                total = float(tokens_in[valid].sum() / tokens_out[valid].sum())
                rows.append(_row(f"compression_{label}", "all", total, n=int(valid.sum())))
                rows.append(
                    _row(
                        f"compression_{label}_per_cycle",
                        "all",
                        float((tokens_in[valid] / tokens_out[valid]).mean()),
                        n=int(valid.sum()),
                    )
                )
    history, context = _numeric(answers.get("full_history_tokens")), _numeric(answers.get("context_tokens"))
    valid = history.notna() & context.notna() & (context > 0)
    if valid.any():
        rows.append(
            _row(
                "compression_context",
                "all",
                float((history[valid] / context[valid]).mean()),
                n=int(valid.sum()),
            )
        )
    return rows


def _cost_metrics(calls: pd.DataFrame) -> list[dict[str, Any]]:
    if calls.empty:
        return []
    cost = _numeric(calls["cost_usd"]).fillna(0.0)
    cached = calls["cached"].astype("boolean").fillna(False).astype(bool)
    paid = _numeric(paid_costs(calls)).fillna(0.0)
    rows = [
        _row("cost_usd", "all", float(cost.sum()), n=len(calls)),
        _row("cost_usd_paid", "all", float(paid.sum()), n=int((~cached).sum())),
        _row("calls", "all", len(calls), n=len(calls)),
        _row("cached_calls", "all", int(cached.sum()), n=len(calls)),
        _row("call_errors", "all", int(calls["error"].notna().sum()), n=len(calls)),
        _row("unpriced_calls", "all", int((_numeric(calls["cost_usd"]).isna() & calls["error"].isna()).sum())),
    ]
    model = calls["resolved_model"].fillna(calls["requested_model"]).fillna("unknown")
    tier = _numeric(calls["tier"])
    for name, values in (("cost_usd", cost), ("cost_usd_paid", paid)):
        for prefix, keys in (("role", calls["role"].fillna("unknown")), ("model", model)):
            for key, group_cost in values.groupby(keys.astype(str), sort=True):
                rows.append(_row(name, f"{prefix}:{key}", float(group_cost.sum()), n=len(group_cost)))
        for key, group_cost in values[tier.notna()].groupby(tier[tier.notna()].astype(int), sort=True):
            rows.append(_row(name, f"tier:{key}", float(group_cost.sum()), n=len(group_cost)))
    roles = calls["role"].fillna("unknown").astype(str)
    latency = _numeric(calls["latency_s"])
    for role, index in calls.groupby(roles, sort=True).groups.items():
        rows.append(_row("calls", f"role:{role}", len(index), n=len(index)))
        rows.append(
            _row(
                "input_tokens",
                f"role:{role}",
                float(_numeric(calls.loc[index, "input_tokens"]).sum()),
                n=len(index),
            )
        )
        rows.append(
            _row(
                "output_tokens",
                f"role:{role}",
                float(_numeric(calls.loc[index, "output_tokens"]).sum()),
                n=len(index),
            )
        )
        made = latency[index][~cached[index]].dropna()
        if len(made):
            rows.append(_row("latency_s_p50", f"role:{role}", float(np.percentile(made, 50)), n=len(made)))
            rows.append(_row("latency_s_p95", f"role:{role}", float(np.percentile(made, 95)), n=len(made)))
    return rows


def _blocking_metrics(steps: pd.DataFrame, events: pd.DataFrame) -> list[dict[str, Any]]:
    rows = []
    if not steps.empty:
        blocked = _numeric(steps["blocked_s"]).fillna(0.0)
        per_conversation = blocked.groupby(steps["conversation_id"]).sum()
        rows += [
            _row("blocked_s", "all", float(blocked.sum()), n=len(steps)),
            _row("blocked_s_per_conversation", "all", float(per_conversation.mean()), n=len(per_conversation)),
            _row("blocked_steps", "all", int((blocked > 0).sum()), n=len(steps)),
        ]
    if events.empty and steps.empty:
        return rows

    def count(type_: str, operation: str) -> pd.DataFrame:
        if events.empty:
            return events
        return events[(events["type"] == type_) & (events["operation_type"] == operation)]

    activations = count("data-om-activation", "observation")
    rows += [
        _row("sync_observations", "all", len(count("data-om-observation-end", "observation"))),
        _row("sync_reflections", "all", len(count("data-om-observation-end", "reflection"))),
        _row("buffered_observations", "all", len(count("data-om-buffering-end", "observation"))),
        _row("buffered_reflections", "all", len(count("data-om-buffering-end", "reflection"))),
        _row("activations", "all", len(activations)),
        _row("reflection_activations", "all", len(count("data-om-activation", "reflection"))),
    ]
    if len(activations):
        for trigger, times in activations["triggered_by"].fillna("unknown").value_counts().sort_index().items():
            rows.append(_row("activations", f"trigger:{trigger}", int(times)))
    return rows


# --------------------------------------------------------------------------- helpers


def _row(
    name: str,
    group: str,
    value: float,
    lo: float | None = None,
    hi: float | None = None,
    n: int | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "group_key": group,
        "value": float(value),
        "lo": None if lo is None or _nan(lo) else float(lo),
        "hi": None if hi is None or _nan(hi) else float(hi),
        "n": None if n is None else int(n),
        "n_missing": None,
    }


def _is_missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _numeric(series: pd.Series | None) -> pd.Series:
    if series is None:
        return pd.Series(dtype="float64")
    return pd.to_numeric(series, errors="coerce").astype("float64")


def _column_name(path: str) -> str:
    import re

    leaf = path.split(".")[-1]
    return re.sub(r"(?<!^)([A-Z])", r"_\1", leaf).lower()


def _cell_value(value: Any) -> Any:
    return value if isinstance(value, (int, float, str, bool)) or value is None else str(value)


def metrics_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """``metrics`` frame rows as dicts for :meth:`RunWriter.add_metrics` (NaN values become NULL)."""
    records = []
    for record in frame.to_dict("records"):
        records.append({key: (None if _is_missing(value) else value) for key, value in record.items()})
    return records


__all__ = [
    "COUNT_METRICS",
    "METRIC_COLUMNS",
    "RunFrames",
    "compute_metrics",
    "load_run_frames",
    "metric_interval",
    "metric_value",
    "metrics_records",
    "sweep_table",
]

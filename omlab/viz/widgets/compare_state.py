"""The comparison view's state: two runs (two configs, two tiers) and their differences.

Plain Python (no ipywidgets), tested without a kernel; :mod:`omlab.viz.widgets.compare` draws it.
A side is a run id; its frames come from the results getters and are read once, and its label is
the run's config name (or suite name, when both runs share a config name). The metrics diff
lines up the harness's ``metrics`` rows of both runs by ``(name, group_key)``; the timeline
summary (blocked seconds, activations, context...) is recomputed from each run's steps and events
with :func:`omlab.viz.simulate.simulation_summary`, for one conversation or the whole run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omlab.bench.results import ResultsCatalog, answers_df, calls_df, events_df, metrics_df, runs_df, steps_df
from omlab.viz.simulate import simulation_summary

DIFF_COLUMNS: tuple[str, ...] = ("name", "group_key", "left", "right", "delta", "delta_lo", "delta_hi", "relative")
"""Columns of the diff tables: ``delta = right - left`` with its 95% interval ``delta_lo``/``delta_hi``
(when both sides have one: Newcombe's method from the two intervals, so a difference is read with
its uncertainty), and ``relative = delta / |left|`` (a fraction; NaN against a zero baseline)."""


@dataclass(frozen=True, slots=True)
class RunSide:
    """One side of the comparison: a run's label and frames."""

    run_id: str
    label: str
    steps: pd.DataFrame
    events: pd.DataFrame
    calls: pd.DataFrame
    answers: pd.DataFrame
    metrics: pd.DataFrame


class CompareState:
    """Two runs side by side.

    Args:
        catalog: A :class:`~omlab.bench.results.ResultsCatalog` or results directory.
        left: Run id of the left side (the baseline of the deltas).
        right: Run id of the right side.

    Raises:
        ValueError: A run id that is not in the catalog.
    """

    def __init__(self, catalog: ResultsCatalog | str | Path, left: str, right: str) -> None:
        self.catalog = catalog if isinstance(catalog, ResultsCatalog) else ResultsCatalog(catalog)
        runs = runs_df(self.catalog)
        known = set(runs["run_id"].astype(str))
        for side, run_id in (("left", left), ("right", right)):
            if run_id not in known:
                raise ValueError(
                    f"CompareState: {side} run {run_id!r} is not in {self.catalog.results_dir}; runs: {sorted(known)}"
                )
        left_label, right_label = side_labels(runs, left, right)
        self.left = self._side(left, left_label)
        self.right = self._side(right, right_label)
        self.conversation_id: str | None = None

    def sides(self) -> tuple[RunSide, RunSide]:
        """``(left, right)``."""
        return self.left, self.right

    def conversations(self) -> list[str]:
        """Conversation ids both runs have steps for (the timelines can only pair those)."""
        left = set(self.left.steps["conversation_id"].dropna().astype(str))
        right = set(self.right.steps["conversation_id"].dropna().astype(str))
        return sorted(left & right)

    def select_conversation(self, conversation_id: str | None) -> None:
        """Restrict the timelines and the timeline summary to one conversation (None: all).

        Raises:
            ValueError: A conversation that is not in both runs.
        """
        if conversation_id is not None and conversation_id not in self.conversations():
            raise ValueError(
                f"CompareState: conversation {conversation_id!r} is not in both runs; "
                f"shared: {self.conversations()[:10]}"
            )
        self.conversation_id = conversation_id

    def timeline(self, side: RunSide) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``(steps, events)`` of ``side`` for the selected conversation (the first shared one when
        none is selected)."""
        conversation = self.conversation_id or (self.conversations() or [None])[0]
        if conversation is None:
            return side.steps.iloc[0:0], side.events.iloc[0:0]
        return (
            side.steps[side.steps["conversation_id"].astype(str) == conversation],
            side.events[side.events["conversation_id"].astype(str) == conversation],
        )

    def metrics_diff(self, *, groups: str | None = "all") -> pd.DataFrame:
        """The two runs' ``metrics`` rows lined up (:data:`DIFF_COLUMNS`), sorted by name.

        Args:
            groups: Keep only this ``group_key`` (``"all"``, the default); None keeps every group.
        """
        return line_up_metrics(self.left.metrics, self.right.metrics, groups=groups)

    def timeline_diff(self) -> pd.DataFrame:
        """The timeline summary (blocked seconds, activations, context...) of both sides, over the
        selected conversation or, when none is selected, the whole run (:data:`DIFF_COLUMNS`)."""

        def summary(side: RunSide) -> dict[str, float]:
            steps, events = side.steps, side.events
            if self.conversation_id is not None:
                steps, events = self.timeline(side)
            return simulation_summary(steps, events, side.calls if self.conversation_id is None else None)

        left, right = summary(self.left), summary(self.right)
        names = list(left)
        frame = pd.DataFrame(
            {
                "name": names,
                "group_key": self.conversation_id or "all",
                "left": [left[n] for n in names],
                "right": [right.get(n, np.nan) for n in names],
            }
        )
        return _with_deltas(frame)

    def _side(self, run_id: str, label: str) -> RunSide:
        catalog = self.catalog
        return RunSide(
            run_id=run_id,
            label=label,
            steps=steps_df(catalog, run_id),
            events=events_df(catalog, run_id),
            calls=calls_df(catalog, run_id),
            answers=answers_df(catalog, run_id),
            metrics=metrics_df(catalog, run_id),
        )


def side_labels(runs: pd.DataFrame, left: str, right: str) -> tuple[str, str]:
    """Names that tell the two runs apart: their config names, else their suite names, else
    ``suite [config] run_id``."""
    header = runs.assign(run_id=runs["run_id"].astype(str)).drop_duplicates("run_id").set_index("run_id")
    for column in ("config_name", "suite"):
        names = [str(header.at[run, column]) if pd.notna(header.at[run, column]) else "" for run in (left, right)]
        if all(names) and names[0] != names[1]:
            return names[0], names[1]
    return tuple(f"{header.at[run, 'suite']} [{header.at[run, 'config_name']}] {run}" for run in (left, right))


def line_up_metrics(left: pd.DataFrame, right: pd.DataFrame, *, groups: str | None = "all") -> pd.DataFrame:
    """Two runs' ``metrics`` rows side by side (:data:`DIFF_COLUMNS`), sorted by name and group."""
    merged = _metric_values(left, groups).merge(
        _metric_values(right, groups), on=["name", "group_key"], how="outer", suffixes=("_left", "_right")
    )
    frame = pd.DataFrame(
        {
            "name": merged["name"],
            "group_key": merged["group_key"],
            "left": merged["value_left"],
            "right": merged["value_right"],
        }
    )
    bounds = {f"{bound}_{side}": merged[f"{bound}_{side}"] for bound in ("lo", "hi") for side in ("left", "right")}
    return _with_deltas(frame, **bounds).sort_values(["name", "group_key"], ignore_index=True)


def _metric_values(metrics: pd.DataFrame, groups: str | None) -> pd.DataFrame:
    frame = metrics.reindex(columns=["name", "group_key", "value", "lo", "hi"])
    if groups is not None:
        frame = frame[frame["group_key"].astype(str) == groups]
    return frame.astype({"name": str, "group_key": str}).drop_duplicates(["name", "group_key"], keep="last")


def _numbers(values: object) -> pd.Series:
    return pd.to_numeric(values, errors="coerce").astype("float64")


def _with_deltas(frame: pd.DataFrame, **bounds: pd.Series) -> pd.DataFrame:
    left, right = _numbers(frame["left"]), _numbers(frame["right"])
    delta = right - left
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = np.where(left.abs() > 0, delta / left.abs(), np.nan)
    delta_lo = delta_hi = pd.Series(np.nan, index=frame.index)
    if bounds:
        # Newcombe's hybrid score interval (MOVER) for right - left from each side's own interval
        lo_l, hi_l, lo_r, hi_r = (_numbers(bounds[key]) for key in ("lo_left", "hi_left", "lo_right", "hi_right"))
        delta_lo = delta - np.sqrt((right - lo_r) ** 2 + (hi_l - left) ** 2)
        delta_hi = delta + np.sqrt((hi_r - right) ** 2 + (left - lo_l) ** 2)
    return frame.assign(left=left, right=right, delta=delta, delta_lo=delta_lo, delta_hi=delta_hi, relative=relative)[
        list(DIFF_COLUMNS)
    ]


__all__ = ["DIFF_COLUMNS", "CompareState", "RunSide", "line_up_metrics", "side_labels"]

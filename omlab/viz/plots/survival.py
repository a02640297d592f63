"""Fact survival: the share of evidence still in memory against its age, one curve per config.

The evidence items are the distinct evidence turns of a run's ``lineage`` table (a turn cited by
several questions counts once per run) that an observation cycle covered. A turn still
unobserved when the questions were asked never entered the observation log and has no age there:
it is left out (the count is in :attr:`SurvivalTable.unobserved`).

**Age in reflection generations** is the number of generations since the cycle that observed the
turn (``generation − observed_generation``). At age 0 a turn survives when its observation wrote a
line from it (``lost_at_observation`` turns do not); at age k ≥ 1 when no reflection up to its
k-th dropped its lines (``dropped_generation − observed_generation > k``). Only turns that reached
age k — the run went on for k generations after observing them (``final_generation −
observed_generation ≥ k``) — count at age k: ``n`` is that count and the share is over it, so a
turn observed late never counts as a survival or a loss at an age it did not reach.

**Age in tokens** is the message tokens ingested since the turn was (``ingested_at_tokens``): a
turn is at risk up to ``final_tokens − ingested_at_tokens``, a dropped one is lost from
``dropped_at_tokens − ingested_at_tokens``, and a turn lost at observation is lost from age 0
(its observation never held it). The ages are a grid shared by all configs (``ages``, or about
:data:`TOKEN_POINTS` round steps up to the oldest turn). Turns whose token columns are missing
are left out of the token curve.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from omlab.viz.plots import _format as fmt
from omlab.viz.plots._canvas import axes_or_new, draw_no_data, legend_below
from omlab.viz.plots._configs import CONFIG, labelled_by_config
from omlab.viz.plots._frames import numeric, require_columns
from omlab.viz.style import FIGSIZE_WIDE, GREY, NAME_PALETTE, categorical_colors, plain_text_plot, style_axes

_LINESTYLES = ("-", "--", ":", "-.")
"""With more settings than colours, the next ones are told apart by their line style."""
PLOT = "plot_fact_survival"
LINEAGE_COLUMNS: tuple[str, ...] = (
    "conversation_id",
    "evidence_id",
    "fate",
    "observed_generation",
    "dropped_generation",
    "final_generation",
)
"""``lineage_df`` columns the survival curve by generations needs (``run_id`` keeps runs apart)."""
TOKEN_COLUMNS: tuple[str, ...] = ("ingested_at_tokens", "dropped_at_tokens", "final_tokens")
"""The further columns the curve by token age needs."""
TOKEN_POINTS = 20
SPARSE_BELOW = 5
"""Points of the plot that fewer turns reached are drawn open."""
AgeUnit = Literal["generations", "tokens"]
UNOBSERVED = "unobserved"
LOST_AT_OBSERVATION = "lost_at_observation"
DROPPED = "dropped"


@dataclass(frozen=True)
class SurvivalTable:
    """The numbers behind the survival plot.

    Attributes:
        curves: One row per (config, age) that at least one turn reached: ``config``, ``age``,
            ``n`` (turns that reached this age), ``surviving`` (of them, still in memory) and
            ``share`` (``surviving / n``); configs in the order given, ages ascending.
        unit: ``generations`` or ``tokens``.
        observed: Per config, the observed evidence turns the curve is made of.
        unobserved: Per config, the evidence turns left out because no cycle observed them.
        ageless: Per config, observed turns left out because their age columns are missing
            (token ages of a run recorded without them).
    """

    curves: pd.DataFrame
    unit: AgeUnit
    observed: dict[str, int]
    unobserved: dict[str, int]
    ageless: dict[str, int]


def fact_survival(
    lineage: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    by: str | None = None,
    age: AgeUnit = "generations",
    ages: Sequence[float] | None = None,
) -> SurvivalTable:
    """The share of observed evidence turns still in memory at each age (module docstring).

    Args:
        lineage: A ``lineage_df`` frame (several runs allowed), or ``{config label: frame}``.
        by: With one frame, the column naming each row's config (e.g. ``config_name`` after
            merging ``runs_df``); None makes it one curve.
        age: ``generations`` (reflections since observation) or ``tokens`` (message tokens
            since ingestion).
        ages: Token ages to evaluate (``age="tokens"`` only); default: a round grid.

    Raises:
        ValueError: Missing columns, an unknown ``age``, ``ages`` with generations, or a bad ``by``.
    """
    if age not in ("generations", "tokens"):
        raise ValueError(f"{PLOT}: age must be 'generations' or 'tokens', got {age!r}")
    if ages is not None and age != "tokens":
        raise ValueError(f"{PLOT}: ages= sets the token ages; generation ages are 0, 1, 2, ...")
    frame = labelled_by_config(lineage, by=by, frame_name="lineage", plot=PLOT)
    columns = ["config", "age", "n", "surviving", "share"]
    if frame.empty:
        return SurvivalTable(pd.DataFrame(columns=columns), age, {}, {}, {})
    require_columns(
        frame, LINEAGE_COLUMNS + (TOKEN_COLUMNS if age == "tokens" else ()), frame_name="lineage", plot=PLOT
    )
    keys = [c for c in ("run_id", "conversation_id", "evidence_id") if c in frame.columns]
    items = frame.drop_duplicates([CONFIG, *keys])
    configs = list(dict.fromkeys(items[CONFIG]))
    covered = items["fate"].astype(str) != UNOBSERVED
    unobserved = {c: int((~covered & (items[CONFIG] == c)).sum()) for c in configs}
    items = items[covered]
    reach, lifetime = _generation_ages(items) if age == "generations" else _token_ages(items)
    usable = ~np.isnan(reach)
    ageless = {c: int((~usable & (items[CONFIG] == c).to_numpy()).sum()) for c in configs}
    items, reach, lifetime = items[usable], reach[usable], lifetime[usable]
    observed = {c: int((items[CONFIG] == c).sum()) for c in configs}
    if not len(items):
        return SurvivalTable(pd.DataFrame(columns=columns), age, observed, unobserved, ageless)
    if age == "generations":
        grid = np.arange(0, int(reach.max()) + 1, dtype="float64")
    else:
        grid = np.asarray(sorted(set(ages)), dtype="float64") if ages is not None else _token_grid(reach.max())
    rows = []
    labels = items[CONFIG].to_numpy()
    for config in configs:
        mine = labels == config
        for point in grid:
            at_risk = mine & (reach >= point)
            n = int(at_risk.sum())
            if n == 0:
                continue
            # a lifetime is the age at which the turn was lost; NaN means it never was
            alive = int((at_risk & ~(lifetime <= point)).sum())
            rows.append({"config": config, "age": point, "n": n, "surviving": alive, "share": alive / n})
    curves = pd.DataFrame(rows, columns=columns)
    if age == "generations":
        curves["age"] = curves["age"].astype("int64")
    return SurvivalTable(curves, age, observed, unobserved, ageless)


def _generation_ages(items: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(age reached, age lost or NaN) in generations since observation."""
    observed = numeric(items["observed_generation"]).to_numpy()
    reach = numeric(items["final_generation"]).to_numpy() - observed
    dropped = numeric(items["dropped_generation"]).to_numpy() - observed
    return reach, _lifetimes(items, dropped)


def _token_ages(items: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(age reached, age lost or NaN) in message tokens since ingestion."""
    ingested = numeric(items["ingested_at_tokens"]).to_numpy()
    reach = numeric(items["final_tokens"]).to_numpy() - ingested
    dropped = numeric(items["dropped_at_tokens"]).to_numpy() - ingested
    return reach, _lifetimes(items, dropped)


def _lifetimes(items: pd.DataFrame, dropped_age: np.ndarray) -> np.ndarray:
    fate = items["fate"].astype(str).to_numpy()
    lifetime = np.full(len(items), np.nan)
    lifetime[fate == LOST_AT_OBSERVATION] = 0.0
    is_dropped = fate == DROPPED
    lifetime[is_dropped] = dropped_age[is_dropped]
    return lifetime


def _token_grid(oldest: float) -> np.ndarray:
    """0, step, 2·step, ... up to ``oldest``, with a 1-2-5 step giving about TOKEN_POINTS points."""
    if oldest <= 0:
        return np.array([0.0])
    raw = oldest / TOKEN_POINTS
    power = 10 ** math.floor(math.log10(raw)) if raw >= 1 else 1
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return np.arange(0, math.floor(oldest / step) * step + step / 2, step, dtype="float64")


@plain_text_plot
def plot_fact_survival(
    lineage: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    by: str | None = None,
    age: AgeUnit = "generations",
    ages: Sequence[float] | None = None,
    min_n: int = SPARSE_BELOW,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """One line per config: the share of observed evidence still in memory against its age.

    Ages that fewer than ``min_n`` turns reached (the tail of a curve) get open markers: their
    share rests on a handful of turns.

    Args:
        lineage: A ``lineage_df`` frame, or ``{config label: frame}`` (see :func:`fact_survival`).
        by: With one frame, the column naming each row's config.
        age: ``generations`` or ``tokens``.
        ages: Token ages to evaluate (``age="tokens"``).
        min_n: Points with fewer turns than this are drawn open.
        title: Replaces the default title.
        ax: Draw here; a new figure is made when None.

    Returns:
        The Axes; a "no data" note when no evidence turn was observed. The numbers, with ``n``
        at each point, are :func:`fact_survival`'s.
    """
    ax = axes_or_new(ax, FIGSIZE_WIDE)
    table = fact_survival(lineage, by=by, age=age, ages=ages)
    unit = "reflection generations since observation" if age == "generations" else "message tokens since ingestion"
    heading = title or "Fact survival: evidence still in memory by age"
    if table.curves.empty:
        if sum(table.ageless.values()):
            needed = "ingested_at_tokens, final_tokens" if age == "tokens" else "observed_generation, final_generation"
            reason = f"no observed evidence turn has its {needed}"
        elif sum(table.unobserved.values()):
            reason = f"none of the {sum(table.unobserved.values())} evidence turns was observed"
        else:
            reason = "no evidence turn in the lineage"
        return draw_no_data(ax, title=heading, reason=reason)
    curves = table.curves
    if age == "generations" and float(curves["age"].max()) == 0:
        kept = curves.groupby("config")["share"].first()
        shares = ", ".join(sorted({fmt.percent(float(v)) for v in kept}))
        return draw_no_data(
            ax,
            title=heading,
            reason=f"no reflection ran{' in any setting' if len(kept) > 1 else ''}, so no fact has aged "
            f"({shares} of observed facts in memory)",
        )
    groups = _same_curves(curves)
    colors = categorical_colors(list(groups))
    for index, (first, members) in enumerate(groups.items()):
        points = curves[curves["config"] == first]
        sparse = (points["n"] < min_n).to_numpy()
        observed = table.observed[first]
        name = first if len(members) == 1 else f"{len(members)} settings, identical: {', '.join(members)}"
        ax.plot(
            points["age"],
            points["share"],
            color=colors[first],
            linestyle=_LINESTYLES[index // len(NAME_PALETTE) % len(_LINESTYLES)],
            marker="o",
            markersize=4,
            markevery=[int(i) for i in np.flatnonzero(~sparse)],
            linewidth=1.8,
            label=f"{name} ({observed} observed evidence turns{' each' if len(members) > 1 else ''})",
        )
        if sparse.any():
            ax.scatter(
                points["age"][sparse], points["share"][sparse], s=18, facecolors="white", edgecolors=colors[first]
            )
    handles, _labels = ax.get_legend_handles_labels()
    if (curves["n"] < min_n).any():
        handles.append(
            Line2D(
                [], [], linestyle="none", marker="o", markerfacecolor="white", color=GREY, label=f"n < {min_n} turns"
            )
        )
    ax.set_ylim(0, 1.05)
    ax.yaxis.set_major_formatter(fmt.PERCENT_AXIS)
    if age == "generations":
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        ax.xaxis.set_major_formatter(fmt.TOKENS_AXIS)
    legend_below(ax, handles=handles, ncol=min(len(handles), 2))
    style_axes(ax, title=heading, xlabel=f"age ({unit})", ylabel="share still in memory")
    return ax


def _same_curves(curves: pd.DataFrame) -> dict[str, list[str]]:
    """``{first config: configs whose curve (ages, shares, n) is the same}``: one line for settings
    that kept exactly the same facts, instead of lines drawn on top of each other."""
    groups: dict[tuple, list[str]] = {}
    for config, points in curves.groupby("config", sort=False):
        key = tuple(zip(points["age"], points["share"].round(12), points["n"], strict=True))
        groups.setdefault(key, []).append(str(config))
    return {members[0]: members for members in groups.values()}


__all__ = ["LINEAGE_COLUMNS", "TOKEN_COLUMNS", "SurvivalTable", "fact_survival", "plot_fact_survival"]

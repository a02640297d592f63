"""Why questions were missed, per question type: the loss causes of ``lineage_questions``.

Each question has one ``loss_cause`` (``docs/results-schema.md``): ``lost_at_observation``,
``lost_at_reflection``, ``present_answered_wrong``, ``present_unjudged``, ``answered_right`` or
``no_evidence``. The table counts them per question type (and per config when several runs are
compared); the plot stacks each type's shares in one horizontal bar, so a sweep shows which
setting loses facts where.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import to_rgb
from matplotlib.patches import Patch

from omlab.bench.datasets.locomo import CATEGORY_NAMES
from omlab.bench.datasets.schema import LONGMEMEVAL_TYPES
from omlab.bench.lineage import LOSS_CAUSES
from omlab.bench.scoring.aggregate import LOCOMO_CATEGORY_ORDER
from omlab.viz.plots import _format as fmt
from omlab.viz.plots._canvas import axes_or_new, draw_no_data, legend_below
from omlab.viz.plots._configs import CONFIG, labelled_by_config
from omlab.viz.plots._frames import require_columns
from omlab.viz.questions import CAUSE_LABELS
from omlab.viz.style import (
    FIGSIZE_BARS,
    FONT,
    GREEN,
    GREY,
    LIGHT_GREY,
    ORANGE,
    PURPLE,
    VERMILLION,
    plain_text_plot,
    style_axes,
)

PLOT = "plot_loss_causes"
QUESTION_COLUMNS: tuple[str, ...] = ("question_id", "question_type", "loss_cause")
"""``lineage_questions_df`` columns the loss-cause table needs."""
ALL_TYPES = "all types"
ALWAYS_SHOWN: tuple[str, ...] = (
    "lost_at_observation",
    "lost_at_reflection",
    "present_answered_wrong",
    "answered_right",
)
"""Causes the table lists even at zero; the others only when some question has them."""
CAUSE_COLORS: dict[str, str] = {
    "lost_at_observation": VERMILLION,  # the observation colour of every omlab plot
    "lost_at_reflection": PURPLE,  # the reflection colour
    "present_answered_wrong": ORANGE,
    "present_unjudged": LIGHT_GREY,
    "answered_right": GREEN,
    "no_evidence": GREY,
}
_TYPE_ORDER: tuple[str, ...] = (*LONGMEMEVAL_TYPES, *(CATEGORY_NAMES[c] for c in LOCOMO_CATEGORY_ORDER))
_MIN_LABELLED_SHARE = 0.08
MAX_BARS = 16
"""Above this many bars (types × settings) several settings are drawn as one grid of setting ×
cause instead of a bar per type and setting."""


def loss_cause_table(
    questions: pd.DataFrame | Mapping[str, pd.DataFrame], *, by: str | None = None, overall: bool = True
) -> pd.DataFrame:
    """Counts and shares of each loss cause per question type (and config).

    Args:
        questions: A ``lineage_questions_df`` frame (several runs allowed), or ``{config label:
            frame}``.
        by: With one frame, the column naming each row's config; None makes it one config.
        overall: Add an ``all types`` group per config (every question of that config).

    Returns:
        One row per (question type, config, cause): ``config``, ``question_type``,
        ``loss_cause``, ``n``, ``n_type`` (questions of that type and config) and ``share``
        (``n / n_type``). Types in benchmark order (LongMemEval, LoCoMo, then others by name,
        ``all types`` last), within a type the configs in the order given, causes in
        :data:`~omlab.bench.lineage.LOSS_CAUSES` order: those of :data:`ALWAYS_SHOWN` always, the
        others when some question has them.

    Raises:
        ValueError: Missing columns or a bad ``by``.
    """
    columns = ["config", "question_type", "loss_cause", "n", "n_type", "share"]
    frame = labelled_by_config(questions, by=by, frame_name="lineage_questions", plot=PLOT)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    require_columns(frame, QUESTION_COLUMNS, frame_name="lineage_questions", plot=PLOT)
    keys = [c for c in ("run_id", "question_id") if c in frame.columns]
    frame = frame.drop_duplicates([CONFIG, *keys])
    causes_seen = set(frame["loss_cause"].dropna().astype(str))
    unknown = sorted(causes_seen - set(LOSS_CAUSES))
    if unknown:
        raise ValueError(f"{PLOT}: unknown loss_cause values {unknown}; expected some of {list(LOSS_CAUSES)}")
    causes = [c for c in LOSS_CAUSES if c in ALWAYS_SHOWN or c in causes_seen]
    types = frame["question_type"].astype("string").fillna("unknown").astype(str)
    frame = frame.assign(question_type=types, loss_cause=frame["loss_cause"].astype("string"))
    frame = frame[frame["loss_cause"].notna()]
    groups = [(t, frame[frame["question_type"] == t]) for t in _type_order(frame["question_type"])]
    if overall:
        groups.append((ALL_TYPES, frame))
    rows = []
    configs = list(dict.fromkeys(frame[CONFIG]))
    for question_type, members in groups:
        for config in configs:
            mine = members[members[CONFIG] == config]
            if mine.empty:
                continue
            counts = mine["loss_cause"].value_counts()
            for cause in causes:
                n = int(counts.get(cause, 0))
                rows.append(
                    {
                        "config": config,
                        "question_type": question_type,
                        "loss_cause": cause,
                        "n": n,
                        "n_type": len(mine),
                        "share": n / len(mine),
                    }
                )
    return pd.DataFrame(rows, columns=columns)


def _type_order(types: pd.Series) -> list[str]:
    present = set(types)
    known = [t for t in _TYPE_ORDER if t in present]
    return known + sorted(present - set(known))


@plain_text_plot
def plot_loss_causes(
    questions: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    by: str | None = None,
    overall: bool = True,
    title: str | None = None,
    ax: Axes | None = None,
) -> Axes:
    """One stacked horizontal bar per question type (per config within a type): the shares of
    each loss cause, with the count written in segments wide enough to hold it.

    Args:
        questions: A ``lineage_questions_df`` frame, or ``{config label: frame}``.
        by: With one frame, the column naming each row's config.
        overall: Add an ``all types`` bar (per config).
        title: Replaces the default title.
        ax: Draw here; a new figure is made when None.

    Returns:
        The Axes; a "no data" note when there are no questions. The numbers are
        :func:`loss_cause_table`'s.
    """
    table = loss_cause_table(questions, by=by, overall=overall)
    bars = list(dict.fromkeys(zip(table["question_type"], table["config"], strict=True)))
    configs = list(dict.fromkeys(table["config"]))
    types = list(dict.fromkeys(table["question_type"]))
    if len(configs) > 1 and len(bars) > MAX_BARS:
        ax = axes_or_new(ax, (FIGSIZE_BARS[0], max(FIGSIZE_BARS[1], 2.2 + 0.4 * len(configs))))
        return _settings_grid(ax, table, configs, title or "Why questions were missed, per setting")
    height = max(FIGSIZE_BARS[1], 1.2 + 0.32 * len(bars) + 0.15 * len(types))
    ax = axes_or_new(ax, (FIGSIZE_BARS[0], height))
    heading = title or "Why questions were missed, per question type"
    if table.empty:
        return draw_no_data(ax, title=heading, reason="no questions in the lineage")
    # bars top to bottom in table order, a gap between question types
    positions, labels, y, previous = {}, [], 0.0, None
    for question_type, config in bars:
        if previous is not None and question_type != previous:
            y += 0.5
        positions[(question_type, config)] = y
        labels.append(f"{question_type} · {config}" if len(configs) > 1 else question_type)
        previous, y = question_type, y + 1
    causes = list(dict.fromkeys(table["loss_cause"]))
    for (question_type, config), at in positions.items():
        rows = table[(table["question_type"] == question_type) & (table["config"] == config)].set_index("loss_cause")
        left = 0.0
        for cause in causes:
            share, n = float(rows.at[cause, "share"]), int(rows.at[cause, "n"])
            if n:
                ax.barh(at, share, left=left, height=0.8, color=CAUSE_COLORS[cause], edgecolor="white", linewidth=0.6)
                if share >= _MIN_LABELLED_SHARE:
                    ax.text(left + share / 2, at, str(n), ha="center", va="center", fontsize=FONT.annotation)
            left += share
        ax.text(1.01, at, f"n={int(rows['n_type'].iloc[0])}", va="center", fontsize=FONT.annotation, color=GREY)
    ax.set_yticks(list(positions.values()), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(fmt.PERCENT_AXIS)
    handles = [Patch(color=CAUSE_COLORS[c], label=CAUSE_LABELS.get(c, c)) for c in causes]
    legend_below(ax, handles=handles, ncol=min(len(handles), 3))
    style_axes(ax, title=heading, xlabel="share of the type's questions", ylabel="", grid_axis="x")
    return ax


def _settings_grid(ax: Axes, table: pd.DataFrame, configs: list[str], heading: str) -> Axes:
    """Many settings: one row per setting, one column per cause, over all question types (each
    cell's count and share); a stack of a bar per type and setting would be unreadable."""
    overall = table[table["question_type"] == ALL_TYPES]
    if overall.empty:  # overall=False: add the types up per setting
        overall = table.groupby(["config", "loss_cause"], as_index=False, sort=False)["n"].sum()
        overall["share"] = overall["n"] / overall.groupby("config")["n"].transform("sum").where(lambda n: n > 0, 1)
    causes = list(dict.fromkeys(overall["loss_cause"]))
    counts = overall.pivot(index="config", columns="loss_cause", values="n").reindex(index=configs, columns=causes)
    shares = overall.pivot(index="config", columns="loss_cause", values="share").reindex(index=configs, columns=causes)
    # each cause keeps its colour (as in the bars), stronger the larger its share
    cells = np.array(
        [
            [(*to_rgb(CAUSE_COLORS[cause]), 0.08 + 0.92 * float(shares.at[c, cause])) for cause in causes]
            for c in configs
        ]
    )
    ax.imshow(cells, aspect="auto")
    for row, config in enumerate(configs):
        for column, cause in enumerate(causes):
            share = float(shares.at[config, cause])
            ax.text(
                column,
                row,
                f"{int(counts.at[config, cause])} · {fmt.percent(share)}",
                ha="center",
                va="center",
                fontsize=FONT.annotation,
                color="white" if share > 0.55 else "black",
            )
    ax.set_xticks(range(len(causes)), [CAUSE_LABELS.get(c, c).replace(" ", "\n", 1) for c in causes])
    ax.set_yticks(range(len(configs)), configs)
    ax.tick_params(length=0)
    same = shares.nunique(dropna=False).le(1).all() and counts.nunique(dropna=False).le(1).all()
    notes = ["all question types; each cell: questions · share of the setting's questions"]
    if same:
        notes.append("the same in every setting")
    style_axes(ax, title="\n".join([heading, *notes]), xlabel="", ylabel="", grid_axis="")
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    return ax


__all__ = ["CAUSE_COLORS", "MAX_BARS", "QUESTION_COLUMNS", "loss_cause_table", "plot_loss_causes"]

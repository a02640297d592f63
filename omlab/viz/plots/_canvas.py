"""Where a plot draws: the caller's ``Axes``, or a fresh ``Figure`` that no pyplot state knows of."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from omlab.viz.style import FONT, GREY, style_axes


def axes_or_new(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    """``ax`` itself, or the single ``Axes`` of a new constrained-layout ``Figure``.

    ``matplotlib.figure.Figure`` is used instead of ``pyplot.figure`` so that plotting in a loop
    (reports, sweeps) never accumulates open figures or touches the current-figure state.
    """
    if ax is not None:
        return ax
    return Figure(figsize=figsize, layout="constrained").add_subplot()


def legend_below(ax: Axes, *, ncol: int = 2, **options: object) -> None:
    """The legend in a row under the x axis, where it never hides data."""
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.13),
        ncol=ncol,
        fontsize=FONT.legend,
        frameon=False,
        **options,
    )


def draw_no_data(ax: Axes, *, title: str, reason: str) -> Axes:
    """Mark ``ax`` as empty: the plot's title plus a centred grey note saying why."""
    style_axes(ax, title=title, xlabel="", ylabel="", grid_axis="")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.text(
        0.5,
        0.5,
        f"no data: {reason}",
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize=FONT.label,
        color=GREY,
    )
    return ax

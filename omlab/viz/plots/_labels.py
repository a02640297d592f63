"""Point labels that never overlap: each label tries a few spots around its point, in order, and
is left out when none is free.

Placement works in display space, so it runs after everything else on the figure is drawn: the
layout is settled first (constrained layout moves the axes at draw time), and the labels are kept
out of the layout so placing them cannot move the axes again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.axes import Axes
from matplotlib.transforms import Bbox

from omlab.viz.style import FONT, LIGHT_GREY

# (dx, dy) in points, with the text alignment that keeps the label clear of its own point.
_SPOTS: tuple[tuple[float, float, str, str], ...] = (
    (6, 4, "left", "bottom"),
    (6, -4, "left", "top"),
    (-6, 4, "right", "bottom"),
    (-6, -4, "right", "top"),
    (6, 16, "left", "bottom"),
    (6, -16, "left", "top"),
    (-6, 16, "right", "bottom"),
    (-6, -16, "right", "top"),
    (6, 28, "left", "bottom"),
    (6, -28, "left", "top"),
)
_MARKER_HALF_WIDTH_PX = 5.0
# a light backing keeps a label legible where a grid line or another label's leader passes behind it
_BACKING = {"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}
_LEADER = {"arrowstyle": "-", "color": LIGHT_GREY, "linewidth": 0.6, "shrinkA": 0, "shrinkB": 4}


@dataclass(frozen=True, slots=True)
class PointLabel:
    """One label to place: the point (data coordinates), the text and its colour."""

    x: float
    y: float
    text: str
    color: str


def place_labels(ax: Axes, labels: Sequence[PointLabel]) -> int:
    """Annotate ``ax`` with ``labels``, most important first, where each fits without touching an
    earlier label, a labelled point or the axes edge. Returns how many were left out."""
    if not labels:
        return 0
    figure = ax.figure
    while figure.figure is not figure:  # an Axes in a SubFigure: settle the whole figure
        figure = figure.figure
    figure.draw_without_rendering()  # settle the layout: display coordinates are final from here
    frame = ax.get_window_extent()
    points = [ax.transData.transform((label.x, label.y)) for label in labels]
    taken: list[Bbox] = [
        Bbox.from_bounds(
            px - _MARKER_HALF_WIDTH_PX, py - _MARKER_HALF_WIDTH_PX, 2 * _MARKER_HALF_WIDTH_PX, 2 * _MARKER_HALF_WIDTH_PX
        )
        for px, py in points
    ]
    left_out = 0
    for label in labels:
        for dx, dy, ha, va in _SPOTS:
            options = {
                "xytext": (dx, dy),
                "textcoords": "offset points",
                "ha": ha,
                "va": va,
                "fontsize": FONT.annotation,
                "color": label.color,
                "in_layout": False,
                "bbox": _BACKING,
            }
            text = ax.annotate(label.text, (label.x, label.y), **options)
            box = text.get_window_extent()
            inside = frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
            if inside and not any(box.overlaps(other) for other in taken):
                taken.append(box)
                if abs(dy) > 10:  # a label away from its point gets a thin leader line back to it
                    text.remove()
                    ax.annotate(label.text, (label.x, label.y), arrowprops=_LEADER, **options)
                break
            text.remove()
        else:
            left_out += 1
    return left_out

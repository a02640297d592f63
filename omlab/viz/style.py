"""The one look of every omlab plot: colours, markers, font sizes, figure sizes and axis labels.

Colours come from the Okabe-Ito palette, which stays distinguishable for colour-blind readers and
in greyscale print. Each *meaning* has one colour everywhere (an observation event is vermillion in
the timeline and in the compression bars; the observer role is blue in every cost chart), so a
reader who learnt one plot can read the next.

Nothing here touches matplotlib's global ``rcParams``: :func:`style_axes` sets sizes on the
artists of one ``Axes`` only.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypeVar

import matplotlib
from matplotlib.axes import Axes
from matplotlib.text import Text

BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"
GREY = "#7F7F7F"
LIGHT_GREY = "#D9D9D9"

PALETTE: tuple[str, ...] = (BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY_BLUE, "#8C564B", GREY, YELLOW, BLACK)
"""The Okabe-Ito colours plus brown and grey: what every fixed colour below is drawn from."""


class FontSizes(NamedTuple):
    """Point sizes of the text on a plot."""

    title: float = 12
    label: float = 10
    tick: float = 9
    legend: float = 8.5
    annotation: float = 8


FONT = FontSizes()

FIGSIZE_WIDE = (10.0, 4.8)
"""Timelines and per-cycle bars: long x axes."""
FIGSIZE_BARS = (8.0, 4.8)
"""Bar charts with category labels on the y axis."""
FIGSIZE_SQUARE = (7.0, 5.5)
"""Scatter plots and heatmaps."""
DPI = 120
"""Resolution of saved PNG files."""

SERIES_COLORS: dict[str, str] = {
    "pending": BLUE,
    "observations": ORANGE,
    "buffered": SKY_BLUE,
    "context": GREY,
}
"""Token series of the context timeline: raw (unobserved) messages, the observation log, message
tokens already sealed into buffered chunks, and the actor's whole context."""

EVENT_KINDS: tuple[str, ...] = ("observation", "activation", "reflection", "buffering", "blocking")
"""Engine events the timeline marks, in lane order (top to bottom)."""

EVENT_COLORS: dict[str, str] = {
    "observation": VERMILLION,
    "activation": GREEN,
    "reflection": PURPLE,
    "buffering": SKY_BLUE,
    "blocking": BLACK,
}
EVENT_MARKERS: dict[str, str] = {
    "observation": "v",
    "activation": "^",
    "reflection": "D",
    "buffering": "|",
    "blocking": "X",
}
EVENT_LABELS: dict[str, str] = {
    "observation": "synchronous observation",
    "activation": "activation of buffered observations",
    "reflection": "reflection",
    "buffering": "background buffering finished",
    "blocking": "actor blocked",
}

ROLE_ORDER: tuple[str, ...] = ("observer", "reflector", "extractor", "actor", "judge")
"""The model-call roles, in the order the pipeline uses them."""
ROLE_COLORS: dict[str, str] = {
    "observer": BLUE,
    "reflector": PURPLE,
    "extractor": SKY_BLUE,
    "actor": GREEN,
    "judge": VERMILLION,
}

TOKEN_PART_COLORS: dict[str, str] = {"input": BLUE, "output": ORANGE}

COLUMN_LABELS: dict[str, str] = {
    "buffer_tokens": "bufferTokens (ratio of messageTokens, or tokens)",
    "block_after": "blockAfter (× messageTokens, or tokens)",
    "buffer_activation": "bufferActivation",
    "message_tokens": "messageTokens (tokens)",
    "observation_tokens": "observationTokens (tokens)",
    "reflect_threshold": "reflection threshold (tokens)",
    "blocked_s": "blocked time (virtual s)",
    "accuracy": "accuracy",
    "cost_usd": "cost as configured (USD)",
    "cost_usd_paid": "cost paid in the run (USD)",
    "sync_observations": "synchronous observations (count)",
    "peak_context_tokens": "peak context (tokens)",
    "context_tokens": "context (tokens)",
    "compression": "compression ratio (×)",
}
"""Human labels, with units, for the column names sweeps and points frames use."""


def column_label(name: str) -> str:
    """A readable axis label for a frame column: the known label, else the name with spaces."""
    return COLUMN_LABELS.get(name, name.replace("_", " "))


NAME_PALETTE: tuple[str, ...] = (ORANGE, "#8C564B", YELLOW, BLACK, GREY, "#44AA99", "#882255", "#999933")
"""Colours of names that are not roles (models, tiers, configs): none of them is a role colour, so a
model never looks like a role."""


def name_color(name: object) -> str:
    """The preferred colour of a model, tier or config name, the same in every plot and process.

    omlab's built-in models named after a role (``omlab/observer``) take that role's colour; any
    other name takes a :data:`NAME_PALETTE` slot chosen by a stable digest of the name (Python's
    ``hash`` changes between processes, which would recolour a model from one notebook to the next).
    """
    text = str(name)
    prefix, _, role = text.rpartition("/")
    if prefix == "omlab" and role in ROLE_COLORS:
        return ROLE_COLORS[role]
    return NAME_PALETTE[zlib.crc32(text.encode()) % len(NAME_PALETTE)]


def categorical_colors(names: Iterable[object]) -> dict[str, str]:
    """One colour per name, the same for a name in every plot (and both sides of a comparison).

    Roles keep :data:`ROLE_COLORS`; other names take :func:`name_color`, or, when another name of
    the same plot already has that colour, the next free :data:`NAME_PALETTE` slot (so the
    colours within one plot stay distinct). Names are compared as strings, so ``None`` and
    ``"None"`` share a colour.
    """
    names = list(dict.fromkeys(map(str, names)))
    colors: dict[str, str] = {name: ROLE_COLORS[name] for name in names if name in ROLE_COLORS}
    for name in names:
        if name in colors:
            continue
        preferred = name_color(name)
        if preferred not in colors.values():
            colors[name] = preferred
            continue
        start = NAME_PALETTE.index(preferred) if preferred in NAME_PALETTE else 0
        taken = set(colors.values())
        free = [NAME_PALETTE[(start + i) % len(NAME_PALETTE)] for i in range(len(NAME_PALETTE))]
        colors[name] = next((c for c in free if c not in taken), preferred)
    return colors


def style_axes(ax: Axes, *, title: str, xlabel: str, ylabel: str, grid_axis: str = "y") -> Axes:
    """Title, axis labels and the house look (light grid, no top/right spines) on one ``Axes``."""
    ax.set_title(title, fontsize=FONT.title, loc="left")
    ax.set_xlabel(xlabel, fontsize=FONT.label)
    ax.set_ylabel(ylabel, fontsize=FONT.label)
    ax.tick_params(labelsize=FONT.tick)
    if grid_axis:
        ax.grid(True, axis=grid_axis, color=LIGHT_GREY, linewidth=0.6)
        ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


_Plot = TypeVar("_Plot", bound=Callable[..., Any])


def plain_texts(artist: Any) -> Any:
    """Show every text of ``artist``'s figure as written: a ``$`` is a dollar, never the start of
    math (``"total $0.60 (paid: $0.60)"`` would otherwise print "total 0.60(*paid*:0.60)")."""
    if isinstance(artist, list | tuple):  # a plot that returns several Axes
        for one in artist:
            plain_texts(one)
        return artist
    figure = getattr(artist, "figure", None) or artist
    for text in figure.findobj(Text):
        text.set_parse_math(False)
    return artist


def plain_text_plot(plot: _Plot) -> _Plot:
    """Decorate a plot function so that no text it draws is read as math (see :func:`plain_texts`);
    every public ``plot_*`` function carries it (a test checks)."""

    @functools.wraps(plot)
    def draw(*args: Any, **kwargs: Any) -> Any:
        with matplotlib.rc_context({"text.parse_math": False}):  # texts made later, e.g. at draw time
            return plain_texts(plot(*args, **kwargs))

    draw.plain_text = True  # type: ignore[attr-defined]
    return draw  # type: ignore[return-value]

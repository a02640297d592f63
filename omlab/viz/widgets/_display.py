"""How the widget views show things: ipywidgets loaded on first use, figures as PNG, frames as HTML.

Figures go to an ``ipywidgets.Image`` as PNG bytes rather than through an ``Output`` widget, so a
view works (and can be tested) without a kernel, and a redraw replaces one value.
"""

from __future__ import annotations

import html
import io
from types import ModuleType
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

INSTALL_HINT = (
    "omlab's notebook widgets need ipywidgets (>= 8.1), which is one of omlab's dependencies; "
    "install it into this environment with: pip install 'ipywidgets>=8.1'"
)


def ipywidgets() -> ModuleType:
    """The ``ipywidgets`` module, or an ImportError that says how to install it."""
    try:
        import ipywidgets as module
    except ImportError as error:  # pragma: no cover - ipywidgets is a dependency
        raise ImportError(INSTALL_HINT) from error
    return module


def figure_png(figure: Figure, *, dpi: int = 90) -> bytes:
    """``figure`` rendered as PNG bytes (white background, cropped to what was drawn).

    The layout is frozen after the first render: constrained layout with a legend wider than its
    axes (the timeline's legend below the plot) shrinks the axes again at every draw, so a view
    that re-renders a figure (moving a step marker) would see it narrow each time.
    """
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, facecolor="white", bbox_inches="tight")
    figure.set_layout_engine("none")
    return buffer.getvalue()


def frame_html(frame: pd.DataFrame, *, max_rows: int = 40, digits: int = 2) -> str:
    """A small HTML table of ``frame`` (floats rounded, index hidden, at most ``max_rows`` rows)."""
    if frame.empty:
        return "<i>nothing here</i>"
    shown = frame.head(max_rows)
    table = shown.to_html(
        index=False, border=0, na_rep="", float_format=lambda v: f"{v:,.{digits}f}", classes="omlab-table", escape=True
    )
    more = f"<div><i>{len(frame) - max_rows} more rows</i></div>" if len(frame) > max_rows else ""
    return f"<div style='font-size:12px'>{table}{more}</div>"


def text_html(text: str, *, height_px: int = 260, empty: str = "(empty)") -> str:
    """``text`` as a scrollable preformatted block."""
    body = html.escape(text) if text else f"<i>{html.escape(empty)}</i>"
    return (
        f"<pre style='max-height:{height_px}px;overflow:auto;white-space:pre-wrap;font-size:12px;margin:0'>{body}</pre>"
    )


def message_html(error: str | None, note: str = "") -> str:
    """A status line: the error in red, or the note in grey."""
    if error:
        return f"<span style='color:#B00020'><b>invalid settings:</b> {html.escape(error)}</span>"
    return f"<span style='color:#666'>{html.escape(note)}</span>"


def show(widget: Any) -> None:
    """Display ``widget`` in the running notebook (nothing happens outside IPython)."""
    try:
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return
    display(widget)

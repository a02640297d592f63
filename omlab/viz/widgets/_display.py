"""How the widget views show things: ipywidgets loaded on first use, figures as PNG, frames as HTML.

Figures go to an ``ipywidgets.Image`` as PNG bytes rather than through an ``Output`` widget, so a
view works (and can be tested) without a kernel, and a redraw replaces one value.
"""

from __future__ import annotations

import base64
import html
import io
from types import ModuleType
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from omlab.viz.saved_views import LIVE_VIEW_KEY

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


def number_text(value: float, digits: int = 2) -> str:
    """A table number: thousands separated, whole numbers without decimals (3, not 3.0)."""
    if float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def frame_html(frame: pd.DataFrame, *, max_rows: int = 40, digits: int = 2) -> str:
    """A small HTML table of ``frame`` (numbers via :func:`number_text`, index hidden, at most
    ``max_rows`` rows)."""
    if frame.empty:
        return "<i>nothing here</i>"
    shown = frame.head(max_rows)
    table = shown.to_html(
        index=False,
        border=0,
        na_rep="",
        float_format=lambda v: number_text(v, digits),
        classes="omlab-table",
        escape=True,
    )
    more = f"<div><i>{len(frame) - max_rows} more rows</i></div>" if len(frame) > max_rows else ""
    return f"<div style='font-size:12px'>{table}{more}</div>"


def text_html(text: str, *, height_px: int = 260, empty: str = "(empty)") -> str:
    """``text`` as a scrollable preformatted block."""
    body = html.escape(text) if text else f"<i>{html.escape(empty)}</i>"
    return pre_html(body, height_px=height_px)


def pre_html(body: str, *, height_px: int = 260) -> str:
    """Already escaped ``body`` as a scrollable block that wraps lines between words only.

    ``word-break: normal`` undoes the break-anywhere rule some notebook front ends give widget
    text, which cut words in half; a word longer than the whole line still wraps rather than
    widening the block.
    """
    return (
        f"<pre style='max-height:{height_px}px;overflow:auto;white-space:pre-wrap;word-break:normal;"
        f"overflow-wrap:break-word;font-size:12px;margin:0'>{body}</pre>"
    )


def message_html(error: str | None, note: str = "") -> str:
    """A status line: the error in red (with the note under it), or the note in grey."""
    grey = f"<span style='color:#666'>{html.escape(note)}</span>"
    if error:
        red = f"<span style='color:#B00020'><b>invalid settings:</b> {html.escape(error)}</span>"
        return f"{red}<br>{grey}" if note else red
    return grey


def png_html(png: bytes, *, alt: str) -> str:
    """PNG bytes as an inline ``<img>`` (a data URL), for static renderings."""
    data = base64.b64encode(png).decode("ascii")
    return f"<img src='data:image/png;base64,{data}' alt='{html.escape(alt)}' style='max-width:100%'>"


STATIC_CLASS = "omlab-static"
"""CSS class of a view's static rendering (what a saved notebook shows without a kernel)."""


def static_html(parts: list[str], *, title: str) -> str:
    """A view's static rendering: its images and tables in a collapsed ``<details>`` block.

    A live view shows its widgets; this copy (plain HTML, kept by any notebook save, shown by
    GitHub and nbconvert) is what remains when the widgets cannot be restored.
    """
    return (
        f"<details class='{STATIC_CLASS}'><summary>{html.escape(title)} (static copy, kept when the notebook "
        f"is saved)</summary>{''.join(parts)}</details>"
    )


class StaticCopy:
    """The display output holding a view's static rendering, replaced at every redraw."""

    def __init__(self) -> None:
        self.handle: Any = None
        self.html = ""

    def set(self, html_text: str) -> None:
        """Keep ``html_text`` and update the displayed copy, if one was displayed."""
        self.html = html_text
        if self.handle is not None:
            from IPython.display import HTML

            self.handle.update(HTML(html_text))

    def display(self) -> None:
        """Display the copy below the widget (nothing happens outside IPython)."""
        try:
            from IPython.display import HTML, display
        except ImportError:  # pragma: no cover - IPython comes with ipywidgets
            return
        self.handle = display(HTML(self.html), display_id=True)


def show(widget: Any, static: StaticCopy | Any = None) -> None:
    """Display ``widget`` in the running notebook, then its static copy (a :class:`StaticCopy` or
    anything IPython displays); nothing happens outside IPython.

    The widget's output is marked as a live view (:data:`~omlab.viz.saved_views.LIVE_VIEW_KEY`),
    so a save without its model keeps only the static copy (:mod:`omlab.viz.saved_views`).
    """
    try:
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return
    display(widget, metadata={LIVE_VIEW_KEY: True})
    if isinstance(static, StaticCopy):
        static.display()
    elif static is not None:
        display(static)

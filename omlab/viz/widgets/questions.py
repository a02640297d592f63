"""The per-question view: filter a run's questions, read one with its evidence lineage.

Dropdowns for question type, verdict and loss cause, a list of the questions they keep, and the
selected question as :mod:`omlab.viz.questions` renders it (answers, verdict, each evidence turn's
timeline, the memory context with the evidence lines marked ``.omlab-evidence``). The state lives
in :class:`~omlab.viz.widgets.questions_state.QuestionsState`.

A widget's live state is lost when a notebook is saved without it; :meth:`QuestionsView.static`
returns a plain-HTML rendering of the shown questions (an IPython ``HTML`` object) that a
notebook keeps as a cell output, and :func:`questions` displays both.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from omlab.bench.results import ResultsCatalog
from omlab.viz.inline_css import inline_styles
from omlab.viz.questions import CSS, question_html
from omlab.viz.widgets._display import ipywidgets, show, static_html
from omlab.viz.widgets.questions_state import VERDICTS, QuestionsState

STATIC_LIMIT = 20
"""Questions a static rendering shows at most (the shown ones, in order)."""


STATIC_CSS = (
    ".omlab-card{border:1px solid #ccc;border-radius:6px;margin:4px 0;padding:2px 10px;font-size:13px}"
    ".omlab-card summary{cursor:pointer;padding:2px 0}"
    ".omlab-card h3{display:inline;font-size:13px;margin:0}"
    ".omlab-question{border:none;border-radius:0;margin:0;padding:0 0 6px 0}"
    # notebook front ends centre tables and right-align their cells
    ".omlab-qa{margin:2px 0;table-layout:auto}"
    ".omlab-qa td{text-align:left;padding:1px 10px 1px 0;vertical-align:top;border:none}"
    # no list numbers beside the chips, and margins between them (a sanitizer drops gap)
    ".omlab-timeline{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap}"
    ".omlab-timeline li{list-style:none;margin:0 4px 4px 0}"
)
"""Rules for the static copy on top of :data:`~omlab.viz.questions.CSS`: each question a collapsed
card whose summary is its heading."""
_HEADING = re.compile(r"<h3>.*?</h3>", flags=re.DOTALL)

CONTEXT_WINDOW = "around the evidence"
CONTEXT_WHOLE = "whole log"
EVIDENCE_WINDOW = 3
"""Lines of context shown either side of an evidence line, as questions.html shows them."""


class QuestionsView:
    """ipywidgets layout over a :class:`QuestionsState`; display it, or its :attr:`widget`."""

    def __init__(self, state: QuestionsState) -> None:
        widgets = ipywidgets()
        self.state = state
        wide = widgets.Layout(width="32%")
        self.type = widgets.Dropdown(
            description="type", options=[("all", "")] + [(t, t) for t in state.types()], layout=wide
        )
        self.verdict = widgets.Dropdown(
            description="verdict", options=[("all", "")] + [(v, v) for v in VERDICTS], layout=wide
        )
        self.cause = widgets.Dropdown(description="loss cause", options=[("all", "")] + state.causes(), layout=wide)
        self.question = widgets.Select(
            description="question",
            options=state.options(),
            value=state.question_id,
            rows=6,
            layout=widgets.Layout(width="98%"),
        )
        # the evidence can sit hundreds of lines down a long log: open on the lines around it
        self.context = widgets.ToggleButtons(
            options=[CONTEXT_WINDOW, CONTEXT_WHOLE], value=CONTEXT_WINDOW, description="context"
        )
        self.detail = widgets.HTML(self._detail())
        self.context.observe(lambda _change: setattr(self.detail, "value", self._detail()), names="value")
        for control in (self.type, self.verdict, self.cause):
            control.observe(self._on_filter, names="value")
        self.question.observe(self._on_question, names="value")
        self.widget = widgets.VBox(
            [
                widgets.HTML(f"<style>{CSS}</style>"),
                widgets.HBox([self.type, self.verdict, self.cause]),
                self.question,
                self.context,
                self.detail,
            ]
        )

    def _detail(self) -> str:
        whole = getattr(self, "context", None) is not None and self.context.value == CONTEXT_WHOLE
        return self.state.html(window=None if whole else EVIDENCE_WINDOW)

    def _on_filter(self, _change: Any) -> None:
        self.state.set_filters(type=self.type.value, verdict=self.verdict.value, cause=self.cause.value)
        self.question.unobserve(self._on_question, names="value")
        self.question.options = self.state.options()
        self.question.value = self.state.question_id
        self.question.observe(self._on_question, names="value")
        self.detail.value = self._detail()

    def _on_question(self, change: Any) -> None:
        self.state.select(change["new"])
        self.detail.value = self._detail()

    def static(self, *, limit: int = STATIC_LIMIT) -> Any:
        """The shown questions (at most ``limit``) as an IPython ``HTML`` object: a rendering
        that stays in a saved notebook, each question a collapsed card (context excerpts around
        the evidence lines). Its styles are inline, so a sanitized copy looks the same."""
        from IPython.display import HTML

        shown = self.state.shown()
        ids = list(shown["question_id"])[:limit]
        cards = "".join(_card(question_html(self.state.frames, qid, window=EVIDENCE_WINDOW)) for qid in ids)
        more = len(shown) - len(ids)
        note = f"<p><i>{more} more questions: see the widget or questions.html</i></p>" if more > 0 else ""
        body = inline_styles(f"<div class='omlab-cards'>{cards}{note}</div>", CSS + STATIC_CSS)
        return HTML(static_html([body], title=f"per-question view, {len(ids)} of {len(shown)} questions"))

    def _ipython_display_(self) -> None:
        show(self.widget)


def _card(section: str) -> str:
    """A question's section as a collapsed ``details.omlab-card`` summarised by its heading."""
    heading = _HEADING.search(section)
    if heading is None:
        return f"<details class='omlab-card'><summary>question</summary>{section}</details>"
    body = section[: heading.start()] + section[heading.end() :]
    return f"<details class='omlab-card'><summary>{heading.group(0)}</summary>{body}</details>"


def questions(db: ResultsCatalog | str | Path, run_id: str | None = None, *, static: bool = True) -> QuestionsView:
    """Show the per-question view of run ``run_id`` (default: the newest) and, with ``static``,
    its static rendering under it; returns the view."""
    view = QuestionsView(QuestionsState.from_run(db, run_id))
    show(view.widget, view.static() if static else None)
    return view


__all__ = ["STATIC_CSS", "STATIC_LIMIT", "QuestionsView", "questions"]

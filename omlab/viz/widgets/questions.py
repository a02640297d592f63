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

from pathlib import Path
from typing import Any

from omlab.bench.results import ResultsCatalog
from omlab.viz.questions import CSS, question_html
from omlab.viz.widgets._display import ipywidgets, show
from omlab.viz.widgets.questions_state import VERDICTS, QuestionsState

STATIC_LIMIT = 20
"""Questions a static rendering shows at most (the shown ones, in order)."""


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
        that stays in a saved notebook (context excerpts around the evidence lines)."""
        from IPython.display import HTML

        ids = list(self.state.shown()["question_id"])[:limit]
        body = "".join(question_html(self.state.frames, qid, window=EVIDENCE_WINDOW) for qid in ids)
        more = len(self.state.shown()) - len(ids)
        note = f"<p><i>{more} more questions: see the widget or questions.html</i></p>" if more > 0 else ""
        return HTML(f"<style>{CSS}</style>{body}{note}")

    def _ipython_display_(self) -> None:
        show(self.widget)


def questions(db: ResultsCatalog | str | Path, run_id: str | None = None, *, static: bool = True) -> QuestionsView:
    """Show the per-question view of run ``run_id`` (default: the newest) and, with ``static``,
    its static rendering under it; returns the view."""
    view = QuestionsView(QuestionsState.from_run(db, run_id))
    show(view.widget)
    if static:
        show(view.static())
    return view


__all__ = ["STATIC_LIMIT", "QuestionsView", "questions"]

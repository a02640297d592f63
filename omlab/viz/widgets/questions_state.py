"""The per-question view's state: a run's questions, the filters, the selected question.

Plain Python (no ipywidgets), so it is tested without a kernel; :mod:`omlab.viz.widgets.questions`
draws it. The HTML comes from :mod:`omlab.viz.questions` (the same as ``questions.html``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from omlab.bench.lineage import LINEAGE_EVENT_TYPES, LOSS_CAUSES
from omlab.bench.results import ResultsCatalog, answers_df, events_df, lineage_df, lineage_questions_df, runs_df
from omlab.viz.questions import CAUSE_LABELS, QuestionFrames, filter_questions, question_frames, question_html

VERDICTS: tuple[str, ...] = ("right", "wrong", "unjudged")


class QuestionsState:
    """A run's questions with their lineage, filtered by type, verdict and loss cause.

    Args:
        frames: The view's frames (:func:`omlab.viz.questions.question_frames`).
        run_id: The run they come from (a label only).
    """

    def __init__(self, frames: QuestionFrames, run_id: str | None = None) -> None:
        self.frames = frames
        self.run_id = run_id
        self.type: str | None = None
        self.verdict: str | None = None
        self.cause: str | None = None
        self.question_id: str | None = None
        self._settle()

    @classmethod
    def from_run(cls, db: ResultsCatalog | str | Path, run_id: str | None = None) -> QuestionsState:
        """The state of run ``run_id`` (default: the newest run) of a results directory or catalog."""
        catalog = db if isinstance(db, ResultsCatalog) else ResultsCatalog(db)
        if run_id is None:
            runs = runs_df(catalog)
            if runs.empty:
                raise ValueError(f"no runs under {catalog.results_dir}")
            run_id = str(runs["run_id"].iloc[-1])
        frames = question_frames(
            answers_df(catalog, run_id),
            lineage_df(catalog, run_id),
            lineage_questions_df(catalog, run_id),
            events_df(catalog, run_id, types=list(LINEAGE_EVENT_TYPES)),
        )
        return cls(frames, run_id)

    # ------------------------------------------------------------------ choices

    def types(self) -> list[str]:
        """Question types present in the run."""
        return sorted({str(t) for t in self.frames.questions["question_type"].dropna()})

    def causes(self) -> list[tuple[str, str]]:
        """``(label, loss_cause)`` of the causes present, in :data:`LOSS_CAUSES` order."""
        present = set(self.frames.questions["loss_cause"].dropna())
        return [(CAUSE_LABELS[c], c) for c in LOSS_CAUSES if c in present]

    def shown(self) -> pd.DataFrame:
        """The questions the filters keep."""
        return filter_questions(self.frames.questions, type=self.type, verdict=self.verdict, cause=self.cause)

    def options(self) -> list[tuple[str, str]]:
        """``(label, question_id)`` of the shown questions: id, verdict and the question's start."""
        return [
            (f"{row.question_id} · {row.verdict} · {str(row.question)[:60]}", row.question_id)
            for row in self.shown().itertuples()
        ]

    # ------------------------------------------------------------------ changes

    def set_filters(self, *, type: Any = ..., verdict: Any = ..., cause: Any = ...) -> None:
        """Change some filters (None or "" clears one); the selection moves to the first question
        shown when it is filtered out."""
        if type is not ...:
            self.type = type or None
        if verdict is not ...:
            if verdict and verdict not in VERDICTS:
                raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
            self.verdict = verdict or None
        if cause is not ...:
            if cause and cause not in LOSS_CAUSES:
                raise ValueError(f"cause must be one of {', '.join(LOSS_CAUSES)}, got {cause!r}")
            self.cause = cause or None
        self._settle()

    def select(self, question_id: str | None) -> None:
        """Show ``question_id`` (one of the shown questions)."""
        if question_id is not None and question_id not in set(self.shown()["question_id"]):
            raise ValueError(f"question {question_id!r} is not among the questions shown")
        self.question_id = question_id

    def html(self, *, window: int | None = None) -> str:
        """The selected question as HTML (its whole memory context by default)."""
        if self.question_id is None:
            return "<i>no question matches these filters</i>"
        return question_html(self.frames, self.question_id, window=window)

    def _settle(self) -> None:
        ids = list(self.shown()["question_id"])
        if self.question_id not in ids:
            self.question_id = ids[0] if ids else None


__all__ = ["VERDICTS", "QuestionsState"]

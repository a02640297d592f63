"""What a run failed to do, and so what a resume would retry.

A run ends ``incomplete`` (rather than ``finished``) when a conversation phase is marked
``failed`` in the ``conversations`` table, a question has no answer (``answers.status`` is
``failed``), or an answered question lacks a score its judge phase owes it
(:func:`~omlab.bench.scoring.required_scorers.required_scorers`), or when the run has judge scores and not one of
them holds a verdict (a judge that never answered: every judged question is owed its verdict, see
:func:`judge_done`). Each of these is what ``--resume`` (or running the
same command again) retries. Otherwise a judge reply that came back but could not be parsed is not
a failure here: it is a stored verdict-less score that a resume would not change; the report counts
it as missing (``judge_missing``, ``n_missing``).

``omlab run`` and ``omlab sweep`` print :meth:`RunFailures.lines` in their final summary and exit
with :data:`EXIT_INCOMPLETE`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from omlab.bench.datasets.schema import Question
from omlab.bench.scoring.required_scorers import required_scorers

EXIT_INCOMPLETE = 3
"""The exit status of ``omlab run`` / ``omlab sweep`` when a run ended incomplete (a crash exits 1,
a usage error 2, an interruption 130)."""


@dataclass(frozen=True, slots=True)
class FailedPhase:
    """A conversation's phase marked ``failed``, with its error."""

    conversation_id: str
    phase: str
    error: str | None


@dataclass(frozen=True, slots=True)
class RunFailures:
    """Failed phases and questions of one run (empty: the run is complete)."""

    phases: tuple[FailedPhase, ...] = ()
    unanswered: int = 0
    """Questions with no successful answer."""
    unscored: int = 0
    """Answered questions missing a score the judge phase owes them."""

    @property
    def failed_questions(self) -> int:
        """Questions a resume would answer or judge again."""
        return self.unanswered + self.unscored

    @property
    def incomplete(self) -> bool:
        return bool(self.phases) or self.failed_questions > 0

    def counts(self) -> str:
        """``2 phases, 152 questions`` (what ``failed=`` prints)."""
        return f"{len(self.phases)} phase{_s(len(self.phases))}, {self.failed_questions} question{_s(self.failed_questions)}"

    def lines(self, limit: int = 5) -> list[str]:
        """Human-readable lines: the counts, then up to ``limit`` failed phases with their errors."""
        if not self.incomplete:
            return []
        head = (
            f"INCOMPLETE: {len(self.phases)} failed phase{_s(len(self.phases))}; "
            f"{self.unanswered} question{_s(self.unanswered)} unanswered, "
            f"{self.unscored} answered but not scored"
        )
        out = [head]
        for failed in self.phases[:limit]:
            out.append(f"  {failed.conversation_id} {failed.phase}: {failed.error or 'no error recorded'}")
        if len(self.phases) > limit:
            out.append(f"  … and {len(self.phases) - limit} more failed phases")
        return out

    def metric_rows(self) -> list[dict[str, object]]:
        """``metrics`` rows: ``failed_phases`` (``all`` and ``phase:<name>``) and
        ``unscored_questions`` (``failed_questions`` comes from the answers themselves)."""
        rows: list[dict[str, object]] = [
            {"name": "failed_phases", "group_key": "all", "value": float(len(self.phases))},
            {"name": "unscored_questions", "group_key": "all", "value": float(self.unscored)},
        ]
        for phase in sorted({failed.phase for failed in self.phases}):
            count = sum(failed.phase == phase for failed in self.phases)
            rows.append({"name": "failed_phases", "group_key": f"phase:{phase}", "value": float(count)})
        return rows

    def error_text(self) -> str | None:
        """What the run row's ``error`` records (None when complete)."""
        lines = self.lines(limit=3)
        return "\n".join(lines) if lines else None


def collect_failures(
    conversations: pd.DataFrame,
    answers: pd.DataFrame,
    scores: pd.DataFrame,
    questions: Iterable[Question],
    *,
    dataset_kind: str,
    judged: bool,
) -> RunFailures:
    """The failures of a run from its ``conversations``, ``answers`` and ``scores`` tables and its
    questions; ``judged``: whether the run has a judge phase (else nothing is owed a score)."""
    phases: list[FailedPhase] = []
    if not conversations.empty:
        failed = conversations[conversations["status"] == "failed"].sort_values(["conversation_id", "phase"])
        phases = [
            FailedPhase(str(row.conversation_id), str(row.phase), None if pd.isna(row.error) else str(row.error))
            for row in failed.itertuples()
        ]
    answered: set[str] = set()
    unanswered = 0
    if not answers.empty:
        ok = answers["status"].fillna("") != "failed"
        answered = set(answers.loc[ok, "question_id"])
        unanswered = int((~ok).sum())
    unscored = 0
    if judged:
        have: dict[str, set[str]] = {}
        if not scores.empty:
            retry_judge = no_verdict_at_all(list(scores.loc[scores["scorer"] == "judge", "value"]))
            for question_id, scorer in zip(scores["question_id"], scores["scorer"], strict=True):
                if not (retry_judge and scorer == "judge"):
                    have.setdefault(question_id, set()).add(scorer)
        unscored = sum(
            1 for q in questions if q.id in answered and not required_scorers(q, dataset_kind) <= have.get(q.id, set())
        )
    return RunFailures(tuple(phases), unanswered, unscored)


def no_verdict_at_all(values: list[Any]) -> bool:
    """Whether judge score ``values`` exist and none is a verdict (all None/NaN): the judge never
    answered, so every one of them is retried rather than reported as missing."""
    return bool(values) and all(value is None or math.isnan(value) for value in values)


def judge_done(writer: Any) -> set[str]:
    """Questions whose judge score is settled on a run's ``writer``: those with a ``judge`` score,
    or none when not one of those scores holds a verdict (:func:`no_verdict_at_all`)."""
    rows = writer.read_own(
        lambda db: db.execute("SELECT question_id, value FROM scores WHERE scorer = 'judge'").fetchall()
    )
    return set() if no_verdict_at_all([value for _, value in rows]) else {question_id for question_id, _ in rows}


def _s(count: int) -> str:
    return "" if count == 1 else "s"


__all__ = ["EXIT_INCOMPLETE", "FailedPhase", "RunFailures", "collect_failures", "judge_done", "no_verdict_at_all"]

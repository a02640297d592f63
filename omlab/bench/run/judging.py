"""Judging answers (the ``judge`` phase's work).

LongMemEval-style datasets (longmemeval, synthetic, jsonl): the judge prompt for the question's
type (``judge_messages``; the suite's own wording with ``[scoring] judge_prompts``) goes to the
judge model at temperature 0 with 10 output tokens, and its reply is parsed with
``parse_verdict`` in the suite's verdict mode; an unparseable reply is stored with no verdict, and so
is an empty or degenerate one after one more try (``details.problem`` says which).
LoCoMo: the official ``f1`` for every category, plus the judge (J) for categories 1-4. F1 is
model-free and is written even when the judge fails; a question counts as judged only once every
scorer it needs (:func:`~omlab.bench.scoring.required_scorers.required_scorers`) has a row, so a resumed run judges it again (scores are
keyed by question and scorer: the F1 row is replaced, never duplicated).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from omlab.bench.datasets.schema import Question
from omlab.bench.run.answering import describe_error
from omlab.bench.run.unusable_replies import reply_problem
from omlab.bench.scoring import (
    JUDGE_REQUEST_OPTIONS,
    judge_messages,
    load_judge_prompts,
    locomo_f1,
    parse_verdict,
)
from omlab.bench.scoring.required_scorers import required_scorers
from omlab.bench.suite.run_settings import RunSettings
from omlab.llm.types import ModelCall, ModelRequest


@dataclass(slots=True)
class JudgedQuestion:
    """One question's ``scores`` rows and judge calls; ``error`` when it was left unscored."""

    question: Question
    scores: list[dict[str, Any]] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)
    error: str | None = None


class Judge:
    """Scores answers with the run's judge model and verdict mode."""

    def __init__(self, settings: RunSettings, *, limits: Any = None) -> None:
        self.settings = settings
        self._calls: list[ModelCall] = []
        self.client = settings.make_client(self._calls.append, limits=limits)
        self.prompts = load_judge_prompts(settings.judge_prompts_path) if settings.judge_prompts_path else None

    async def judge(self, question: Question, hypothesis: str) -> JudgedQuestion:
        """Score one answer (see the module docstring); never raises."""
        before = len(self._calls)
        result = JudgedQuestion(question)
        needed = required_scorers(question, self.settings.dataset_kind)
        try:
            if "judge" in needed:
                result.scores.append(await self._verdict(question, hypothesis))
        except Exception as error:  # noqa: BLE001 - no verdict; the phase mark carries the error
            result.error = describe_error(error)
        if "f1" in needed:
            # model-free: a judge that fails must not take the F1 with it
            try:
                f1 = locomo_f1(hypothesis, question.answer, question.category)
            except Exception as error:  # noqa: BLE001 - left unscored; the phase mark carries the error
                result.error = "; ".join(filter(None, (result.error, f"F1: {describe_error(error)}")))
            else:
                result.scores.append(
                    {
                        "question_id": question.id,
                        "scorer": "f1",
                        "value": f1,
                        "details": {"category": question.category},
                    }
                )
        result.calls = self._calls[before:]
        return result

    async def _verdict(self, question: Question, hypothesis: str) -> dict[str, Any]:
        request = ModelRequest(
            model=self.settings.models["judge"],
            messages=judge_messages(question, hypothesis, self.prompts),
            role="judge",
            **JUDGE_REQUEST_OPTIONS,
        )
        for attempt in (1, 2):
            salted = request if attempt == 1 else dataclasses.replace(request, cache_salt=f"retry-{attempt}")
            response = await self.client.complete(salted)
            problem = reply_problem(response.text, max_output_tokens=request.max_output_tokens)
            if problem is None:
                break
        mode = self.settings.scoring.verdict
        # an empty or looping reply is no verdict at all, never a "no" (parity mode reads "" as no)
        verdict = None if problem is not None else parse_verdict(response.text, mode)
        details = {"reply": response.text[:2000], "verdict_mode": mode, "judge_model": response.model}
        if problem is not None:
            details["problem"] = problem
        return {
            "question_id": question.id,
            "scorer": "judge",
            "value": None if verdict is None else float(verdict),
            "correct": verdict,
            "details": details,
        }


__all__ = ["Judge", "JudgedQuestion"]

"""A failing judge costs the verdict, never the model-free LoCoMo F1 (it was dropped with it and
then counted as 0)."""

from __future__ import annotations

from types import SimpleNamespace

from omlab.bench.datasets.schema import Question
from omlab.bench.run.judging import Judge
from omlab.bench.scoring import locomo_f1


def _judge_that_fails(locomo: bool) -> Judge:
    judge = Judge.__new__(Judge)  # no model client: the verdict call is replaced below
    judge._calls = []
    judge.settings = SimpleNamespace(dataset_kind="locomo" if locomo else "longmemeval")

    async def broken_verdict(question, hypothesis):
        raise KeyError("no judge prompt for question type 'single-hop'")

    judge._verdict = broken_verdict
    return judge


async def test_a_failing_judge_keeps_the_locomo_f1_and_reports_the_failure():
    question = Question("q1", "single-hop", "Where did Ana move?", "Lisbon", category=4)
    done = await _judge_that_fails(locomo=True).judge(question, "She moved to Lisbon in May")
    assert done.error is not None and "no judge prompt" in done.error
    assert [s["scorer"] for s in done.scores] == ["f1"]
    assert done.scores[0]["value"] == locomo_f1("She moved to Lisbon in May", "Lisbon", 4) > 0


async def test_a_failing_judge_outside_locomo_leaves_the_question_unscored():
    question = Question("q2", "single-session-user", "Where did Ana move?", "Lisbon")
    done = await _judge_that_fails(locomo=False).judge(question, "Lisbon")
    assert done.error is not None and done.scores == []

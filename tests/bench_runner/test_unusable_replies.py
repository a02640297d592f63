"""Empty or looping actor answers and judge replies are failures, never scored as real ones."""

from __future__ import annotations

import pytest

from omlab.bench.report.metrics import metric_value
from omlab.bench.results.frames import catalog_of
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite
from omlab.bench.run.unusable_replies import reply_problem
from omlab.llm.offline import get_offline_model, register_offline_model
from omlab.llm.offline.base import OfflineResult

from .suites import write_suite

UNUSABLE = {
    "empty": "",
    "whitespace": " \n\n ",
    "loop": "I think it was on Tuesday. " * 8_000,  # ~200,000 characters
}


class UnusableReader:
    name = "unusable-reader"
    reply = ""
    calls = 0

    def generate(self, messages, **_):
        UnusableReader.calls += 1
        return OfflineResult(UnusableReader.reply, 100, 1)


class UnusableJudge:
    name = "unusable-judge"
    reply = ""

    def generate(self, messages, **_):
        return OfflineResult(UnusableJudge.reply, 100, 1)


register_offline_model(UnusableReader.name, UnusableReader)
register_offline_model(UnusableJudge.name, UnusableJudge)


def test_reply_problem_names_the_cause():
    assert reply_problem("") == reply_problem("  \n") == reply_problem(None) == "empty reply"
    assert reply_problem("Tuesday") is None
    assert "degenerate" in reply_problem(UNUSABLE["loop"], max_output_tokens=500)
    assert "repetition loop" in reply_problem("I think so.\n" * 20_000)


@pytest.mark.parametrize("kind", sorted(UNUSABLE))
def test_an_unusable_answer_is_retried_then_a_counted_failure(tmp_path, kind):
    UnusableReader.reply, UnusableReader.calls = UNUSABLE[kind], 0
    suite = write_suite(tmp_path, name="unusable", actor="omlab/unusable-reader")
    (summary,) = run_suite(suite, RunOptions(results_dir=tmp_path / "results", workers=1, progress=False))
    answers = catalog_of(tmp_path / "results").read_table("answers", summary.run_id)
    assert len(answers) == 8 and (answers["status"] == "failed").all()
    assert answers["hypothesis"].isna().all()
    assert answers["error"].str.contains("the actor.s reply was unusable twice: (?:empty|degenerate) reply").all()
    assert UnusableReader.calls == 16, "each question asked twice"
    assert metric_value(summary.metrics, "failed_questions") == 8


@pytest.mark.parametrize("kind", ["empty", "loop"])
def test_an_unusable_judge_reply_is_a_missing_verdict_not_a_no(tmp_path, kind):
    UnusableJudge.reply = UNUSABLE[kind]
    suite = write_suite(tmp_path, name="unjudged")
    suite.write_text(suite.read_text().replace('judge = "omlab/judge"', 'judge = "omlab/unusable-judge"'))
    (summary,) = run_suite(suite, RunOptions(results_dir=tmp_path / "results", workers=1, progress=False))
    scores = catalog_of(tmp_path / "results").read_table("scores", summary.run_id)
    judged = scores[scores["scorer"] == "judge"]
    assert len(judged) == 8
    assert judged["value"].isna().all() and judged["correct"].isna().all()
    assert metric_value(summary.metrics, "judge_missing") == 8


def test_the_offline_reader_and_judge_replies_are_usable():
    reader = get_offline_model("reader").generate([{"role": "user", "content": "Question: where?"}])
    assert reply_problem(reader.text, max_output_tokens=500) is None

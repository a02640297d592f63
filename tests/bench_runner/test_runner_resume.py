"""Runner checkpoints: a killed run resumes to the same result with no duplicate rows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from omlab.bench.results import RunWriter, answers_df, calls_df, conversations_df, events_df, runs_df, steps_df
from omlab.bench.results.frames import catalog_of
from omlab.bench.run.options import RunOptions
from omlab.bench.run.resume import ResumeError
from omlab.bench.run.runner import run_suite
from omlab.llm.offline import get_offline_model, register_offline_model

from .suites import stable_metrics, write_suite


class Stop(Exception):
    """Raised by the test hook to kill a run half-way."""


def _options(results: Path, **extra) -> RunOptions:
    return RunOptions(results_dir=results, workers=1, progress=False, **extra)


def _stop_after(n: int, phase: str = "answer"):
    seen = []

    def hook(question_phase: str, question_id: str) -> None:
        if question_phase == phase:
            seen.append(question_id)
            if len(seen) == n:
                raise Stop(f"stopped after {n} {phase} questions")

    return hook


def _counts(results: Path, run_id: str) -> dict[str, int]:
    catalog = catalog_of(results)
    return {
        "steps": len(steps_df(catalog, run_id)),
        "events": len(events_df(catalog, run_id)),
        "calls": len(calls_df(catalog, run_id)),
        "answers": len(catalog.read_table("answers", run_id)),
        "scores": len(catalog.read_table("scores", run_id)),
        "marks": len(conversations_df(catalog, run_id)),
    }


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One uninterrupted run of the tiny suite."""
    folder = tmp_path_factory.mktemp("reference")
    suite = write_suite(folder)
    (summary,) = run_suite(suite, _options(folder / "results"))
    return suite, folder / "results", summary


def test_reference_run_has_every_table(reference):
    _, results, summary = reference
    counts = _counts(results, summary.run_id)
    assert summary.status == "finished" and not summary.resumed
    assert summary.n_conversations == 2 and summary.n_questions == 8
    assert counts["answers"] == 8 and counts["marks"] == 6  # 2 conversations x 3 phases
    assert counts["steps"] > 0 and counts["events"] > counts["steps"] and counts["calls"] > 16
    calls = calls_df(results, summary.run_id)
    roles = calls["role"].value_counts().to_dict()
    assert roles["actor"] == 8 and roles["judge"] == 8 and roles["observer"] > 0
    # actor and judge calls name their question; memory calls belong to no question
    per_question = calls[calls["role"].isin(["actor", "judge"])]
    assert per_question["question_id"].notna().all() and per_question["question_id"].nunique() == 8
    assert calls.loc[~calls["role"].isin(["actor", "judge"]), "question_id"].isna().all()
    answers = answers_df(results, summary.run_id)
    for role in ("actor", "judge"):  # each question's own cost, adding up to the role's total
        assert answers[f"{role}_cost_usd"].notna().all()
        assert answers[f"{role}_cost_usd"].sum() == pytest.approx(calls.loc[calls["role"] == role, "cost_usd"].sum())
    header = runs_df(results).set_index("run_id").loc[summary.run_id]
    assert header["status"] == "finished" and header["suite"] == "tiny" and len(header["config_hash"]) == 64


@pytest.mark.parametrize("stop_phase, stop_after", [("answer", 3), ("judge", 5)])
def test_killed_run_resumes_to_the_same_result(reference, tmp_path, stop_phase, stop_after):
    suite, reference_results, reference_summary = reference
    results = tmp_path / "results"
    with pytest.raises(Stop):
        run_suite(suite, _options(results, on_question=_stop_after(stop_after, stop_phase)))
    (killed,) = runs_df(results)["run_id"]
    assert runs_df(results).iloc[0]["status"] == "failed"
    partial = _counts(results, killed)
    assert 0 < partial["answers"] <= 8

    (resumed,) = run_suite(suite, _options(results))
    assert resumed.resumed and resumed.run_id == killed
    assert stable_metrics(resumed.metrics) == stable_metrics(reference_summary.metrics)
    assert _counts(results, killed) == _counts(reference_results, reference_summary.run_id)
    calls = calls_df(results, killed)
    assert not calls["call_id"].duplicated().any()
    assert (calls["role"] == "actor").sum() == 8, "answered questions are never asked again"
    assert runs_df(results).iloc[0]["status"] == "finished"


def test_a_run_killed_while_writing_an_answer_keeps_none_of_its_calls(reference, tmp_path, monkeypatch):
    import omlab.bench.results.writer as writer_module

    suite, _, _ = reference
    results = tmp_path / "results"
    real_check = writer_module.check_row
    answers_seen = []

    def check_then_die(table, row, *args, **kwargs):
        if table == "answers":
            answers_seen.append(row.get("question_id"))
            if len(answers_seen) == 3:  # the third question's actor calls are already checked
                raise Stop("killed while writing an answer")
        return real_check(table, row, *args, **kwargs)

    monkeypatch.setattr(writer_module, "check_row", check_then_die)
    with pytest.raises(Stop):
        run_suite(suite, _options(results))
    monkeypatch.setattr(writer_module, "check_row", real_check)
    (killed,) = runs_df(results)["run_id"]
    assert (calls_df(results, killed)["role"] == "actor").sum() == 2

    run_suite(suite, _options(results))
    calls = calls_df(results, killed)
    assert (calls["role"] == "actor").sum() == 8, "the interrupted question's calls were not kept twice"


def test_half_written_prepare_is_discarded_on_resume(reference, tmp_path):
    suite, reference_results, reference_summary = reference
    results = tmp_path / "results"
    with pytest.raises(Stop):
        run_suite(suite, _options(results, on_question=_stop_after(1)))
    (run_id,) = runs_df(results)["run_id"]
    done = set(conversations_df(results, run_id, phase="prepare")["conversation_id"])
    assert done == {"synthetic-11-4000"}
    # a process that died while writing the second conversation's prepare rows
    writer = RunWriter.open_existing(results, run_id)
    writer.add_steps([{"conversation_id": "synthetic-12-4000", "step": 1, "pending_tokens": 5}])
    writer.add_events([{"conversation_id": "synthetic-12-4000", "type": "data-om-status", "payload": {}}])
    writer.add_model_calls([{"conversation_id": "synthetic-12-4000", "role": "observer"}])
    writer.close("failed", error="killed")

    (resumed,) = run_suite(suite, _options(results))
    assert resumed.resumed
    assert _counts(results, run_id) == _counts(reference_results, reference_summary.run_id)
    assert stable_metrics(resumed.metrics) == stable_metrics(reference_summary.metrics)


def test_resume_refuses_another_configuration(reference, tmp_path):
    suite, results, summary = reference
    other = write_suite(tmp_path, name="tiny", extra='[scoring]\nverdict = "official"\n')
    with pytest.raises(ResumeError, match="another configuration"):
        run_suite(other, _options(results, resume=summary.run_id))
    with pytest.raises(ResumeError, match="no run"):
        run_suite(suite, _options(results, resume="20000101T000000-abcdef"))


def test_finished_runs_are_not_resumed_and_a_new_run_reuses_the_prepared_memory(reference, tmp_path):
    """Changing only the actor re-answers from the prepared memory: no observer call is made."""
    _, results, summary = reference

    class EchoReader:
        name = "echo-reader"

        def generate(self, messages, **options):
            result = get_offline_model("reader").generate(messages, **options)
            result.text = result.text.upper()
            return result

    register_offline_model("echo-reader", EchoReader)
    suite = write_suite(tmp_path, name="tiny", actor="omlab/echo-reader")
    (second,) = run_suite(suite, _options(results))
    assert not second.resumed and second.run_id != summary.run_id
    assert second.config_hash != summary.config_hash
    calls = calls_df(results, second.run_id)
    prepare_calls = calls[calls["role"].isin(["observer", "reflector"])]
    assert len(prepare_calls) and prepare_calls["cached"].all()  # copied from the prepared memory
    answers = catalog_of(results).read_table("answers", second.run_id)
    assert (answers["answer_model"] == "omlab/echo-reader").all()
    hypotheses = answers["hypothesis"].dropna()
    assert len(hypotheses) == 8 and (hypotheses == hypotheses.str.upper()).all()
    # same memory, same steps
    assert len(steps_df(results, second.run_id)) == len(steps_df(results, summary.run_id))
    reference_steps = steps_df(results, summary.run_id)[["conversation_id", "step", "context_tokens"]]
    second_steps = steps_df(results, second.run_id)[["conversation_id", "step", "context_tokens"]]
    pd.testing.assert_frame_equal(reference_steps.reset_index(drop=True), second_steps.reset_index(drop=True))


def test_failed_actor_calls_are_recorded_and_retried_on_resume(tmp_path):
    class Flaky:
        name = "flaky-reader"
        fail = True

        def generate(self, messages, **options):
            if Flaky.fail:
                raise ValueError("the reader is down")
            return get_offline_model("reader").generate(messages, **options)

    register_offline_model("flaky-reader", Flaky)
    suite = write_suite(tmp_path, name="flaky", actor="omlab/flaky-reader")
    results = tmp_path / "results"
    (first,) = run_suite(suite, _options(results))
    answers = catalog_of(results).read_table("answers", first.run_id)
    assert (answers["status"] == "failed").all() and answers["error"].str.contains("the reader is down").all()
    from omlab.bench.report.metrics import metric_value

    assert metric_value(first.metrics, "failed_questions") == 8
    # no answer, no score: the accuracy is missing (n 0, 8 missing), never 0%, and the run incomplete
    accuracy = first.metrics.set_index(["name", "group_key"]).loc[("accuracy", "all")]
    assert pd.isna(accuracy["value"]) and accuracy["n"] == 0 and accuracy["n_missing"] == 8
    assert first.status == "incomplete" and first.failures.unanswered == 8
    marks = conversations_df(results, first.run_id)
    assert set(marks.loc[marks["phase"] == "answer", "status"]) == {"failed"}

    Flaky.fail = False
    (second,) = run_suite(suite, _options(results, resume=first.run_id))
    answers = catalog_of(results).read_table("answers", first.run_id)
    assert len(answers) == 8 and (answers["status"] == "ok").all()
    assert metric_value(second.metrics, "failed_questions") == 0
    assert second.status == "finished" and not second.failures.incomplete


def _tiny_jobs(folder: Path):
    from omlab.bench.run.phases import ConversationJob
    from omlab.bench.suite.dataset import load_conversations
    from omlab.bench.suite.run_settings import RunSettings
    from omlab.bench.suite.suite_file import expand_grid, load_suite

    suite = load_suite(write_suite(folder, seeds="[21, 22, 23]"))
    settings = RunSettings.from_cell(expand_grid(suite)[0], results_dir=folder / "results")
    _, conversations = load_conversations(suite.dataset, suite.base_dir)
    return [ConversationJob(conversation, settings) for conversation in conversations]


def test_event_loop_executor_applies_every_record_once(tmp_path):
    from omlab.bench.run.execution import run_in_event_loop
    from omlab.bench.run.phases import PhaseMark

    records = []
    run_in_event_loop(_tiny_jobs(tmp_path), records.append, concurrency=2)
    marks = [(r.conversation_id, r.phase) for r in records if isinstance(r, PhaseMark)]
    assert len(marks) == len(set(marks)) == 9  # 3 conversations x 3 phases
    assert all(r.status == "done" for r in records if isinstance(r, PhaseMark))


def test_event_loop_executor_starts_nothing_after_a_failure(tmp_path):
    from omlab.bench.run.execution import run_in_event_loop
    from omlab.bench.run.phases import PhaseMark

    records = []

    def sink(record):
        records.append(record)
        if isinstance(record, PhaseMark) and record.phase == "prepare":
            raise Stop("sink failed")

    with pytest.raises(Stop):
        run_in_event_loop(_tiny_jobs(tmp_path), sink, concurrency=1)
    assert sum(isinstance(r, PhaseMark) for r in records) == 1

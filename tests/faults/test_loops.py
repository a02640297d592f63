"""Looping replies through a real HTTP provider never become memory or an answer (issue 24 items 1-2)."""

from __future__ import annotations

import pytest

from omlab.bench.results import answers_df
from omlab.bench.run.runner import RunOptions, run_suite

from .fault_server import BULLET_LOOP, PHRASE_LOOP, PHRASE_UNIT, FaultServer, fault_suite
from .message_accounting import account_messages


@pytest.mark.parametrize("loop", [BULLET_LOOP, PHRASE_LOOP], ids=["bulleted-line-x120", "one-line-59-char-period"])
def test_a_looping_observer_commits_no_message_as_garbage(tmp_path, loop):
    with FaultServer(rate=0.5, seed=3, faults=("loop",), fault_models=("observer",), loop_text=loop) as server:
        suite = tmp_path / "faulty.toml"
        suite.write_text(fault_suite(server.url, seeds="[11]"))
        results = tmp_path / "results"
        (summary,) = run_suite(suite, RunOptions(results_dir=results, progress=False, concurrency=2))
    assert server.faults["loop"] > 0
    accounting = account_messages(suite, results, summary.run_id)
    assert accounting.garbage == 0
    assert accounting.lost == 0 and accounting.empty_commits == 0


def test_a_looping_actor_answer_is_a_failed_question_not_an_answer(tmp_path):
    with FaultServer(rate=1.0, faults=("loop",), fault_models=("reader",), loop_text=PHRASE_LOOP) as server:
        suite = tmp_path / "faulty.toml"
        suite.write_text(fault_suite(server.url, seeds="[11]"))
        results = tmp_path / "results"
        (summary,) = run_suite(suite, RunOptions(results_dir=results, progress=False, concurrency=2))
    answers = answers_df(results, summary.run_id)
    assert len(answers) == 4
    assert not answers["hypothesis"].fillna("").str.contains(PHRASE_UNIT.strip()).any()
    assert (answers["status"] == "failed").all()
    assert answers["error"].str.contains("degenerate reply").all()
    assert summary.status == "incomplete"

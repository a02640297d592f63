"""An Observer that loops on every reply, under failurePolicy = "continue", leaves the run
incomplete (exit 3) instead of finished with an empty memory, and the same command resumes it
(issue 24 item 1), through a real HTTP provider."""

from __future__ import annotations

from omlab.bench.report.run_report import write_report
from omlab.bench.results import answers_df, conversations_df, runs_df
from omlab.cli.main import main

from .fault_server import BULLET_LOOP, FaultServer, fault_suite


def test_an_always_looping_observer_ends_incomplete_and_a_rerun_resumes(tmp_path, capsys):
    suite = tmp_path / "faulty.toml"
    results = tmp_path / "results"
    with FaultServer(rate=1.0, faults=("loop",), fault_models=("observer",), loop_text=BULLET_LOOP) as server:
        port = server._server.server_address[1]
        suite.write_text(fault_suite(server.url, seeds="[11]"))
        status = main(["run", str(suite), "--results", str(results)])
    printed = capsys.readouterr().out
    assert server.faults["loop"] > 0
    assert status == 3, printed
    assert "retention 0.0%" not in printed
    (run,) = runs_df(results).itertuples()
    assert run.status == "incomplete"
    (prepare,) = conversations_df(results, run.run_id).query("phase == 'prepare'").itertuples()
    assert prepare.status == "failed"
    assert "every Observer cycle failed" in prepare.error and "degenerate" in prepare.error
    answers = answers_df(results, run.run_id)
    assert (answers["status"] == "failed").all()
    report = write_report(results, run.run_id).read_text(encoding="utf-8")
    assert "every Observer cycle failed" in report
    # the provider recovers: the same command resumes the run and observes the conversation
    with FaultServer(rate=0.0, port=port) as healthy:
        status = main(["run", str(suite), "--results", str(results), "--quiet"])
    assert status == 0
    assert healthy.by_model["observer"] > 0
    (again,) = runs_df(results).itertuples()
    assert again.run_id == run.run_id and again.status == "finished"

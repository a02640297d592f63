"""A judge that never gives a verdict leaves the run incomplete, and a rerun retries the verdicts
(issue 24 item 4), through a real HTTP provider."""

from __future__ import annotations

from omlab.bench.results import runs_df, scores_df
from omlab.cli.main import main

from .fault_server import FaultServer, fault_suite


def test_all_verdicts_missing_is_incomplete_exit_3_and_a_rerun_retries_them(tmp_path, capsys):
    suite = tmp_path / "faulty.toml"
    results = tmp_path / "results"
    with FaultServer(rate=1.0, faults=("empty",), fault_models=("judge",)) as server:
        port = server._server.server_address[1]
        suite.write_text(fault_suite(server.url, seeds="[11]"))
        status = main(["run", str(suite), "--results", str(results), "--quiet"])
    assert server.faults["empty"] > 0
    assert status == 3, capsys.readouterr()
    (run,) = runs_df(results).itertuples()
    assert run.status == "incomplete"
    judged = scores_df(results, run.run_id)
    judged = judged[judged["scorer"] == "judge"]
    assert len(judged) == 4 and judged["value"].isna().all()
    # the provider recovers: the same command resumes the run and gets every verdict
    with FaultServer(rate=0.0, port=port) as healthy:
        status = main(["run", str(suite), "--results", str(results), "--quiet"])
    assert status == 0
    assert healthy.by_model["judge"] == 4 and healthy.by_model["observer"] == 0
    (again,) = runs_df(results).itertuples()
    assert again.run_id == run.run_id and again.status == "finished"
    judged = scores_df(results, run.run_id)
    judged = judged[judged["scorer"] == "judge"]
    assert len(judged) == 4 and judged["value"].notna().all()

"""A prepare phase that fails still records every model call it made (issue 24 item 5), through a
real HTTP provider whose observer always fails."""

from __future__ import annotations

from omlab.bench.results import calls_df, conversations_df
from omlab.bench.run.runner import RunOptions, run_suite

from .fault_server import FaultServer, fault_suite


def test_every_attempt_of_a_failed_prepare_is_a_model_calls_row(tmp_path):
    suite = tmp_path / "faulty.toml"
    results = tmp_path / "results"
    with FaultServer(rate=1.0, faults=("500",), fault_models=("observer",)) as server:
        # abort: the first failed observation fails the prepare phase
        text = fault_suite(server.url, seeds="[11]").replace('failurePolicy = "continue"', 'failurePolicy = "abort"')
        suite.write_text(text.replace("backoff = 0.05", "backoff = 0.01\nmax_retries = 2"))
        (summary,) = run_suite(suite, RunOptions(results_dir=results, progress=False))
    assert summary.status == "incomplete"
    phases = conversations_df(results, summary.run_id)
    assert phases.loc[phases["phase"] == "prepare", "status"].tolist() == ["failed"]
    calls = calls_df(results, summary.run_id)
    observer = calls[calls["role"] == "observer"]
    assert server.by_model["observer"] > 0
    assert len(observer) > 0 and observer["error"].notna().all()
    # every request the server saw is an attempt of a recorded call (a call cancelled when the
    # cycle failed may count one attempt that never reached the server)
    assert int(observer["attempts"].sum()) >= server.by_model["observer"]
    assert len(observer) >= server.by_model["observer"] // 3

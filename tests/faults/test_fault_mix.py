"""All four roles through a flaky OpenAI-compatible provider: nothing lost, every fault counted."""

from __future__ import annotations

from omlab.bench.results import calls_df, runs_df
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite

from .fault_server import FaultServer, fault_suite
from .message_accounting import account_messages


def test_a_twenty_percent_fault_mix_loses_no_message_and_counts_every_fault(tmp_path):
    with FaultServer(rate=0.2, seed=11, hang_s=1.5, lifetime_s=120) as server:
        suite = tmp_path / "faulty.toml"
        suite.write_text(fault_suite(server.url, timeout_s=0.5))
        results = tmp_path / "results"
        (summary,) = run_suite(suite, RunOptions(results_dir=results, progress=False, concurrency=2))
    assert summary.status == "finished", summary.failures.lines()
    assert runs_df(results)["status"].tolist() == ["finished"]
    # all four roles went through the server, and it injected every kind of fault
    assert {"observer", "reflector", "reader", "judge"} <= set(server.by_model)
    assert server.faults["empty"] > 0 and sum(server.faults.values()) >= 5
    # every request the server saw is an attempt some recorded call made (an attempt can also
    # time out before its request reaches the server)
    calls = calls_df(results, summary.run_id)
    assert int(calls["attempts"].sum()) >= server.requests
    # HTTP faults were retried inside a call; empty and looping replies were asked again
    assert int((calls["attempts"] - 1).clip(lower=0).sum()) >= sum(
        server.faults[k] for k in ("429", "500", "503", "hang", "malformed")
    ) - int(calls["error"].notna().sum())
    accounting = account_messages(suite, results, summary.run_id)
    assert accounting.lost == 0 and accounting.empty_commits == 0
    assert accounting.observed > 0
    assert accounting.messages == accounting.raw + accounting.pending + accounting.observed

"""Per-provider concurrency, RPM and TPM from a suite's ``[run]`` table, enforced in one process as
on a Ray cluster (the same :class:`LimitsState` behind the same interface)."""

from __future__ import annotations

import asyncio

import pytest

from omlab.bench.suite.suite_file import SuiteError, parse_suite
from omlab.llm.cluster_limits import local_limits


def _suite(run: dict):
    data = {
        "suite": {"name": "limits"},
        "dataset": {"kind": "synthetic", "seeds": [1], "target_tokens": 2000, "n_questions": 1},
        "run": run,
    }
    return parse_suite(data, source="limits.toml")


def test_the_run_table_takes_per_provider_concurrency_rpm_and_tpm():
    run = _suite({"provider_concurrency": {"openai": 8}, "rpm": {"openai": 500}, "tpm": {"anthropic": 90_000}}).run
    assert run.limits_options() == {
        "per_provider": {"openai": 8},
        "rpm": {"openai": 500},
        "tpm": {"anthropic": 90_000},
    }
    assert _suite({}).run.limits_options() == {"per_provider": None, "rpm": None, "tpm": None}


@pytest.mark.parametrize(
    ("run", "where"),
    [
        ({"rpm": {"openai": 0}}, "run.rpm.openai"),
        ({"tpm": {"openai": "lots"}}, "run.tpm.openai"),
        ({"rpm": 500}, "run.rpm"),
        ({"provider_concurrency": {"openai/gpt-4o": 4}}, "run.provider_concurrency"),
    ],
)
def test_bad_limits_are_refused_with_the_option_named(run, where):
    with pytest.raises(SuiteError, match=where.replace(".", r"\.")):
        _suite(run)


async def test_local_limits_hold_requests_to_the_per_minute_budget():
    limits = local_limits(default=4, rpm={"openai": 2}, tpm={"anthropic": 1000})
    state = limits.actor.state
    loop = asyncio.get_running_loop()
    for _ in range(2):
        async with limits.slot("openai/gpt-4o-mini", now=loop.time, sleep=asyncio.sleep):
            pass
    assert state.granted["openai"] == 2
    assert state.try_acquire("openai") > 1.0  # the third request of the minute waits ~30 s
    async with limits.slot("anthropic/claude-3-5-haiku", now=loop.time, sleep=asyncio.sleep, tokens=900):
        pass
    assert state.try_acquire("anthropic", tokens=900) > 1.0  # 900 of 1,000 tokens this minute are spent
    assert limits.limit_for("omlab/observer") is None  # offline models are never limited


def test_a_provider_bound_run_goes_through_the_suites_limits(tmp_path, monkeypatch):
    from faults.fault_server import FaultServer, fault_suite

    from omlab.bench.run.options import RunOptions
    from omlab.bench.run.runner import run_suite
    from omlab.llm import cluster_limits

    made, original = [], cluster_limits.local_limits

    def recording_local_limits(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(cluster_limits, "local_limits", recording_local_limits)
    with FaultServer(rate=0.0) as server:
        text = (
            fault_suite(server.url, seeds="[11]") + "\n[run]\nrpm = { openai = 100000 }\ntpm = { openai = 100000000 }\n"
        )
        suite = tmp_path / "limited.toml"
        suite.write_text(text, encoding="utf-8")
        (summary,) = run_suite(suite, RunOptions(results_dir=tmp_path / "results", progress=False))
    assert summary.status == "finished", summary.failures.lines()
    (limits,) = made
    state = limits.actor.state
    assert state.rpm == {"openai": 100_000} and state.tpm == {"openai": 100_000_000}
    assert state.granted["openai"] == server.requests > 0  # every request took a slot from these limits

"""The executor seam without a cluster: options, the pool executor, the task a cluster worker
runs (cache snapshot, column-wise rows) and the limits a cluster shares."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from omlab.bench.results import ResultsCatalog
from omlab.bench.run.executors import PoolExecutor, make_executor
from omlab.bench.run.options import RunOptions
from omlab.bench.run.resume import ResumeState
from omlab.bench.run.runner import _jobs, _settings, run_suite
from omlab.bench.run.tasks import ConversationTask
from omlab.bench.suite.dataset import load_conversations
from omlab.bench.suite.suite_file import expand_grid, load_suite
from omlab.bench.suite.tables import check_address
from omlab.cli.main import main
from omlab.llm.cache import CacheMissError, ResponseCache
from omlab.llm.cache_snapshot import LayeredCache, materialize, merge_entries, snapshot_bytes
from omlab.llm.cluster_limits import LimitsState

from .suites import write_suite


def _square(value: int) -> int:
    return value * value


def test_the_pool_executor_yields_every_result_with_its_index():
    results = dict(PoolExecutor(2).run(_square, [1, 2, 3, 4]))
    assert results == {0: 1, 1: 4, 2: 9, 3: 16}


def test_executor_names_and_addresses_are_checked():
    with pytest.raises(Exception, match="pool, ray"):
        make_executor("dask", workers=1)
    assert check_address("auto") == "auto"
    assert check_address("ray://10.0.0.1:10001") == "ray://10.0.0.1:10001"
    with pytest.raises(ValueError, match="HOST:PORT"):
        check_address("headnode")


def test_cli_rejects_an_unknown_executor_and_a_bad_address(tmp_path, capsys):
    suite = write_suite(tmp_path)
    with pytest.raises(SystemExit):
        main(["run", str(suite), "--executor", "dask"])
    assert "--executor" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", str(suite), "--executor", "ray", "--address", "headnode"])
    assert "--address" in capsys.readouterr().err


# --------------------------------------------------------------------------- the cluster task


def _one_job(suite_path: Path, results: Path, **settings_changes):
    suite = load_suite(suite_path)
    (cell,) = expand_grid(suite)
    options = RunOptions(results_dir=results, progress=False)
    settings = dataclasses.replace(_settings(cell, options), **settings_changes)
    _, conversations = load_conversations(suite.dataset, suite.base_dir)

    class _Fresh:  # a run that has done nothing yet
        def completed(self, phase):
            return set()

        def answered_questions(self):
            return set()

        def scored_questions(self, scorer):
            return set()

        def read_own(self, query):  # no rows yet
            return []

    return _jobs(conversations[:1], settings, _Fresh(), ResumeState())[0]


def _model_calls(records):
    calls = []
    for record in records:
        parts = getattr(record, "parts", (record,))
        for part in parts:
            if getattr(part, "table", None) == "model_calls":
                rows = part.rows
                calls.extend(rows["cached"] if isinstance(rows, dict) else [r["cached"] for r in rows])
    return calls


def test_a_cluster_task_answers_from_the_snapshot_in_strict_mode_and_records_new_entries(tmp_path):
    suite = write_suite(tmp_path, seeds="[11]")
    results = tmp_path / "results"
    run_suite(suite, RunOptions(results_dir=results, progress=False, reuse_prepared=False))  # fills the cache
    cache_file = Path(_one_job(suite, results).settings.cache_path)
    snapshot = snapshot_bytes(cache_file)
    assert snapshot is not None

    strict = _one_job(suite, results, cache_mode="strict", prepared_dir=None)
    result = ConversationTask(cluster=True, cache_snapshot=snapshot)(strict)
    calls = _model_calls(result.records)
    assert calls and all(calls)  # every model call answered by the snapshot: no provider call
    assert not any(getattr(r, "status", "done") == "failed" for r in result.records)

    # An empty snapshot in strict mode misses: the prepare phase fails on the first call.
    empty = ConversationTask(cluster=True, cache_snapshot=None)(strict)
    failed = [r for r in empty.records if getattr(r, "status", None) == "failed"]
    assert failed and CacheMissError.__name__ in (failed[0].error or "")

    # In write mode a worker records what it computed and hands it back; the driver merges it.
    fresh = _one_job(suite, results, cache_mode="write", prepared_dir=None)
    written = ConversationTask(cluster=True, cache_snapshot=None)(fresh)
    assert written.cache_entries
    target = ResponseCache(tmp_path / "merged.sqlite")
    assert merge_entries(target, written.cache_entries) == len(written.cache_entries)
    assert target.size() == ResponseCache(cache_file, mode="read").size()


def test_cluster_task_rows_are_columns_that_the_writer_takes(tmp_path):
    suite = write_suite(tmp_path, seeds="[11]")
    results = tmp_path / "results"
    job = _one_job(suite, results, prepared_dir=None)
    result = ConversationTask(cluster=True)(job)
    tables = [r for r in result.records if hasattr(r, "table")]
    assert tables and all(isinstance(t.rows, dict) for t in tables)
    assert ResultsCatalog(results).run_ids() == []  # the task opened no run file


def test_a_layered_cache_never_writes_its_snapshot(tmp_path):
    source = ResponseCache(tmp_path / "c.sqlite")
    source.size()  # creates the file
    path = materialize(snapshot_bytes(tmp_path / "c.sqlite"), tmp_path)
    before = path.read_bytes()
    layered = LayeredCache(path, "write")
    assert layered.get("nope") is None and layered.take_new_entries() == []
    assert path.read_bytes() == before


# --------------------------------------------------------------------------- shared limits


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_limits_state_caps_concurrency_and_requests_per_minute():
    clock = _Clock()
    state = LimitsState(default=2, rpm={"openai": 3}, clock=clock)
    assert state.try_acquire("openai") == 0 and state.try_acquire("openai") == 0
    assert state.try_acquire("openai") > 0  # two in flight
    state.release("openai")
    assert state.try_acquire("openai") == 0  # third request of the minute
    state.release("openai")
    assert state.try_acquire("openai") == pytest.approx(20.0)  # bucket empty: 1 request per 20 s
    clock.now = 20.0
    assert state.try_acquire("openai") == 0
    assert state.stats()["peak"]["openai"] == 2


def test_limits_state_tokens_per_minute_and_shared_pause():
    clock = _Clock()
    state = LimitsState(default=8, tpm={"anthropic": 600}, clock=clock)
    assert state.try_acquire("anthropic", tokens=500) == 0
    assert state.try_acquire("anthropic", tokens=200) == pytest.approx(10.0)  # 100 missing at 10/s
    assert state.pause("anthropic", 5.0) == 5.0
    assert state.pause("anthropic", 1.0) == 5.0  # a pause only grows
    clock.now = 2.0
    assert state.try_acquire("anthropic") == pytest.approx(3.0)
    clock.now = 5.0
    assert state.remaining_pause("anthropic") == 0
    with pytest.raises(ValueError, match="rpm"):
        LimitsState(rpm={"openai": 0})


def test_limits_state_acquire_waits_for_a_release():
    state = LimitsState(default=1)

    async def scenario() -> list[str]:
        order: list[str] = []
        await state.acquire("openai")

        async def second() -> None:
            await state.acquire("openai")
            order.append("second")

        task = asyncio.create_task(second())
        await asyncio.sleep(0.05)
        order.append("released")
        state.release("openai")
        await task
        return order

    assert asyncio.run(scenario()) == ["released", "second"]

"""Runs and sweeps on a real two-node Ray cluster on this machine, compared with the process pool:
same metrics, same row counts; a killed worker, Ctrl-C and a cut sweep leave nothing duplicated;
strict cache mode makes no model call; 16 workers share one provider rate limit."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from omlab.bench.results import ResultsCatalog, runs_df
from omlab.bench.results.run_config import sweep_id_of
from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite
from omlab.bench.run.sweep import run_sweep

from .suites import stable_metrics, write_suite

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

TABLES = ("events", "steps", "model_calls", "answers", "scores")
GRID = '[grid]\n"observation.bufferTokens" = [0.2, 0.5]\n'


@pytest.fixture(scope="module")
def cluster():
    """Two Ray nodes of one CPU each, started here and stopped at the end (only the processes
    this cluster started: other Ray instances on the machine are left alone)."""
    from ray.cluster_utils import Cluster

    started = None
    for attempt in range(3):
        try:
            started = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
            started.add_node(num_cpus=1)
            started.wait_for_nodes(timeout=120)
            ray.init(address=started.address, log_to_driver=False)
            break
        except Exception:
            # a loaded machine can miss Ray's fixed start-up timeouts: start again
            if started is not None:
                started.shutdown()
            started = None
            if attempt == 2:
                raise
    assert len([node for node in ray.nodes() if node["Alive"]]) == 2
    try:
        yield started
    finally:
        ray.shutdown()
        started.shutdown()


def _counts(results: Path, run_id: str) -> dict[str, int]:
    catalog = ResultsCatalog(results)
    return {table: len(catalog.read_table(table, run_id)) for table in TABLES}


def _pool(tmp_path_factory, name: str, **suite):
    folder = tmp_path_factory.mktemp(name)
    return folder, write_suite(folder, name=name, **suite)


@pytest.fixture(scope="module")
def pool_run(tmp_path_factory):
    folder, suite = _pool(tmp_path_factory, "onray", seeds="[11, 12, 13]")
    (summary,) = run_suite(suite, RunOptions(results_dir=folder / "results", progress=False))
    return stable_metrics(summary.metrics), _counts(folder / "results", summary.run_id)


@pytest.fixture(scope="module")
def pool_sweep(tmp_path_factory):
    folder, suite = _pool(tmp_path_factory, "sweeponray", seeds="[11]", extra=GRID)
    result = run_sweep(suite, RunOptions(results_dir=folder / "results", progress=False))
    results = folder / "results"
    return {s.config_name: (stable_metrics(s.metrics), _counts(results, s.run_id)) for s in result.summaries}


def _on_ray(results: Path, **extra) -> RunOptions:
    return RunOptions(results_dir=results, executor="ray", progress=False, **extra)


def test_a_run_and_a_sweep_on_two_nodes_match_the_pool_and_strict_mode_calls_no_model(
    cluster, tmp_path, pool_run, pool_sweep
):
    suite = write_suite(tmp_path, name="onray", seeds="[11, 12, 13]")
    results = tmp_path / "results"
    (summary,) = run_suite(suite, _on_ray(results))
    assert (stable_metrics(summary.metrics), _counts(results, summary.run_id)) == pool_run

    # The workers' new cache entries reached the driver's cache: a strict rerun from scratch
    # (no prepared memories) is answered entirely from it.
    (strict,) = run_suite(suite, _on_ray(results, cache_mode="strict", auto_resume=False, reuse_prepared=False))
    calls = ResultsCatalog(results).read_table("model_calls", strict.run_id)
    assert len(calls) == pool_run[1]["model_calls"] and calls["cached"].all()
    assert stable_metrics(strict.metrics) == pool_run[0]

    sweep_suite = write_suite(tmp_path, name="sweeponray", seeds="[11]", extra=GRID)
    sweep = run_sweep(sweep_suite, _on_ray(tmp_path / "sweep"))
    got = {s.config_name: (stable_metrics(s.metrics), _counts(tmp_path / "sweep", s.run_id)) for s in sweep.summaries}
    assert got == pool_sweep


def _task_workers() -> list[int]:
    """Ray worker processes running one of our tasks now (Ray titles them ``ray::call``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(b"ray::call"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_worker_killed_mid_task_is_retried_without_duplicate_rows(cluster, tmp_path, pool_run):
    suite = write_suite(tmp_path, name="onray", seeds="[11, 12, 13]")
    results = tmp_path / "results"
    killed: list[int] = []
    stop = threading.Event()

    def kill_one_worker() -> None:
        while not stop.is_set() and not killed:
            for pid in _task_workers():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                break
            time.sleep(0.02)

    killer = threading.Thread(target=kill_one_worker)
    killer.start()
    try:
        (summary,) = run_suite(suite, _on_ray(results))
    finally:
        stop.set()
        killer.join()
    assert killed, "no task was seen running"
    assert (stable_metrics(summary.metrics), _counts(results, summary.run_id)) == pool_run


def test_ctrl_c_stops_the_cluster_work_and_the_run_resumes(cluster, tmp_path, pool_run):
    suite = write_suite(tmp_path, name="onray", seeds="[11, 12, 13]")
    results = tmp_path / "results"
    seen: list[str] = []

    def interrupt(phase: str, question_id: str) -> None:
        seen.append(question_id)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_suite(suite, _on_ray(results, on_question=interrupt))
    assert list(runs_df(results)["status"]) == ["interrupted"]
    (summary,) = run_suite(suite, _on_ray(results))
    assert summary.resumed
    assert (stable_metrics(summary.metrics), _counts(results, summary.run_id)) == pool_run


def test_a_cut_sweep_on_ray_continues_with_one_run_per_cell(cluster, tmp_path, pool_sweep):
    suite = write_suite(tmp_path, name="sweeponray", seeds="[11]", extra=GRID)
    results = tmp_path / "results"
    seen: list[str] = []

    def interrupt(phase: str, question_id: str) -> None:
        seen.append(question_id)
        if len(seen) == 6:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(suite, _on_ray(results, on_question=interrupt))
    assert "interrupted" in set(runs_df(results)["status"])
    result = run_sweep(suite, _on_ray(results))
    assert result.continued
    runs = runs_df(results)
    assert len(runs) == len(pool_sweep) and (runs["status"] == "finished").all()
    assert set(runs["config_json"].map(sweep_id_of)) == {result.sweep_id}
    got = {s.config_name: (stable_metrics(s.metrics), _counts(results, s.run_id)) for s in result.summaries}
    assert got == pool_sweep


# --------------------------------------------------------------------------- shared rate limit

LIMIT = 4


class _Provider(ThreadingHTTPServer):
    """An OpenAI-compatible stub that counts requests in flight and answers 429 (retry-after)
    above ``LIMIT`` and, as a provider's rate limit would, to every 15th request."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.in_flight = self.peak = self.requests = self.refused = 0


class _Handler(BaseHTTPRequestHandler):
    server: _Provider

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        server = self.server
        with server.lock:
            server.in_flight += 1
            server.requests += 1
            server.peak = max(server.peak, server.in_flight)
            refuse = server.in_flight > LIMIT or server.requests % 15 == 0
            server.refused += refuse
        try:
            if refuse:
                self._send(429, {"error": {"message": "slow down", "type": "rate_limit"}}, {"retry-after": "0.2"})
            else:
                time.sleep(0.2)
                body = {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 1,
                    "model": "stub",
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
                    ],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
                }
                self._send(200, body, {})
        finally:
            with server.lock:
                server.in_flight -= 1

    def _send(self, status: int, body: dict, headers: dict[str, str]) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Gate:
    """Holds every worker until all of them are up, so that they really run at once."""

    def __init__(self, expected: int) -> None:
        import asyncio

        self.expected = expected
        self.arrived = 0
        self.open = asyncio.Event()

    async def arrive(self) -> None:
        self.arrived += 1
        if self.arrived >= self.expected:
            self.open.set()
        await self.open.wait()


def _ask(api_base: str, limits, questions: int, gate) -> list[tuple[str, int]]:
    """One worker: ``questions`` calls through a client that shares the cluster's limits."""
    import asyncio

    ray.get(gate.arrive.remote())

    from omlab.llm.client import ModelClient
    from omlab.llm.retry import RetryPolicy
    from omlab.llm.spec import ModelWithRetries
    from omlab.llm.types import ModelRequest

    entry = ModelWithRetries("openai/stub", model_settings={"api_base": api_base, "api_key": "sk-test-dummy"})
    client = ModelClient(retry=RetryPolicy(max_retries=50, base_delay_s=0.05, max_delay_s=1.0), limits=limits)

    async def all_questions() -> list[tuple[str, int]]:
        answers = []
        for index in range(questions):
            messages = [{"role": "user", "content": f"question {index}"}]
            response = await client.complete(ModelRequest(model=[entry], messages=messages))
            answers.append((response.text, response.attempts))
        return answers

    return asyncio.run(all_questions())


def test_sixteen_workers_share_one_provider_limit(cluster):
    from omlab.llm.cluster_limits import start_limits_actor

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    provider = _Provider()
    serving = threading.Thread(target=provider.serve_forever, kwargs={"poll_interval": 0.05})
    serving.start()
    try:
        limits = start_limits_actor(default=LIMIT)
        api_base = f"http://127.0.0.1:{provider.server_address[1]}/v1"
        gate = ray.remote(num_cpus=0)(_Gate).remote(16)
        worker = ray.remote(num_cpus=0, max_retries=0)(_ask)
        answers = ray.get([worker.remote(api_base, limits, 5, gate) for _ in range(16)], timeout=600)
    finally:
        provider.shutdown()
        provider.server_close()
        serving.join()
    flat = [answer for one_worker in answers for answer in one_worker]
    assert len(flat) == 80 and all(text == "ok" for text, _ in flat)  # every question completes
    assert provider.peak <= LIMIT + 1
    assert provider.refused > 0
    assert sum(attempts - 1 for _, attempts in flat) == provider.refused  # every 429 was seen
    assert provider.requests == 80 + provider.refused

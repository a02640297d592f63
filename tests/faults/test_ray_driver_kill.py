"""``kill -9`` of an ``omlab run --executor ray`` driver: no request starts after the kill and no
process of the run is left (the local Ray instance it started: raylet, GCS, agents, workers).

The run goes through the real local fault server (no faults). Once it is under way the server
holds every request unanswered until the workers are all waiting on it (no request for a while),
so a request that reaches the server after the kill was started after the kill, not on its way
before. The driver is killed, then the held requests are answered: a worker still alive would
take its answer and send the next request.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .fault_server import FaultServer, fault_suite
from .process_tree import RunProcesses, command_line

ray = pytest.importorskip("ray")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the run's processes"),
]

ROOT = Path(__file__).resolve().parents[2]
QUIET_S = 1.5
"""No request for this long while the server holds them: every worker is waiting on one."""


def _wait_for(condition, seconds: float, driver: subprocess.Popen, processes: RunProcesses) -> bool:
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up and driver.poll() is None:
        processes.collect()
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_killed_ray_driver_leaves_no_worker_and_no_request(tmp_path):
    suite = tmp_path / "kill.toml"
    with FaultServer(rate=0.0, lifetime_s=900) as server:
        # hours of patience per request: the held requests must not time out and be retried
        text = fault_suite(server.url, seeds="[11, 12, 13]", timeout_s=3_600)
        suite.write_text(text.replace("deadline = 60", "deadline = 3600"))
        command = [sys.executable, "-m", "omlab.cli.main", "run", str(suite), "--quiet"]
        command += ["--results", str(tmp_path / "results"), "--executor", "ray"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        errors = (tmp_path / "driver.err").open("w")
        driver = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        processes = RunProcesses(driver.pid)
        try:
            started = _wait_for(lambda: server.requests >= 5, 600, driver, processes)
            assert started, f"the run never got going: {(tmp_path / 'driver.err').read_text()[-2000:]}"
            server.hold()

            def all_waiting() -> bool:
                return server.held > 0 and time.monotonic() - server.arrivals[-1] > QUIET_S

            assert _wait_for(all_waiting, 120, driver, processes), "the workers never all waited on the server"
            processes.collect()
            os.kill(driver.pid, signal.SIGKILL)
            killed_at = time.monotonic()
            driver.wait()
            server.release()
            processes.wait_gone(60, since=killed_at)
            left = [(pid, command_line(pid)[:80]) for pid, _ in processes.alive()]
            after = server.requests_since(killed_at)
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait()
            processes.kill_all()
            errors.close()
    assert after == 0, f"{after} requests started after the driver was killed"
    assert left == [], "processes of the killed run still running"

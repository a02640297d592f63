"""A Ray task's lifeline to its driver and the guard of a local Ray instance, without Ray: a
worker ends when the driver's process is gone (a recycled pid does not pass), no provider request
leaves once it is gone, and the guard kills exactly the processes of its session."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from omlab.bench.run import ray_lifeline
from omlab.bench.run.ray_guard import kill_session, session_processes, start_guard, stop_guard
from omlab.bench.run.ray_lifeline import DriverLifeline, LifelineLimits

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")

SLEEPER = [sys.executable, "-c", "import sys, time; handle = open(sys.argv[1], 'w'); time.sleep(120)"]


def _lifeline_of(pid: int) -> DriverLifeline:
    lifeline = DriverLifeline.of_this_process()
    return DriverLifeline(pid, ray_lifeline._start_ticks(pid), lifeline.namespace, None)


def _exited(process: subprocess.Popen, seconds: float = 60) -> bool:
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        return False
    return True


def test_a_lifeline_is_alive_until_its_process_is_gone_and_a_recycled_pid_does_not_pass(tmp_path):
    driver = subprocess.Popen([*SLEEPER, str(tmp_path / "out")])
    lifeline = _lifeline_of(driver.pid)
    assert lifeline.local() and lifeline.alive()
    recycled = DriverLifeline(driver.pid, (lifeline.started or 0) + 1, lifeline.namespace, None)
    assert not recycled.alive()
    driver.kill()
    driver.wait()
    assert not lifeline.alive()


def test_a_lifeline_off_this_machine_asks_for_the_job_and_trusts_it_when_unknown():
    elsewhere = DriverLifeline(1, 1, "another-machine/1", "01000000")
    assert not elsewhere.local()
    assert elsewhere.alive()  # no Ray connection here: in doubt the driver is alive


def test_a_watched_worker_ends_when_its_driver_dies(tmp_path):
    driver = subprocess.Popen([*SLEEPER, str(tmp_path / "out")])
    code = (
        "import sys, time\n"
        "from omlab.bench.run.ray_lifeline import DriverLifeline\n"
        "lifeline = DriverLifeline(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], None)\n"
        "lifeline.watch()\n"
        "print('watching', flush=True)\n"
        "time.sleep(120)\n"
    )
    lifeline = _lifeline_of(driver.pid)
    args = [str(driver.pid), str(lifeline.started), str(lifeline.namespace)]
    worker = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True)
    try:
        assert worker.stdout is not None and worker.stdout.readline().strip() == "watching"
        assert worker.poll() is None
    finally:
        driver.kill()
        driver.wait()
    assert _exited(worker), "the worker outlived its driver"
    assert worker.returncode == 1


class _Limits:
    def __init__(self) -> None:
        self.granted = 0

    def limit_for(self, model: str) -> int:
        return 1

    async def _enter(self) -> None:
        self.granted += 1

    def slot(self, model: str, **options):
        limits = self

        class Slot:
            async def __aenter__(self) -> None:
                await limits._enter()

            async def __aexit__(self, *exc: object) -> None:
                return None

        return Slot()


def test_no_request_leaves_once_the_driver_is_dead(tmp_path, monkeypatch):
    import asyncio

    ended = []
    monkeypatch.setattr(ray_lifeline, "_end_worker", lambda: ended.append(True) or (_ for _ in ()).throw(SystemExit(1)))
    driver = subprocess.Popen([*SLEEPER, str(tmp_path / "out")])
    lifeline = _lifeline_of(driver.pid)
    limits = LifelineLimits(_Limits(), lifeline)
    sent = []

    async def request() -> None:
        async with limits.slot("openai/gpt-4o-mini", now=time.monotonic, sleep=asyncio.sleep):
            sent.append(True)

    asyncio.run(request())
    assert sent == [True] and ended == []
    driver.kill()
    driver.wait()
    with pytest.raises(SystemExit):
        asyncio.run(request())
    assert sent == [True] and ended == [True]


def test_the_guard_kills_the_processes_of_its_session_when_the_pipe_closes(tmp_path):
    session = tmp_path / "session_2026-01-01_00-00-00_1"
    (session / "logs").mkdir(parents=True)
    ours = subprocess.Popen([*SLEEPER, str(session / "logs" / "worker.out")])
    other = subprocess.Popen([*SLEEPER, str(tmp_path / "elsewhere.out")])
    try:
        deadline = time.monotonic() + 60
        while ours.pid not in session_processes(str(session)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert session_processes(str(session)) == [ours.pid]
        guard = start_guard(str(session))
        assert guard is not None and guard.poll() is None
        stop_guard(guard)  # what the driver's death does to the pipe
        assert _exited(ours), "the guard left a process of its session"
        assert other.poll() is None
    finally:
        for process in (ours, other):
            if process.poll() is None:
                process.kill()
                process.wait()


def test_the_guard_refuses_a_directory_that_is_not_a_ray_session(tmp_path):
    with pytest.raises(ValueError, match="not a Ray session directory"):
        kill_session(str(tmp_path))


DRIVER_THAT_STOPS_ITS_GUARD = """
import sys
from omlab.bench.run.ray_guard import start_guard, stop_guard
session = sys.argv[1]
log = open(session + "/logs/python-core-driver.log", "w")  # Ray's driver keeps its logs open like this
stop_guard(start_guard(session))
print("driver still here")
"""


def test_the_guard_spares_the_driver_that_stops_it(tmp_path):
    """A driver still holds its own log files in the session after ray.shutdown(): stopping the
    guard at the end of a normal run must not kill the driver with its instance."""
    session = tmp_path / "session_2026-01-01_00-00-00_2"
    (session / "logs").mkdir(parents=True)
    driver = subprocess.run(
        [sys.executable, "-c", DRIVER_THAT_STOPS_ITS_GUARD, str(session)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (driver.returncode, driver.stdout.strip()) == (0, "driver still here"), driver.stderr[-2000:]

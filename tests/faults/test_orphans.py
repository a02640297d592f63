"""``kill -9`` of the omlab process alone leaves no worker running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench_runner.suites import write_suite

ROOT = Path(__file__).resolve().parents[2]


def _children() -> dict[int, int]:
    """pid -> parent pid of every process we can see."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            found[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return found


def _descendants(root: int) -> set[int]:
    parents = _children()
    out, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - out
        out |= frontier
    return out


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the workers")
def test_workers_exit_when_the_omlab_process_is_killed(tmp_path):
    suite = write_suite(tmp_path, name="orphans", seeds="[31, 32, 33, 34, 35, 36]")
    suite.write_text(suite.read_text().replace("target_tokens = 4000", "target_tokens = 40000"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "omlab.cli.main", "run", str(suite), "--results", str(tmp_path / "r")]
    process = subprocess.Popen([*command, "--workers", "2", "--quiet"], env=env, stderr=subprocess.DEVNULL)
    try:
        workers: set[int] = set()
        give_up = time.monotonic() + 60
        while time.monotonic() < give_up and process.poll() is None:
            workers = _descendants(process.pid)
            if len(workers) >= 3:  # the fork server and two workers (and maybe the resource tracker)
                break
            time.sleep(0.1)
        assert len(workers) >= 3 and process.poll() is None, "the run never started its workers"
        time.sleep(1.0)  # let them get to work
        workers = _descendants(process.pid)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        time.sleep(5)
        survivors = [pid for pid in workers if _running(pid)]
        for pid in survivors:
            os.kill(pid, signal.SIGKILL)
        assert survivors == []
    finally:
        if process.poll() is None:
            process.kill()
        for pid in _descendants(process.pid):
            os.kill(pid, signal.SIGKILL)

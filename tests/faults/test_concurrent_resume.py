"""Two automatic resumes of the same killed run: the second one starts its own run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from bench_runner.suites import write_suite

from omlab.bench.results import RunLockedError, runs_df
from omlab.bench.results.layout import run_path
from omlab.bench.run.options import RunOptions
from omlab.bench.run.resume import ResumeError
from omlab.bench.run.runner import run_suite

HOLD = """
import sys, duckdb
sys.stdin.readline()  # "go"
connection = duckdb.connect(sys.argv[1])  # read-write: what a resuming writer holds
print("held", flush=True)
sys.stdin.read()  # until the test closes our stdin
"""


class Stop(Exception):
    pass


def _killed_run(folder: Path) -> tuple[Path, Path, str]:
    suite = write_suite(folder, name="twice", seeds="[11]")
    results = folder / "results"

    def stop(phase: str, question_id: str) -> None:
        if phase == "answer":
            raise Stop("killed half-way")

    with pytest.raises(Stop):
        run_suite(suite, RunOptions(results_dir=results, workers=1, progress=False, on_question=stop))
    (run_id,) = runs_df(results)["run_id"]
    return suite, results, run_id


def test_a_second_auto_resume_of_a_run_being_resumed_starts_its_own_run(tmp_path, capsys, monkeypatch):
    suite, results, killed = _killed_run(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(run_path(results, killed))], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    from omlab.bench.run import runner

    find = runner.find_resumable_run

    def racing_find(*args, **kwargs):
        """Both processes chose the killed run; the other one opens it first."""
        found = find(*args, **kwargs)
        assert found == killed
        holder.stdin.write(b"go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == b"held"
        return found

    try:
        monkeypatch.setattr(runner, "find_resumable_run", racing_find)
        (summary,) = run_suite(suite, RunOptions(results_dir=results, workers=1, progress=False))
        monkeypatch.setattr(runner, "find_resumable_run", find)
        assert not summary.resumed and summary.run_id != killed and summary.status == "finished"
        assert f"run {killed} is being resumed by another process; starting a new run" in capsys.readouterr().err
        # naming the run explicitly never falls back to a new run
        with pytest.raises((ResumeError, RunLockedError), match="another process|held by a writer"):
            run_suite(suite, RunOptions(results_dir=results, workers=1, progress=False, resume=killed))
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    # once free, the killed run is still the one an auto-resume picks up
    (resumed,) = run_suite(suite, RunOptions(results_dir=results, workers=1, progress=False))
    assert resumed.resumed and resumed.run_id == killed

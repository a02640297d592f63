"""A sweep cut short and run again continues: finished cells reused, one run per cell, same numbers."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from omlab.bench.results import metrics_df, runs_df
from omlab.bench.results.run_config import sweep_id_of
from omlab.bench.run.options import RunOptions
from omlab.bench.run.sweep import latest_sweep_id, run_sweep

from .suites import stable_metrics, write_suite

GRID = '[grid]\n"observation.bufferTokens" = [0.2, 0.5]\n"observation.blockAfter" = [1.2, 2.0]\n'


def _suite(folder: Path) -> Path:
    return write_suite(folder, name="resweep", seeds="[11]", extra=GRID, prices=False)


def _options(results: Path, **extra) -> RunOptions:
    return RunOptions(results_dir=results, workers=1, progress=False, **extra)


def _by_cell(results: Path, run_ids: list[str]) -> dict[str, pd.DataFrame]:
    runs = runs_df(results).set_index("run_id")
    return {runs.loc[r, "config_name"]: stable_metrics(metrics_df(results, r)) for r in run_ids}


@pytest.fixture(scope="module")
def reference_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reference")
    run_sweep(_suite(folder), _options(folder / "results"))
    return folder


@pytest.fixture(scope="module")
def reference(reference_folder):
    results = reference_folder / "results"
    runs = runs_df(results)
    first = runs.sort_values("run_id").groupby("config_name").head(1)
    return _by_cell(results, list(first["run_id"]))


def test_an_interrupted_sweep_reuses_its_finished_cells_and_resumes_the_cut_one(tmp_path, reference):
    results = tmp_path / "results"
    suite = _suite(tmp_path)
    answered = []

    def stop_in_the_third_cell(phase: str, question_id: str) -> None:
        answered.append(question_id)
        if len(runs_df(results)) == 3 and len(answered) % 8 == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(suite, _options(results, on_question=stop_in_the_third_cell))
    before = runs_df(results)
    assert sorted(before["status"]) == ["finished", "finished", "interrupted"]
    result = run_sweep(suite, _options(results))
    assert result.continued and len(result.reused) == 2
    runs = runs_df(results)
    assert len(runs) == 4 and (runs["status"] == "finished").all()
    assert set(runs["config_json"].map(sweep_id_of)) == {result.sweep_id}
    assert runs["config_name"].is_unique
    cut = before.loc[before["status"] == "interrupted", "run_id"].item()
    assert cut in {s.run_id for s in result.summaries if s.resumed}
    assert _by_cell(results, [s.run_id for s in result.summaries]).keys() == reference.keys()
    for cell, metrics in _by_cell(results, [s.run_id for s in result.summaries]).items():
        assert metrics == reference[cell]


def test_a_finished_sweep_is_shown_again_by_id_and_run_again_as_a_new_sweep(reference_folder):
    results = reference_folder / "results"
    suite = _suite(reference_folder)
    (first,) = {sweep_id_of(c) for c in runs_df(results)["config_json"]}
    again = run_sweep(suite, _options(results, sweep_id=first))
    assert again.continued and again.sweep_id == first and len(again.reused) == 4
    assert len(runs_df(results)) == 4  # nothing ran
    fresh = run_sweep(suite, _options(results, cache_mode="strict"))  # complete: a new sweep (from the cache)
    assert not fresh.continued and fresh.sweep_id != first and not fresh.reused
    assert latest_sweep_id(results, "resweep") == fresh.sweep_id
    assert len(runs_df(results)) == 8


@pytest.mark.slow
@pytest.mark.parametrize(("executor", "workers"), [("pool", 1), ("pool", 2), ("ray", 2)])
def test_killing_the_driver_at_random_points_then_rerunning_gives_one_run_per_cell(
    tmp_path, reference, executor, workers
):
    """The whole process group gets SIGKILL at random moments (on Ray: the driver and the local
    Ray instance it started); reruns of the same command finish the sweep with exactly one
    finished run per cell and the clean sweep's numbers."""
    suite = _suite(tmp_path)
    results = tmp_path / "results"
    command = [sys.executable, "-m", "omlab.cli.main", "sweep", str(suite), "--results", str(results)]
    command += ["--workers", str(workers), "--executor", executor, "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    # Kill moments are drawn within the time an uncut sweep takes on this machine, so that a fast
    # machine still gets cut (fixed 1-6 s windows let a quick CI runner finish before any kill).
    timing_folder = tmp_path / "timing"
    timing_folder.mkdir()
    timing = [*command[:4], str(_suite(timing_folder)), "--results", str(timing_folder / "results"), *command[7:]]
    assert command[7:] == ["--workers", str(workers), "--executor", executor, "--quiet"]
    started = time.monotonic()
    timed = subprocess.run(timing, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert timed.returncode == 0, f"the uncut sweep exited {timed.returncode}:\n{timed.stderr[-3000:]}"
    uncut = time.monotonic() - started
    chance = random.Random(1234 + workers + (100 if executor == "ray" else 0))
    kills = 0
    for attempt in range(12):
        process = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.PIPE, text=True)
        share = chance.uniform(0.15, 0.6) if attempt == 0 else chance.uniform(0.15, 1.0)
        deadline = time.monotonic() + share * uncut
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            kills += 1
            continue
        assert process.returncode == 0, process.stdout.read()
        break
    else:
        process = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert process.returncode == 0, process.stderr
    assert kills >= 1
    sweep_id = latest_sweep_id(results, "resweep")
    runs = runs_df(results)
    of_sweep = runs[runs["config_json"].map(sweep_id_of) == sweep_id]
    finished = of_sweep[of_sweep["status"] == "finished"]
    assert sorted(finished["config_name"]) == sorted(reference)  # one finished run per cell
    (csv,) = (results / "reports" / "sweeps").glob(f"resweep-{sweep_id}.csv")
    assert len(pd.read_csv(csv)) == 4
    for cell, metrics in _by_cell(results, list(finished["run_id"])).items():
        assert metrics == reference[cell]

"""DataFrame getters read only what ``omlab runs`` calls readable, and one run once (issue 24 item 7)."""

from __future__ import annotations

import shutil
import warnings

import pytest
from bench_runner.suites import write_suite

from omlab.bench.results import ResultsCatalog, answers_df, calls_df, runs_df
from omlab.cli.main import main

from .corrupt_files import copy_results, plant_corrupt_runs


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("healthy")
    suite = write_suite(folder, name="tiny", seeds="[11]")
    results = folder / "results"
    assert main(["run", str(suite), "--results", str(results), "--workers", "1", "--quiet"]) == 0
    (run_id,) = runs_df(results)["run_id"]
    return results, run_id


def _read_with_warnings(read):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = read()
    return frame, " ".join(str(w.message) for w in caught)


def test_a_copy_of_a_run_file_is_read_once_with_a_warning(healthy, tmp_path):
    results, run_id = healthy
    copy = copy_results(results, tmp_path / "results")
    shutil.copyfile(copy / "runs" / f"{run_id}.duckdb", copy / "runs" / "backup-copy.duckdb")
    expected = answers_df(results)
    answers, said = _read_with_warnings(lambda: answers_df(copy))
    assert len(answers) == len(expected) and answers["question_id"].is_unique
    assert "backup-copy.duckdb" in said and run_id in said
    calls, _ = _read_with_warnings(lambda: calls_df(copy))
    assert len(calls) == len(calls_df(results))
    assert runs_df(copy)["run_id"].tolist() == [run_id]


def test_a_file_omlab_runs_calls_unreadable_adds_no_rows(healthy, tmp_path):
    results, run_id = healthy
    copy = copy_results(results, tmp_path / "results")
    planted = plant_corrupt_runs(copy / "runs", copy / "runs" / f"{run_id}.duckdb")
    unreadable = {u.path.name for u in ResultsCatalog(copy).unreadable_runs()}
    assert unreadable == {p.name for p in planted.values()}
    for getter in (answers_df, calls_df, runs_df):
        frame, said = _read_with_warnings(lambda getter=getter: getter(copy))
        assert len(frame) == len(getter(results)), getter.__name__
        assert all(path.name in said for path in planted.values()), getter.__name__

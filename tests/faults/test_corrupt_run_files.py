"""One damaged run file never breaks the results folder: run, sweep, report and the catalog skip
it with a warning naming it, and ``omlab report`` on the damaged run says what is wrong."""

from __future__ import annotations

import warnings

import pytest
from bench_runner.suites import write_suite

from omlab.bench.results import ResultsCatalog, runs_df
from omlab.cli.main import main

from .corrupt_files import KINDS, copy_results, plant_corrupt_runs


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    """A results folder with one finished run of the tiny suite."""
    folder = tmp_path_factory.mktemp("healthy")
    suite = write_suite(folder, name="tiny", seeds="[11]")
    results = folder / "results"
    assert main(["run", str(suite), "--results", str(results), "--workers", "1", "--quiet"]) == 0
    (run_id,) = runs_df(results)["run_id"]
    return suite, results, run_id


@pytest.fixture
def damaged(healthy, tmp_path):
    suite, results, run_id = healthy
    copy = copy_results(results, tmp_path / "results")
    planted = plant_corrupt_runs(copy / "runs", copy / "runs" / f"{run_id}.duckdb")
    return suite, copy, run_id, planted


def _named_every_damaged_file(text: str, planted) -> bool:
    return all(path.name in text for path in planted.values())


def test_the_catalog_lists_unreadable_runs_with_their_problem(damaged):
    _, results, run_id, planted = damaged
    catalog = ResultsCatalog(results)
    unreadable = {u.path.name: u.problem for u in catalog.unreadable_runs()}
    assert set(unreadable) == {p.name for p in planted.values()}
    assert all(problem for problem in unreadable.values())
    assert "not a DuckDB" in unreadable["zzzz-empty.duckdb"] or "empty" in unreadable["zzzz-empty.duckdb"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runs = runs_df(results)
    assert list(runs["run_id"]) == [run_id]
    assert _named_every_damaged_file(" ".join(str(w.message) for w in caught), planted)


def test_run_auto_resume_skips_damaged_files(damaged, capsys):
    suite, results, _, planted = damaged
    assert main(["run", str(suite), "--results", str(results), "--workers", "1", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert _named_every_damaged_file(err, planted)
    assert "Traceback" not in err
    assert len(runs_df(results)) == 2  # the healthy run was finished: a new one was made


def test_sweep_skips_damaged_files(damaged, capsys):
    suite, results, _, planted = damaged
    grid = suite.parent / "grid.toml"
    grid.write_text(suite.read_text() + '\n[grid]\n"observation.bufferTokens" = [0.2, 0.5]\n')
    assert main(["sweep", str(grid), "--results", str(results), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert _named_every_damaged_file(err, planted)


def test_report_of_a_healthy_run_and_of_latest_skip_damaged_files(damaged, tmp_path, capsys):
    _, results, run_id, planted = damaged
    for target in (run_id, "latest"):
        out = tmp_path / f"report-{target}"
        assert main(["report", target, "--results", str(results), "--out", str(out)]) == 0, target
    assert _named_every_damaged_file(capsys.readouterr().err, planted)


@pytest.mark.parametrize("kind", KINDS)
def test_report_of_a_damaged_run_says_what_is_wrong(damaged, tmp_path, capsys, kind):
    _, results, _, planted = damaged
    run = planted[kind].stem
    assert main(["report", run, "--results", str(results), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert planted[kind].name in err and "no run" not in err
    assert "Traceback" not in err

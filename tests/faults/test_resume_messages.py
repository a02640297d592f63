"""``--resume`` of a damaged or newer run file says what is wrong with it (issue 24 item 10)."""

from __future__ import annotations

import shutil

import duckdb
import pytest
from bench_runner.suites import write_suite

from omlab.bench.results import runs_df
from omlab.bench.results.schema import SCHEMA_VERSION_TABLE
from omlab.cli.main import main


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    folder = tmp_path_factory.mktemp("finished")
    suite = write_suite(folder, name="tiny", seeds="[11]")
    results = folder / "results"
    assert main(["run", str(suite), "--results", str(results), "--workers", "1", "--quiet"]) == 0
    (run_id,) = runs_df(results)["run_id"]
    return suite, results, run_id


def _damage(path, kind: str) -> None:
    if kind == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    else:
        with duckdb.connect(str(path)) as connection:
            connection.execute(f"INSERT INTO {SCHEMA_VERSION_TABLE} (version) VALUES (99)")


@pytest.mark.parametrize(("kind", "said"), [("truncated", "truncated"), ("future-schema", "upgrade omlab")])
def test_resume_of_a_damaged_or_newer_run_says_what_is_wrong(finished, tmp_path, capsys, kind, said):
    suite, results, run_id = finished
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    _damage(copy / "runs" / f"{run_id}.duckdb", kind)
    status = main(["run", str(suite), "--results", str(copy), "--resume", run_id, "--quiet"])
    err = capsys.readouterr().err
    assert status == 2
    assert "no header row" not in err
    assert said in err and f"{run_id}.duckdb" in err
    assert "Traceback" not in err

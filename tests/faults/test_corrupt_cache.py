"""A damaged response cache is found, named, and removable (issue 24 item 6)."""

from __future__ import annotations

import pytest

from omlab.bench.run.runner import RunOptions, run_suite
from omlab.bench.suite.run_settings import CACHE_FILE, cache_dir
from omlab.cli.main import main
from omlab.llm.cache import ResponseCache
from omlab.llm.cache_damage import CorruptCacheError

DAMAGE = {
    "not a database": b"this is not a database at all\n" * 200,
    "truncated": None,  # a real cache cut to its first page and a half
}


def _damaged_cache(results, kind: str):
    path = cache_dir(results) / CACHE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if DAMAGE[kind] is not None:
        path.write_bytes(DAMAGE[kind])
        return path
    with ResponseCache(path) as cache:
        cache.size()
    data = path.read_bytes()
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * (len(data) + 2048))
    return path


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_cache_info_names_the_damaged_file_and_clear_removes_it(tmp_path, capsys, kind):
    results = tmp_path / "results"
    path = _damaged_cache(results, kind)
    assert main(["cache", "info", "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "damaged" in err and "omlab cache clear --responses" in err
    assert "Traceback" not in err
    assert main(["cache", "clear", "--responses", "--results", str(results)]) == 0
    assert "removed the damaged response cache" in capsys.readouterr().out
    assert not path.exists()
    assert main(["cache", "info", "--results", str(results)]) == 0


def test_a_run_over_a_damaged_cache_stops_before_any_call_naming_the_file(tmp_path):
    from bench_runner.suites import write_suite

    results = tmp_path / "results"
    path = _damaged_cache(results, "not a database")
    suite = write_suite(tmp_path, extra='[cache]\nmode = "write"\n')
    with pytest.raises(CorruptCacheError, match="damaged") as caught:
        run_suite(suite, RunOptions(results_dir=results, progress=False, workers=1))
    assert str(path) in str(caught.value)
    assert not (results / "runs").exists() or not any((results / "runs").iterdir())

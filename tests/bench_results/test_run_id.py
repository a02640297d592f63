"""Run ids."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from omlab.bench.results.run_id import RUN_ID_PATTERN, check_run_id, new_run_id, run_id_time


def test_format_and_time_order():
    start = datetime(2024, 5, 1, 11, 30, 15, tzinfo=timezone(timedelta(hours=2)))
    assert new_run_id(start, suffix="3fa9c2") == "20240501T093015-3fa9c2"
    assert run_id_time("20240501T093015-3fa9c2") == datetime(2024, 5, 1, 9, 30, 15, tzinfo=UTC)
    assert run_id_time("my-run") is None
    ids = [new_run_id(start + timedelta(seconds=s)) for s in (0, 1, 60, 3600)]
    assert ids == sorted(ids) and all(RUN_ID_PATTERN.fullmatch(i) for i in ids)
    assert len({new_run_id() for _ in range(50)}) == 50


def test_bad_input():
    with pytest.raises(ValueError, match="naive"):
        new_run_id(datetime(2024, 1, 1))
    with pytest.raises(ValueError, match="6 lowercase hex"):
        new_run_id(suffix="XYZ")
    for bad in ("", ".hidden", "a/b", "a b", "x" * 201):
        with pytest.raises(ValueError, match="cannot name a run file"):
            check_run_id(bad)
    assert check_run_id("sweep_01.bt-0.2") == "sweep_01.bt-0.2"

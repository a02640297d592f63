"""Several runs written by several processes at once while this process keeps reading them."""

from __future__ import annotations

import multiprocessing
import time

from omlab.bench.results import ResultsCatalog, answers_df, events_df, runs_df

from .samples import write_run

RUNS = ("20240501T000000-000001", "20240501T000000-000002", "20240501T000000-000003")
BATCHES, BATCH_SIZE, ANSWERS = 12, 250, 40


def test_parallel_writers_and_a_reader(tmp_path):
    context = multiprocessing.get_context("spawn")
    halfway = {run_id: context.Event() for run_id in RUNS}
    go = context.Event()
    writers = [
        context.Process(
            target=write_run, args=(str(tmp_path), run_id, BATCHES, BATCH_SIZE, ANSWERS, halfway[run_id], go)
        )
        for run_id in RUNS
    ]
    for process in writers:
        process.start()
    catalog = ResultsCatalog(tmp_path)
    last_seen = dict.fromkeys(RUNS, 0)
    try:
        for run_id in RUNS:
            assert halfway[run_id].wait(60), f"{run_id} never got halfway"
        # All three runs are open in their processes, half written and flushed.
        runs = runs_df(catalog)
        assert sorted(runs["run_id"]) == list(RUNS) and set(runs["status"]) == {"started"}
        assert all(catalog.is_live(run_id) for run_id in RUNS)
        half = BATCHES // 2 * BATCH_SIZE
        assert events_df(catalog).groupby("run_id").size().to_dict() == dict.fromkeys(RUNS, half)
        go.set()

        deadline = time.monotonic() + 120
        while any(process.is_alive() for process in writers):
            assert time.monotonic() < deadline, "writers did not finish within 120 s"
            events = events_df(catalog)
            answers = answers_df(catalog)
            for run_id, group in events.groupby("run_id"):
                assert group["seq"].is_unique  # no row read twice
                assert last_seen[run_id] <= len(group) <= BATCHES * BATCH_SIZE  # progress only grows
                last_seen[run_id] = len(group)
            assert (answers.groupby("run_id").size() <= ANSWERS).all()
            time.sleep(0.02)
        for process in writers:
            process.join(30)
            assert process.exitcode == 0
    finally:
        go.set()
        for process in writers:
            if process.is_alive():
                process.kill()

    runs = runs_df(tmp_path)
    assert sorted(runs["run_id"]) == list(RUNS)
    assert runs["status"].tolist() == ["finished"] * 3
    events = events_df(tmp_path)
    assert events.groupby("run_id").size().to_dict() == dict.fromkeys(RUNS, BATCHES * BATCH_SIZE)
    assert answers_df(tmp_path).groupby("run_id").size().to_dict() == dict.fromkeys(RUNS, ANSWERS)
    assert not list((tmp_path / "runs").glob("*.parts"))

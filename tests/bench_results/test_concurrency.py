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
    writers = [
        context.Process(target=write_run, args=(str(tmp_path), run_id, BATCHES, BATCH_SIZE, ANSWERS, 0.03))
        for run_id in RUNS
    ]
    for process in writers:
        process.start()
    catalog = ResultsCatalog(tmp_path)
    reads, saw_live_progress = 0, False
    last_seen = dict.fromkeys(RUNS, 0)
    deadline = time.monotonic() + 120
    try:
        while any(process.is_alive() for process in writers):
            assert time.monotonic() < deadline, "writers did not finish within 120 s"
            runs = runs_df(catalog)
            events = events_df(catalog)
            answers = answers_df(catalog)
            reads += 1
            assert set(runs["run_id"]) <= set(RUNS)
            assert runs["run_id"].is_unique
            statuses = dict(zip(runs["run_id"], runs["status"], strict=True))
            for run_id, group in events.groupby("run_id"):
                assert group["seq"].is_unique  # no row read twice
                assert last_seen[run_id] <= len(group) <= BATCHES * BATCH_SIZE  # progress only grows
                last_seen[run_id] = len(group)
                # each getter reads at its own moment: a run may have started since runs_df
                if statuses.get(run_id) == "started" and 0 < len(group) < BATCHES * BATCH_SIZE:
                    saw_live_progress = True
            assert (answers.groupby("run_id").size() <= ANSWERS).all()
            time.sleep(0.05)
        for process in writers:
            process.join(30)
            assert process.exitcode == 0
    finally:
        for process in writers:
            if process.is_alive():
                process.kill()

    assert reads >= 3
    assert saw_live_progress, "never saw a running run's partial progress"
    runs = runs_df(tmp_path)
    assert sorted(runs["run_id"]) == list(RUNS)
    assert runs["status"].tolist() == ["finished"] * 3
    events = events_df(tmp_path)
    assert events.groupby("run_id").size().to_dict() == dict.fromkeys(RUNS, BATCHES * BATCH_SIZE)
    assert answers_df(tmp_path).groupby("run_id").size().to_dict() == dict.fromkeys(RUNS, ANSWERS)
    assert not list((tmp_path / "runs").glob("*.parts"))

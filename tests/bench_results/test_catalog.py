"""ResultsCatalog: listing, filters, and reading runs that a writer still holds."""

from __future__ import annotations

import multiprocessing

import duckdb
import pytest

from omlab.bench.results import ResultsCatalog, ResultsSchemaError, answers_df, events_df, runs_df
from omlab.bench.results.layout import parts_path, run_path

from .samples import event_rows, open_writer, write_and_wait

RUN_A = "20240501T093000-aaaaaa"
RUN_B = "20240502T093000-bbbbbb"


def _two_runs(tmp_path):
    for run_id, conversations in ((RUN_B, ("c1",)), (RUN_A, ("c1", "c2"))):
        with open_writer(tmp_path, run_id) as writer:
            for conversation in conversations:
                writer.add_events(event_rows(4, conversation))


def test_lists_runs_sorted_and_reads_them_all(tmp_path):
    assert ResultsCatalog(tmp_path).run_ids() == []
    _two_runs(tmp_path)
    catalog = ResultsCatalog(tmp_path)
    assert catalog.run_ids() == [RUN_A, RUN_B]
    events = catalog.read_table("events")
    assert events.groupby("run_id").size().to_dict() == {RUN_A: 8, RUN_B: 4}
    assert list(zip(events["run_id"], events["conversation_id"])) == (
        [(RUN_A, "c1")] * 4 + [(RUN_A, "c2")] * 4 + [(RUN_B, "c1")] * 4
    )
    assert not catalog.is_live(RUN_A)


def test_filters(tmp_path):
    _two_runs(tmp_path)
    catalog = ResultsCatalog(tmp_path)
    assert len(catalog.read_table("events", RUN_A, {"conversation_id": "c2"})) == 4
    assert len(catalog.read_table("events", [RUN_A, RUN_B], {"conversation_id": ["c1", "c2"]})) == 12
    assert len(catalog.read_table("events", None, {"conversation_id": None})) == 12
    assert len(catalog.read_table("events", None, {"conversation_id": []})) == 0
    only_ends = catalog.read_table("events", RUN_B, {"type": "data-om-observation-end"})
    assert only_ends["seq"].tolist() == [1, 3]
    with pytest.raises(ValueError, match="unknown column 'colour'"):
        catalog.read_table("events", where={"colour": "red"})
    with pytest.raises(ValueError, match="unknown results table 'event'"):
        catalog.read_table("event")
    with pytest.raises(ValueError, match="no run 'nope'"):
        catalog.read_table("events", "nope")


def test_a_running_run_in_this_process_is_read_from_its_snapshot(tmp_path):
    with open_writer(tmp_path, RUN_A, flush_rows=10, flush_seconds=None) as writer:
        writer.add_events(event_rows(25))  # 25 pending >= flush_rows: flushed as one batch
        catalog = ResultsCatalog(tmp_path)
        assert catalog.is_live(RUN_A)
        assert len(events_df(catalog)) == 25
        writer.add_events(event_rows(3, start=25))
        assert len(events_df(catalog)) == 25
        writer.flush()
        assert len(events_df(catalog)) == 28
        assert runs_df(catalog).iloc[0].status == "started"
    assert runs_df(tmp_path).iloc[0].status == "finished"


def test_reading_a_run_while_another_process_writes_it(tmp_path):
    context = multiprocessing.get_context("spawn")
    flushed, proceed, done = context.Event(), context.Event(), context.Event()
    child = context.Process(target=write_and_wait, args=(str(tmp_path), RUN_A, flushed, proceed, done))
    child.start()
    try:
        assert flushed.wait(60), "the writer process never flushed"
        with pytest.raises(duckdb.IOException, match="lock"):  # what the catalog works around
            duckdb.connect(str(run_path(tmp_path, RUN_A)), read_only=True)
        catalog = ResultsCatalog(tmp_path)
        assert catalog.is_live(RUN_A)
        assert len(events_df(catalog)) == 30  # flushed rows only; 5 are still in its buffer
        assert runs_df(catalog)["status"].tolist() == ["started"]
        assert answers_df(catalog)["hypothesis"].tolist() == ["first"]

        proceed.set()
        assert done.wait(60)
        assert answers_df(catalog)["hypothesis"].tolist() == ["second"]  # replaced, not duplicated
        assert len(events_df(catalog)) == 35
        proceed.set()
        child.join(60)
        assert child.exitcode == 0
    finally:
        if child.is_alive():
            child.kill()
    assert not ResultsCatalog(tmp_path).is_live(RUN_A)
    assert runs_df(tmp_path)["status"].tolist() == ["finished"]
    assert len(events_df(tmp_path)) == 35
    assert not parts_path(tmp_path, RUN_A).exists()


def test_a_file_that_is_not_a_results_file_is_skipped_with_a_warning(tmp_path):
    _two_runs(tmp_path)
    duckdb.connect(str(run_path(tmp_path, "20240503T000000-cccccc"))).close()  # an empty database
    with pytest.warns(UserWarning, match="not an omlab results file"):
        events = ResultsCatalog(tmp_path).read_table("events")
    assert len(events) == 12
    with pytest.raises(ResultsSchemaError):
        from omlab.bench.results.connect import check_schema_version, open_run_file

        path = run_path(tmp_path, "20240503T000000-cccccc")
        connection = open_run_file(path, read_only=True)
        try:
            check_schema_version(connection, path)
        finally:
            connection.close()


def test_a_file_that_never_becomes_a_database_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr("omlab.bench.results.catalog._RETRY_PAUSE_S", 0.0)
    _two_runs(tmp_path)
    run_path(tmp_path, "20240504T000000-dddddd").write_bytes(b"")  # what a writer's first instant looks like
    with pytest.warns(UserWarning, match="not a readable DuckDB file"):
        assert len(ResultsCatalog(tmp_path).read_table("events")) == 12

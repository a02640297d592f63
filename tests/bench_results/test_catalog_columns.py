"""ResultsCatalog.read_table(columns=...): a few columns of a table, from a file or a live snapshot."""

from __future__ import annotations

import pandas as pd
import pytest

from omlab.bench.results import ResultsCatalog
from omlab.bench.results.catalog import TableRead

from .samples import event_rows, open_writer

RUN_A = "20240501T093000-aaaaaa"
RUN_B = "20240502T093000-bbbbbb"
WANTED = ["payload", "seq", "conversation_id"]
IN_TABLE_ORDER = ["conversation_id", "seq", "payload"]


def _two_runs(tmp_path):
    for run_id, conversations in ((RUN_B, ("c1",)), (RUN_A, ("c1", "c2"))):
        with open_writer(tmp_path, run_id) as writer:
            for conversation in conversations:
                writer.add_events(event_rows(4, conversation))


def test_the_columns_asked_in_the_tables_order_with_the_full_reads_values(tmp_path):
    _two_runs(tmp_path)
    catalog = ResultsCatalog(tmp_path)
    for run_id in (RUN_A, [RUN_A, RUN_B]):  # one file; several, concatenated and sorted again
        full = catalog.read_table("events", run_id, {"type": "data-om-observation-end"})
        some = catalog.read_table("events", run_id, {"type": "data-om-observation-end"}, columns=WANTED)
        assert list(some.columns) == IN_TABLE_ORDER
        pd.testing.assert_frame_equal(some, full[IN_TABLE_ORDER])
    assert list(catalog.read_table("events", RUN_A, {"seq": -1}, columns=WANTED).columns) == IN_TABLE_ORDER
    with pytest.raises(ValueError, match=r"unknown events column\(s\) colour \(columns=\)"):
        catalog.read_table("events", RUN_A, columns=["seq", "colour"])


def test_the_columns_asked_from_a_run_a_writer_holds(tmp_path):
    with open_writer(tmp_path, RUN_A, flush_rows=10, flush_seconds=None) as writer:
        writer.add_events(event_rows(12))
        catalog = ResultsCatalog(tmp_path)
        assert catalog.is_live(RUN_A)
        full = catalog.read_table("events", RUN_A)
        some = catalog.read_table("events", RUN_A, columns=WANTED)
        assert len(some) == 12
        pd.testing.assert_frame_equal(some, full[IN_TABLE_ORDER])


READS = {
    "ends": TableRead("events", {"type": "data-om-observation-end"}, ("seq", "payload")),
    "c2": TableRead("events", {"conversation_id": "c2"}),
    "runs": TableRead("runs", columns=("run_id", "status")),
    "none": TableRead("scores", {"scorer": "judge"}, ("question_id", "value")),
}


def _each_alone(catalog, run_id):
    return {name: catalog.read_table(read.table, run_id, read.where, read.columns) for name, read in READS.items()}


def test_several_reads_of_a_run_at_once_are_the_reads_one_by_one(tmp_path):
    _two_runs(tmp_path)
    catalog = ResultsCatalog(tmp_path)
    together = catalog.read_tables(RUN_A, READS)
    assert list(together) == list(READS)
    assert len(together["c2"]) == 4 and len(together["none"]) == 0
    for name, frame in _each_alone(catalog, RUN_A).items():
        pd.testing.assert_frame_equal(together[name], frame)


def test_several_reads_of_a_run_a_writer_holds(tmp_path):
    with open_writer(tmp_path, RUN_A, flush_rows=10, flush_seconds=None) as writer:
        writer.add_events(event_rows(12, "c2"))
        catalog = ResultsCatalog(tmp_path)
        assert catalog.is_live(RUN_A)
        together = catalog.read_tables(RUN_A, READS)
        assert len(together["c2"]) == 12
        for name, frame in _each_alone(catalog, RUN_A).items():
            pd.testing.assert_frame_equal(together[name], frame)

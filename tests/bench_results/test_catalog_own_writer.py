"""A catalog given an open writer reads that run through the writer's own connection: every row
written so far, the same frames a reader of the closed file gets."""

from __future__ import annotations

import pandas as pd

from omlab.bench.results import ResultsCatalog

from .samples import event_rows, open_writer

RUN = "20240501T093000-abcdef"


def test_a_catalog_reads_an_open_writers_rows_through_its_connection(tmp_path):
    writer = open_writer(tmp_path, RUN, flush_seconds=None)
    writer.add_events(event_rows(40))
    writer.add_answers([{"conversation_id": "c1", "question_id": "q1", "hypothesis": "Lisbon"}])
    own = ResultsCatalog(tmp_path, writers=[writer])
    events_open = own.read_table("events", RUN)
    answers_open = own.read_table("answers", RUN)
    assert len(events_open) == 40 and list(answers_open["hypothesis"]) == ["Lisbon"]  # not flushed before
    writer.close()
    closed = ResultsCatalog(tmp_path)
    pd.testing.assert_frame_equal(events_open, closed.read_table("events", RUN))
    pd.testing.assert_frame_equal(answers_open, closed.read_table("answers", RUN))
    # once closed, the catalog reads the file again
    assert len(own.read_table("events", RUN)) == 40

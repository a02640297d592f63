"""Run summaries: written when a writer closes a run, used to list runs while the file is unchanged."""

from __future__ import annotations

import json
import os

from omlab.bench.report.run_index import delete_run
from omlab.bench.results import RunWriter
from omlab.bench.results.browse import run_list
from omlab.bench.results.layout import run_path, summary_path
from omlab.bench.results.summary import read_summary
from tests.viz_site.runs import write_run

RUN = "20250301T090000-aaaaaa"


def test_a_closed_run_has_a_summary_of_its_header_and_whole_run_metrics(tmp_path):
    write_run(tmp_path, RUN, suite="quick", metrics={"accuracy": 0.5, "cost_usd": 0.25})
    summary = read_summary(tmp_path, RUN)
    assert summary is not None
    assert summary["runs"]["suite"] == "quick" and summary["runs"]["status"] == "finished"
    assert summary["metrics"] == {"accuracy": 0.5, "cost_usd": 0.25}


def test_the_list_reads_a_valid_summary_instead_of_the_run_file(tmp_path):
    write_run(tmp_path, RUN, suite="quick", metrics={"accuracy": 0.5})
    path = summary_path(tmp_path, RUN)
    summary = json.loads(path.read_text())
    summary["runs"]["suite"] = "from-the-summary"
    path.write_text(json.dumps(summary))
    assert run_list(tmp_path)["suite"].tolist() == ["from-the-summary"]


def test_a_summary_older_than_its_run_file_is_ignored(tmp_path):
    write_run(tmp_path, RUN, suite="quick", metrics={"accuracy": 0.5})
    path = summary_path(tmp_path, RUN)
    summary = json.loads(path.read_text())
    summary["runs"]["suite"] = "stale"
    path.write_text(json.dumps(summary))
    stat = run_path(tmp_path, RUN).stat()
    os.utime(run_path(tmp_path, RUN), ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # the file changed
    assert read_summary(tmp_path, RUN) is None
    assert run_list(tmp_path)["suite"].tolist() == ["quick"]


def test_a_resumed_run_is_summarised_again_when_its_writer_closes(tmp_path):
    write_run(tmp_path, RUN, suite="quick", metrics={"accuracy": 0.5})
    with RunWriter.open_existing(tmp_path, RUN) as writer:
        writer.add_metrics([{"name": "accuracy", "value": 0.75}])
        assert read_summary(tmp_path, RUN) is None  # the writer holds the file: no summary holds
        assert run_list(tmp_path)["m.accuracy"].tolist() == [0.5]  # the live snapshot so far
    assert read_summary(tmp_path, RUN)["metrics"]["accuracy"] == 0.75


def test_deleting_a_run_deletes_its_summary(tmp_path):
    write_run(tmp_path, RUN)
    assert summary_path(tmp_path, RUN).is_file()
    delete_run(tmp_path, RUN)
    assert not summary_path(tmp_path, RUN).exists()

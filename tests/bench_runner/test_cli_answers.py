"""The CLI answers questions, not only writes files: headline numbers, quiet event lists, runs."""

from __future__ import annotations

import pytest

from omlab.bench.results import runs_df
from omlab.cli.main import build_parser, main

from .suites import write_suite


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-answers")
    results = folder / "results"
    assert main(["run", str(write_suite(folder)), "--results", str(results), "--workers", "1", "--quiet"]) == 0
    (run_id,) = runs_df(results)["run_id"]
    return results, run_id


def test_report_prints_the_headline_numbers(run, capsys):
    results, run_id = run
    assert main(["report", "latest", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert f"run {run_id}" in out and "accuracy " in out and "%" in out and "report: " in out


def test_events_list_hides_status_parts_unless_asked(run, capsys):
    results, run_id = run
    assert main(["events", "list", run_id, "--results", str(results), "--limit", "0"]) == 0
    out = capsys.readouterr().out
    assert "data-om-status" in out.splitlines()[0]  # only the note saying they are hidden
    assert "data-om-status" not in "\n".join(out.splitlines()[1:])
    assert main(["events", "list", run_id, "--results", str(results), "--limit", "0", "--all"]) == 0
    assert "data-om-status" in "\n".join(capsys.readouterr().out.splitlines()[1:])


def test_unknown_event_type_lists_the_valid_ones(run, capsys):
    results, run_id = run
    assert main(["events", "list", run_id, "--results", str(results), "--type", "data-om-nope"]) == 2
    err = capsys.readouterr().err
    assert "data-om-nope" in err and "data-om-activation" in err


def test_runs_lists_tags_and_deletes(run, capsys, tmp_path):
    results, run_id = run
    (results / "runs" / "20990101T000000-broken.duckdb").write_bytes(b"not a database")
    assert main(["runs", "tag", run_id, "baseline", "--results", str(results)]) == 0
    assert "baseline" in capsys.readouterr().out
    assert main(["runs", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "20990101T000000-broken" in lines[1] and "unreadable" in lines[1]  # newest first
    ours = next(line for line in lines if run_id in line)
    assert "finished" in ours and "baseline" in ours and "accuracy" in ours
    assert main(["runs", "delete", "20990101T000000-broken", "--results", str(results)]) == 0
    assert (results / "runs" / "20990101T000000-broken.duckdb").exists()  # no --yes: nothing deleted
    assert main(["runs", "delete", "20990101T000000-broken", "--yes", "--results", str(results)]) == 0
    assert not (results / "runs" / "20990101T000000-broken.duckdb").exists()


def test_every_subcommand_help_says_what_it_does_with_an_example():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    missing = [name for name, sub in commands.items() if "example" not in (sub.epilog or "")]
    assert not missing, f"--help without an example: {missing}"

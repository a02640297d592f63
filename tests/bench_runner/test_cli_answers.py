"""The CLI answers questions, not only writes files: headline numbers, quiet event lists, runs."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from omlab.bench.report.run_index import runs_overview
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


def _all_parsers(parser, path=("omlab",)):
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _all_parsers(sub, (*path, name))


def test_every_help_at_every_level_ends_with_examples():
    missing = [name for name, parser in _all_parsers(build_parser()) if "example" not in (parser.epilog or "")]
    assert not missing, f"--help without an example: {missing}"


def test_calls_list_into_a_closed_pipe_prints_no_traceback(run):
    results, run_id = run
    # `omlab calls list RUN | head`: the reader goes away before the listing is written
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; from omlab.cli.main import main; sys.exit(main())"]
        + ["calls", "list", run_id, "--results", str(results), "--limit", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait() == 0
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


def test_calls_list_refuses_an_unknown_role_and_lists_the_valid_ones(run, capsys):
    results, run_id = run
    with pytest.raises(SystemExit) as exit_info:
        main(["calls", "list", run_id, "--results", str(results), "--role", "jduge"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "jduge" in error and all(role in error for role in ("observer", "reflector", "actor", "judge"))


def test_report_of_an_unknown_run_points_to_omlab_runs(run, capsys):
    results, _ = run
    assert main(["report", "nosuchrun", "--results", str(results)]) == 2
    error = capsys.readouterr().err
    assert "nosuchrun" in error and "omlab runs" in error


@pytest.fixture(scope="module")
def run_and_sweep(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-runs-and-sweep")
    results = folder / "results"
    assert main(["run", str(write_suite(folder)), "--results", str(results), "--workers", "1", "--quiet"]) == 0
    grid = '[grid]\n"observation.bufferTokens" = [0.2, 0.5]\n'
    sweep_suite = write_suite(folder, name="tinysweep", seeds="[11]", extra=grid)
    assert main(["sweep", str(sweep_suite), "--results", str(results), "--workers", "1", "--quiet"]) == 0
    return results


def test_runs_prints_the_whole_headline_with_sweep_start_and_duration(run_and_sweep, capsys):
    assert main(["runs", "--results", str(run_and_sweep)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split()
    assert {"sweep", "started", "duration"} <= set(header), header
    assert len(lines) == 4  # header, two sweep cells, one run
    for line in lines[1:]:
        assert "…" not in line and "..." not in line, line
        assert "compression" in line, line  # the headline's last number is never cut
    sweep_ids = {line.split()[header.index("sweep")] for line in lines[1:] if "tinysweep" in line}
    assert len(sweep_ids) == 1 and "-" not in sweep_ids, sweep_ids


def test_runs_filters_by_suite_status_tag_and_sweep(run_and_sweep, capsys):
    results = str(run_and_sweep)
    overview = runs_overview(results)
    single = overview.loc[overview["suite"] == "tiny", "run_id"].item()
    sweep = overview.loc[overview["suite"] == "tinysweep", "sweep"].iloc[0]
    assert main(["runs", "tag", single, "baseline", "--results", results]) == 0
    capsys.readouterr()

    def listed(*flags):
        assert main(["runs", "--results", results, *flags]) == 0
        return capsys.readouterr().out.splitlines()[1:]

    assert len(listed("--suite", "tinysweep")) == 2
    assert [line.split()[0] for line in listed("--tag", "baseline")] == [single]
    assert len(listed("--sweep", sweep)) == 2
    assert len(listed("--status", "finished")) == 3
    assert main(["runs", "--results", results, "--status", "incomplete"]) == 0
    assert capsys.readouterr().out == "no runs match these filters\n"

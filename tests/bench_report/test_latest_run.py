"""``latest`` (``omlab report latest`` and every command taking a run) is the latest run that is not a
sweep cell: after the quickstart (a suite run, then a sweep) it is the suite run, and the command
says which run it picked and which sweep it passed over."""

from __future__ import annotations

from omlab.cli.main import main
from tests.viz_site.runs import write_run


def _quickstart_like(folder):
    write_run(folder, "20250301T090000-single", suite="quickstart", metrics={"accuracy": 0.5})
    for index in range(3):
        write_run(
            folder,
            f"20250301T09010{index}-cell0{index}",
            suite="sweep-buffering",
            config_name=f"bufferTokens=0.{index + 1}",
            config={"sweep_id": "sweep-buffering-abc", "engine": {"observation": {"bufferTokens": 0.1}}},
            metrics={"accuracy": 0.75},
        )


def test_report_latest_after_a_sweep_picks_the_latest_run_that_is_not_a_sweep_cell(tmp_path, capsys):
    _quickstart_like(tmp_path)
    assert main(["report", "latest", "--results", str(tmp_path), "--out", str(tmp_path / "r")]) == 0
    captured = capsys.readouterr()
    assert "run 20250301T090000-single · quickstart [default]" in captured.out
    # which run `latest` meant, and the sweep it passed over, on stderr (stdout stays the report's)
    assert "latest: run 20250301T090000-single (quickstart [default]" in captured.err
    assert "sweep-buffering-abc" in captured.err and "3 newer sweep cells" in captured.err


def test_latest_of_a_folder_holding_only_sweep_cells_is_the_latest_cell(tmp_path, capsys):
    for index in range(2):
        write_run(tmp_path, f"20250301T09010{index}-cell0{index}", config={"sweep_id": "s1"})
    assert main(["calls", "list", "latest", "--results", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "latest: run 20250301T090101-cell01" in err and "sweep s1" in err

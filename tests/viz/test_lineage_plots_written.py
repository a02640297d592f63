"""The fact-survival curve and the loss-cause bars reach the outputs users open: a run's report
plots and a sweep's plots (one curve and one bar group per cell)."""

from __future__ import annotations

from bench_runner.suites import write_suite

from omlab.bench.results import lineage_df, runs_df
from omlab.cli.main import main

GRID = '[grid]\n"observation.bufferTokens" = [0.2, 0.5]\n"reflection.observationTokens" = [500, 3000]\n'
PNG = b"\x89PNG\r\n\x1a\n"


def test_a_reports_plots_include_fact_survival_and_loss_causes(tmp_path, capsys):
    results = tmp_path / "results"
    suite = write_suite(tmp_path, name="lineageplots", seeds="[11]")
    assert main(["run", str(suite), "--results", str(results), "--quiet", "--workers", "1"]) == 0
    (run_id,) = runs_df(results)["run_id"]
    assert len(lineage_df(results, run_id))  # the synthetic run has evidence to follow
    assert main(["report", run_id, "--results", str(results), "--plots"]) == 0
    written = {p.name for p in (results / "reports" / run_id).glob("*.png")}
    survival = [name for name in written if name.endswith("-fact-survival.png")]
    causes = [name for name in written if name.endswith("-loss-causes.png")]
    assert survival and causes
    assert (results / "reports" / run_id / survival[0]).read_bytes()[:8] == PNG


def test_a_sweeps_plots_show_what_each_setting_costs_in_memory(tmp_path, capsys):
    results = tmp_path / "results"
    suite = write_suite(tmp_path, name="lineagesweep", seeds="[11]", extra=GRID, prices=False)
    assert main(["sweep", str(suite), "--results", str(results), "--quiet", "--workers", "1", "--plots"]) == 0
    out = capsys.readouterr().out
    plots = [line.split("plot: ", 1)[1] for line in out.splitlines() if line.startswith("plot: ")]
    assert any(p.endswith("-fact-survival.png") for p in plots)
    assert any(p.endswith("-loss-causes.png") for p in plots)

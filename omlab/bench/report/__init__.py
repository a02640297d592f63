"""Reading finished runs: the metrics table, the run index and the written report.

Readers of :mod:`omlab.bench.results` (with :mod:`omlab.bench.scoring`); the run layer calls
:mod:`.metrics` when a cell ends. Nothing here imports the suite or run layers, nor draws: the
report's plots come from :mod:`omlab.viz.run_report`.
"""

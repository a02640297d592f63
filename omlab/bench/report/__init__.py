"""Reading finished runs: the metrics table, the run index and the written report.

Pure readers of :mod:`omlab.bench.results` (with :mod:`omlab.bench.scoring` and
:mod:`omlab.bench.lineage`); the run layer calls :mod:`.metrics` when a cell ends. Nothing here
imports the suite or run layers.
"""

"""The run layer: running a parsed suite's cells, from the first model call to the last row.

The runner and the sweep, the executors (process pool, Ray), the three conversation phases
(replay/prepare, answer, judge), resuming, progress. It reads what :mod:`omlab.bench.suite` parsed
and writes through :mod:`omlab.bench.results`; nothing below it imports it.
"""

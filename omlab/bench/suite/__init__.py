"""The suite layer: everything that happens to a suite before the first model call.

Loading the TOML file and checking each table (:mod:`.suite_file`, :mod:`.tables`, :mod:`.retry`),
expanding the grid into cells, resolving a cell into the picklable :class:`.run_settings.RunSettings`
the run layer reads, and the preflight checks against the dataset (:mod:`.preflight`). Nothing
here imports :mod:`omlab.bench.run`.
"""

#!/usr/bin/env bash
# The main job, offline, on a fresh machine: create .venv if needed, install omlab, run the bundled
# quickstart suite (synthetic conversations through Observational Memory with the built-in offline
# models) and write its DuckDB results, report and plots under results/.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
# an editable install installs no data files: put omlab's Jupyter settings where Jupyter reads them
.venv/bin/python -m omlab.viz.jupyter_settings >/dev/null
export LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 MPLBACKEND=Agg
RESULTS=${OMLAB_RESULTS:-results}
.venv/bin/omlab run benchmarks/quickstart.toml --results "$RESULTS"
.venv/bin/omlab report latest --plots --results "$RESULTS"
# a 3x3 bufferTokens x blockAfter sweep: heatmaps and cost vs accuracy (Pareto front)
.venv/bin/omlab sweep benchmarks/sweep_buffering.toml --plots --results "$RESULTS"
echo "done: results in $RESULTS/runs/, report and plots in $RESULTS/reports/"

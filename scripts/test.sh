#!/usr/bin/env bash
# Set up a virtualenv (if needed) and run the whole test suite: the fast tests, then the slow ones.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev,ray,browser,postgres]'
# an editable install installs no data files: put omlab's Jupyter settings where Jupyter reads them
.venv/bin/python -m omlab.viz.jupyter_settings >/dev/null
# the browser tests drive Debian's Chromium (playwright's own download needs the network), with an
# emoji font so the observation priorities (🔴/🟡/🟢) render in screenshots instead of boxes
if command -v apt-get >/dev/null && { [ ! -x /usr/bin/chromium ] || ! dpkg -s fonts-noto-color-emoji >/dev/null 2>&1; }; then
    apt-get update -q && apt-get install -y -q chromium fonts-noto-color-emoji
fi
# the Mastra import tests start Debian's PostgreSQL server themselves and record a database with
# Mastra's own storage code, which scripts/record_mastra_db.sh installs with npm
if command -v apt-get >/dev/null && { ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || ! command -v npm >/dev/null; }; then
    apt-get update -q && apt-get install -y -q postgresql npm
fi
export LITELLM_LOCAL_MODEL_COST_MAP=True HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 MPLBACKEND=Agg
# lint and format are part of the test run: a finding fails it
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -q -m "not slow"
# exit code 5 means "no slow tests collected", which is not a failure
.venv/bin/python -m pytest -q -m slow || [ $? -eq 5 ]

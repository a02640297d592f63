"""Test-wide setup: nothing reaches the network, nothing writes to the real $HOME."""

from __future__ import annotations

import os
import tempfile

_home = tempfile.mkdtemp(prefix="omlab-test-home-")
for key, value in {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": os.path.join(_home, "mpl"),
    "JUPYTER_CONFIG_DIR": os.path.join(_home, "jupyter"),
    "JUPYTER_DATA_DIR": os.path.join(_home, "jupyter-data"),
    "IPYTHONDIR": os.path.join(_home, "ipython"),
}.items():
    os.environ.setdefault(key, value)
os.environ["HOME"] = _home


def pytest_report_header(config):
    """The versions a failure report should mention (read without importing litellm)."""
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for package in ("omlab", "litellm", "duckdb", "pandas"):
        try:
            parts.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            parts.append(f"{package} (not installed)")
    return "versions: " + ", ".join(parts)

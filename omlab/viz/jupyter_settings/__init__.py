"""omlab's two Jupyter settings, and where Jupyter reads them.

* ``lab/omlab.json``: JupyterLab saves widget state with the notebook, so a saved notebook
  reopens with its views drawn.
* ``server/omlab.json``: Jupyter Server loads :mod:`omlab.viz.saved_views`, the save hook that
  keeps a view's static copy when its widget model is gone (after a kernel restart).

A wheel install (``pip install omlab``) puts both in place as the package's data files. An editable
install (``pip install -e .``) installs no data files, so a checkout's environment would have
neither: ``python -m omlab.viz.jupyter_settings`` copies them there (``scripts/quickstart.sh`` and
``scripts/test.sh`` do it after installing).
"""

from __future__ import annotations

import argparse
import sys
from importlib.resources import files
from pathlib import Path

DESTINATIONS = {
    "lab/omlab.json": Path("share/jupyter/lab/settings/overrides.d/omlab.json"),
    "server/omlab.json": Path("etc/jupyter/jupyter_server_config.d/omlab.json"),
}
"""Each settings file of this package and where, under an environment's prefix, Jupyter reads it."""


def settings_text(name: str) -> str:
    """The text of one of omlab's Jupyter settings files (a key of :data:`DESTINATIONS`)."""
    return files(__package__).joinpath(*name.split("/")).read_text(encoding="utf-8")


def install_settings(prefix: str | Path | None = None) -> list[Path]:
    """Write omlab's Jupyter settings under ``prefix`` (default: this Python's ``sys.prefix``),
    replacing older copies; returns the files written."""
    root = Path(sys.prefix if prefix is None else prefix)
    written = []
    for name, destination in DESTINATIONS.items():
        path = root / destination
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(settings_text(name), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """``python -m omlab.viz.jupyter_settings [--prefix DIR]``: install the settings, print where."""
    parser = argparse.ArgumentParser(
        prog="python -m omlab.viz.jupyter_settings",
        description="Put omlab's JupyterLab and Jupyter Server settings where Jupyter reads them "
        "(needed after an editable install, which installs no data files).",
        epilog="example:\n  .venv/bin/python -m omlab.viz.jupyter_settings",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--prefix", help="the environment's prefix (default: this Python's sys.prefix)")
    args = parser.parse_args(argv)
    for path in install_settings(args.prefix):
        print(f"wrote {path}")
    return 0

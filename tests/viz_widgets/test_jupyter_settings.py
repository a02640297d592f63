"""omlab's Jupyter settings reach Jupyter however omlab was installed: a wheel puts them in place as
data files, an editable install (which installs none) through ``python -m omlab.viz.jupyter_settings``,
which the set-up scripts run."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from omlab.viz.jupyter_settings import DESTINATIONS, install_settings, settings_text

REPO = Path(__file__).resolve().parents[2]


def test_install_writes_both_settings_where_jupyter_reads_them(tmp_path):
    written = install_settings(tmp_path)
    assert sorted(written) == sorted(tmp_path / destination for destination in DESTINATIONS.values())
    lab = json.loads((tmp_path / "share/jupyter/lab/settings/overrides.d/omlab.json").read_text())
    assert lab["@jupyter-widgets/jupyterlab-manager:plugin"]["saveState"] is True
    server = json.loads((tmp_path / "etc/jupyter/jupyter_server_config.d/omlab.json").read_text())
    assert server["ServerApp"]["jpserver_extensions"] == {"omlab.viz.saved_views": True}


def test_install_replaces_an_older_copy(tmp_path):
    stale = tmp_path / DESTINATIONS["server/omlab.json"]
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    install_settings(tmp_path)
    install_settings(tmp_path)
    assert stale.read_text() == settings_text("server/omlab.json")


def test_the_command_prints_what_it_wrote(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "omlab.viz.jupyter_settings", "--prefix", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.count("wrote ") == 2
    assert str(tmp_path / DESTINATIONS["lab/omlab.json"]) in done.stdout


def test_the_wheel_installs_the_same_files_as_the_command():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    data_files = {folder: paths for folder, paths in project["data-files"].items()}
    for name, destination in DESTINATIONS.items():
        source = f"omlab/viz/jupyter_settings/{name}"
        assert data_files[str(destination.parent)] == [source]
        assert destination.name == Path(source).name
    assert sorted(project["package-data"]["omlab.viz.jupyter_settings"]) == ["lab/*.json", "server/*.json"]


def test_this_environment_has_the_settings():
    # the README's set-up scripts install omlab editable and then run the command: without it a
    # reopened notebook says "model not found" in every view (issue found on a clean clone)
    for name, destination in DESTINATIONS.items():
        path = Path(sys.prefix) / destination
        assert path.is_file(), f"{path} is missing: run {sys.executable} -m omlab.viz.jupyter_settings"
        assert path.read_text() == settings_text(name)

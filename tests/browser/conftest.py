"""A JupyterLab server on a free local port and Debian's Chromium driven by playwright-python.

Everything the server and its kernels write (home, Jupyter and IPython folders, matplotlib config,
lab settings, results) lives in the test's temporary folder; the notebooks run from a copy, so the
repository's notebooks stay clean. Playwright's own browser download needs the network, so the
system Chromium is used (``OMLAB_CHROMIUM`` overrides its path); the tests skip when either is
missing. ``scripts/test.sh`` installs both.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("OMLAB_CHROMIUM", "/usr/bin/chromium"))
TOKEN = "omlab-browser-test"
VIEWPORT = {"width": 1440, "height": 900}
SCREENS_COPY = Path(os.environ.get("OMLAB_SCREENS", "/tmp/omlab-screens"))
"""Where screenshots are copied for people who read the run (they are saved under tmp first)."""

LAB_SETTINGS = {
    # every cell rendered, so the tests can find outputs without scrolling them into view first
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    # no news pop-up over the outputs in screenshots
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
}


@dataclass
class Lab:
    """A running JupyterLab: its URL, its notebooks folder and where screenshots go."""

    url: str
    notebooks: Path
    screens: Path
    log: Path

    def open_url(self, notebook: str) -> str:
        return f"{self.url}/lab/tree/{notebook}?token={TOKEN}"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def lab_environment(root: Path) -> dict[str, str]:
    """The server's (and its kernels') environment: every folder they write in ``root``."""
    kernel = root / "jupyter-path" / "kernels" / "python3"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (omlab browser tests)",
                "language": "python",
            }
        )
    )
    settings = root / "lab-settings"
    for name, values in LAB_SETTINGS.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    (root / "home").mkdir()
    # omlab's server settings (its save hook), where installing omlab puts them
    server_config = root / "jupyter-config" / "jupyter_server_config.d"
    server_config.mkdir(parents=True)
    shutil.copy(REPO / "omlab" / "viz" / "jupyter_settings" / "server" / "omlab.json", server_config / "omlab.json")
    return {
        **os.environ,
        "HOME": str(root / "home"),
        "JUPYTER_PATH": str(root / "jupyter-path"),
        "JUPYTER_DATA_DIR": str(root / "jupyter-data"),
        "JUPYTER_CONFIG_DIR": str(root / "jupyter-config"),
        "JUPYTER_RUNTIME_DIR": str(root / "jupyter-runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(root / "lab-workspaces"),
        "IPYTHONDIR": str(root / "ipython"),
        "MPLCONFIGDIR": str(root / "mpl"),
        "MPLBACKEND": "Agg",
        "OMLAB_RESULTS": str(root / "results"),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }


def copy_project(root: Path) -> Path:
    """The notebooks copied to ``root/notebooks``, beside links to what they read."""
    notebooks = root / "notebooks"
    shutil.copytree(REPO / "notebooks", notebooks)
    for name in ("benchmarks", "datasets"):
        (root / name).symlink_to(REPO / name)
    return notebooks


def app_settings(root: Path) -> Path:
    """The lab's package-defaults folder holding omlab's own defaults file, as an install puts it."""
    folder = root / "lab-app-settings"
    (folder / "overrides.d").mkdir(parents=True)
    shutil.copy(
        REPO / "omlab" / "viz" / "jupyter_settings" / "lab" / "omlab.json", folder / "overrides.d" / "omlab.json"
    )
    return folder


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]'")
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    root = tmp_path_factory.mktemp("lab")
    notebooks = copy_project(root)
    screens = root / "screens"
    screens.mkdir()
    port = free_port()
    log = root / "lab.log"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={notebooks}",
        f"--LabApp.app_settings_dir={app_settings(root)}",
        "--expose-app-in-browser",
    ]
    with log.open("w") as output:
        server = subprocess.Popen(command, env=lab_environment(root), stdout=output, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_server(server, f"{url}/api/status?token={TOKEN}", log)
        yield Lab(url=url, notebooks=notebooks, screens=screens, log=log)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def wait_for_server(server: subprocess.Popen, status_url: str, log: Path, attempts: int = 240) -> None:
    for _ in range(attempts):
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(status_url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"JupyterLab did not answer at {status_url}:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    try:
        yield context.new_page()
    finally:
        context.close()

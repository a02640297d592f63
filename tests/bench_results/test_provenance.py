"""Provenance: versions without importing litellm, git state, host."""

from __future__ import annotations

import subprocess
import sys

import pytest

from omlab.bench.results.provenance import collect_provenance, git_state, package_version


def test_versions_host_and_no_litellm_import():
    code = (
        "import sys; from omlab.bench.results.provenance import collect_provenance; "
        "p = collect_provenance(); print('litellm' in sys.modules, p['litellm_version'], p['host'] is not None)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "1.110.2", "True"]
    assert package_version("no-such-package-omlab") is None


def test_git_state_of_a_fresh_repository(tmp_path):
    git = ["git", "-C", str(tmp_path), "-c", "user.email=t@t", "-c", "user.name=t"]
    try:
        subprocess.run([*git, "init", "-q"], check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available")
    (tmp_path / "f.txt").write_text("one")
    subprocess.run([*git, "add", "f.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "c"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert git_state(tmp_path) == (head, False)
    (tmp_path / "new.txt").write_text("untracked files do not make it dirty")
    assert git_state(tmp_path) == (head, False)
    (tmp_path / "f.txt").write_text("two")
    assert git_state(tmp_path) == (head, True)
    assert collect_provenance(tmp_path)["git_commit"] == head


def test_outside_a_repository(tmp_path):
    assert git_state(tmp_path) == (None, None)
    provenance = collect_provenance(tmp_path)
    assert provenance["git_commit"] is None and provenance["git_dirty"] is None
    assert set(provenance) == {
        "omlab_version",
        "litellm_version",
        "duckdb_version",
        "python_version",
        "git_commit",
        "git_dirty",
        "host",
    }

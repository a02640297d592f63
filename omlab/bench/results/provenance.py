"""Where a run came from: package versions, the git commit, the machine.

Versions come from installed package metadata (``importlib.metadata``), so litellm is never
imported just to ask its version. ``git_dirty`` means tracked files differ from the commit
(``git status --porcelain --untracked-files=no`` prints something), the same notion as
``git describe --dirty``; untracked files do not count.
"""

from __future__ import annotations

import platform
import socket
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

_GIT_TIMEOUT_S = 5.0
# The checkout omlab runs from: omlab/bench/results/provenance.py -> repository root.
_OMLAB_SOURCE_ROOT = Path(__file__).resolve().parents[3]


def package_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None when it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def git_state(repo_dir: str | Path) -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the git checkout containing ``repo_dir``; ``(None, None)`` when
    git is missing, ``repo_dir`` is not in a checkout, or git fails."""
    commit = _git(repo_dir, "rev-parse", "HEAD")
    if commit is None:
        return None, None
    status = _git(repo_dir, "status", "--porcelain", "--untracked-files=no")
    return commit, None if status is None else bool(status)


def collect_provenance(repo_dir: str | Path | None = None) -> dict[str, Any]:
    """The provenance columns of a ``runs`` row.

    Args:
        repo_dir: The checkout whose commit to record; default: the one omlab is imported from.

    Returns:
        ``omlab_version``, ``litellm_version``, ``duckdb_version``, ``python_version``,
        ``git_commit``, ``git_dirty`` and ``host`` (any of them None when unknown).
    """
    commit, dirty = git_state(_OMLAB_SOURCE_ROOT if repo_dir is None else repo_dir)
    return {
        "omlab_version": package_version("omlab"),
        "litellm_version": package_version("litellm"),
        "duckdb_version": package_version("duckdb"),
        "python_version": platform.python_version(),
        "git_commit": commit,
        "git_dirty": dirty,
        "host": socket.gethostname() or None,
    }


def _git(repo_dir: str | Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo_dir), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None

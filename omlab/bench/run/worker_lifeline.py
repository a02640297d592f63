"""Worker processes exit when the process that started them dies.

A ``kill -9`` of ``omlab`` (what the OOM killer does) gives it no chance to stop its pool: without
this, the workers would keep running, and with a paid provider keep spending. Every pool worker
runs :func:`exit_with_parent` as its initializer (``pool_initializer()`` gives the arguments):

* on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the worker the moment its
  parent (the fork server, or the omlab process itself with ``spawn``) dies;
* everywhere, a daemon thread that checks twice a second that the omlab process still exists and
  that the worker has not been re-parented, and ends the worker at once otherwise. This covers
  the fork server's workers, whose parent is the fork server rather than omlab, and platforms
  without ``prctl``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Any

POLL_S = 0.5
_PR_SET_PDEATHSIG = 1


def pool_initializer() -> dict[str, Any]:
    """``initializer``/``initargs`` for a ``ProcessPoolExecutor`` created by this process."""
    return {"initializer": exit_with_parent, "initargs": (os.getpid(),)}


def exit_with_parent(owner_pid: int) -> None:
    """Make this worker exit when process ``owner_pid`` (the one that made the pool) or its own
    parent dies (see the module docstring)."""
    _ask_kernel_for_death_signal()
    parent = os.getppid()
    watcher = threading.Thread(target=_watch, args=(owner_pid, parent), name="omlab-exit-with-parent", daemon=True)
    watcher.start()


def _ask_kernel_for_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _watch(owner_pid: int, parent: int) -> None:
    stop = threading.Event()
    while not stop.wait(POLL_S):
        if os.getppid() != parent or not _alive(owner_pid):
            os._exit(1)  # no cleanup: the results file belongs to the dead parent


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


__all__ = ["exit_with_parent", "pool_initializer"]

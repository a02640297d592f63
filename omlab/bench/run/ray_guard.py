"""A local Ray instance dies with the driver that started it, even by ``kill -9``.

``ray.init()`` without an address starts a Ray instance (GCS, raylet, agents, workers) under the
driver. Killed by ``kill -9``, the driver cannot stop it: Ray's own processes then take up to a
minute to give up on the dead GCS, and a worker in the middle of a task keeps calling the provider
meanwhile. :func:`start_guard` starts a small guard process that holds the read end of a pipe only
the driver writes to. The kernel closes the pipe the instant the driver ends, however it ends; the
guard then kills every process of the instance at once: each process whose command line or open
files name the instance's session directory (worker processes change their command line, but
their output stays open on the session's log files), except the driver itself: after a normal
shutdown the driver still holds its own log files there, and the sweep must not kill it.

Run as ``python -m omlab.bench.run.ray_guard SESSION_DIR DRIVER_PID`` with the pipe as standard
input.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path


def start_guard(session_dir: str) -> subprocess.Popen[bytes] | None:
    """Start the guard of the local Ray instance whose session directory is ``session_dir``
    (None where there is no ``/proc`` to find its processes with); :func:`stop_guard` ends it."""
    if not Path("/proc/self/fd").is_dir():  # pragma: no cover - Linux has it
        return None
    return subprocess.Popen(
        [sys.executable, "-m", "omlab.bench.run.ray_guard", session_dir, str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # a Ctrl-C to the terminal reaches the driver, not the guard
        close_fds=True,
    )


def stop_guard(guard: subprocess.Popen[bytes] | None) -> None:
    """Close the pipe (the guard then sweeps up whatever the shutdown left) and wait for it."""
    if guard is None:
        return
    with contextlib.suppress(OSError):
        assert guard.stdin is not None
        guard.stdin.close()
    try:
        guard.wait(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - the guard exits right after its sweep
        guard.kill()


def session_processes(session_dir: str, spare: frozenset[int] = frozenset()) -> list[int]:
    """Pids of the processes (other than this one and those in ``spare``) whose command line or
    open files name ``session_dir``."""
    marker = os.path.realpath(session_dir).rstrip("/") + "/"
    plain = session_dir.rstrip("/") + "/"
    skip = spare | {os.getpid()}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in skip:
            continue
        if _names(entry, (marker, plain)):
            found.append(int(entry.name))
    return found


def _names(process: Path, markers: tuple[str, ...]) -> bool:
    try:
        command = (process / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False
    if any(marker in command for marker in markers):
        return True
    try:
        descriptors = list((process / "fd").iterdir())
    except OSError:
        return False
    for descriptor in descriptors:
        try:
            target = os.readlink(descriptor)
        except OSError:
            continue
        if target.startswith(markers):
            return True
    return False


def kill_session(session_dir: str, spare: frozenset[int] = frozenset()) -> int:
    """``kill -9`` every process of the instance but those in ``spare``; how many were killed."""
    if not Path(session_dir).name.startswith("session_"):
        raise ValueError(f"not a Ray session directory: {session_dir!r}")
    killed = 0
    # a second pass catches a worker the raylet started while the first one ran
    for _ in range(2):
        for pid in session_processes(session_dir, spare):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed


def main(argv: list[str]) -> int:
    """Wait for the driver's pipe to close, then kill what is left of its Ray instance (the
    driver aside: a dead driver needs no killing, a live one has just shut its instance down)."""
    session_dir, driver = argv
    with contextlib.suppress(OSError):
        while sys.stdin.buffer.read(4096):
            pass
    kill_session(session_dir, frozenset({int(driver)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


__all__ = ["kill_session", "session_processes", "start_guard", "stop_guard"]

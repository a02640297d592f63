"""The processes a run started, found through ``/proc`` (Linux): what a ``kill -9`` test watches.

:class:`RunProcesses` follows the descendants of a driver while it runs (``collect``) and, after
the driver is killed, the children those processes go on to start; ``alive()`` lists the ones still
running. A process is known by its pid and start time, so a recycled pid is never mistaken for it.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

Identity = tuple[int, int]
"""A process: (pid, start time in clock ticks since boot)."""


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def process_table() -> dict[Identity, int]:
    """Every visible process -> its parent pid."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            table[(int(entry.name), int(fields[19]))] = int(fields[1])
    return table


def running(process: Identity) -> bool:
    """The process still exists (not a zombie, not a recycled pid)."""
    fields = _stat(process[0])
    return fields is not None and int(fields[19]) == process[1] and fields[0] != "Z"


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


class RunProcesses:
    """The processes descending from ``root`` (the driver), seen so far."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.known: set[Identity] = set()

    def collect(self) -> set[Identity]:
        """Add the current descendants of the driver and of every known process still running."""
        table = process_table()
        parents = {self.root} | {pid for pid, _ in self.known if running((pid, _))}
        frontier = parents
        while frontier:
            children = {ident for ident, ppid in table.items() if ppid in frontier} - self.known
            self.known |= children
            frontier = {pid for pid, _ in children}
        return self.known

    def alive(self) -> list[Identity]:
        self.collect()
        return sorted(process for process in self.known if running(process))

    def wait_gone(self, deadline_s: float, since: float) -> float | None:
        """Poll until none is running (``deadline_s`` at most); seconds from ``since`` (monotonic)
        until the last one was seen gone, or None if some are still running."""
        give_up = time.monotonic() + deadline_s
        while time.monotonic() < give_up:
            if not self.alive():
                return time.monotonic() - since
            time.sleep(0.05)
        return None

    def kill_all(self) -> None:
        """``kill -9`` whatever is left (cleanup after a failed test)."""
        for pid, started in self.alive():
            if running((pid, started)):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


__all__ = ["RunProcesses", "command_line", "process_table", "running"]

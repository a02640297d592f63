"""Ray tasks stop when their driver dies, and send nothing more to the provider.

Ray only learns that a driver is gone when its raylet does, and a task in the middle of a
conversation keeps calling the provider until then. So every task of a run carries the driver's
:class:`DriverLifeline` and checks it itself:

* a watcher thread in each worker process (:meth:`DriverLifeline.watch`) ends the process as soon
  as the driver is gone, in-flight model calls and all (the worker of a dead driver has nobody to
  hand a result to, and Ray retries nothing for a dead owner);
* every provider request first checks it (:class:`LifelineLimits`, in front of the run's provider
  limits), so a worker that has not yet noticed sends nothing more either.

Where the driver is: on the worker's machine (the same pid namespace) it is the driver's pid, with
its start time so that a recycled pid does not pass (checked every :data:`LOCAL_POLL_S`); on
another node of a cluster it is the driver's Ray job, which the cluster marks dead when the
driver's node notices (checked every :data:`REMOTE_POLL_S`). A local Ray instance the driver
started is also killed whole by :mod:`omlab.bench.run.ray_guard`.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOCAL_POLL_S = 0.1
REMOTE_POLL_S = 1.0

_watched: set[DriverLifeline] = set()
_watched_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class DriverLifeline:
    """The driver a task works for (picklable; made in the driver by :meth:`of_this_process`).

    Attributes:
        pid: The driver's process id.
        started: Its start time (clock ticks since boot, ``/proc``), None where unknown.
        namespace: The machine boot and pid namespace where ``pid`` means the driver (None where
            unknown: then only the job tells).
        job_id: The driver's Ray job (hex), None outside Ray.
    """

    pid: int
    started: int | None
    namespace: str | None
    job_id: str | None

    @classmethod
    def of_this_process(cls, job_id: str | None = None) -> DriverLifeline:
        """The lifeline of the calling process (the driver)."""
        pid = os.getpid()
        return cls(pid, _start_ticks(pid), _namespace(), job_id)

    def local(self) -> bool:
        """The driver's pid can be checked from here."""
        return self.namespace is not None and self.namespace == _namespace()

    def alive(self) -> bool:
        """The driver still runs (when in doubt: yes)."""
        if self.local():
            return self.started is not None and _start_ticks(self.pid) == self.started
        return _job_alive(self.job_id)

    def check(self) -> None:
        """End this worker process at once if the driver is gone."""
        if not self.alive():
            _end_worker()

    def watch(self) -> None:
        """Start (once per process) a thread that ends this worker process when the driver dies."""
        with _watched_lock:
            if self in _watched:
                return
            _watched.add(self)
        poll = LOCAL_POLL_S if self.local() else REMOTE_POLL_S
        thread = threading.Thread(target=self._watch, args=(poll,), name="omlab-driver-lifeline", daemon=True)
        thread.start()

    def _watch(self, poll: float) -> None:
        stop = threading.Event()
        while not stop.wait(poll):
            self.check()


class LifelineLimits:
    """The run's provider limits with the driver checked before every request: a slot is
    granted, then the driver must still be alive for the request to go out."""

    def __init__(self, limits: Any, lifeline: DriverLifeline) -> None:
        self.limits = limits
        self.lifeline = lifeline

    def limit_for(self, model: str) -> int | None:
        return self.limits.limit_for(model)

    def paused_until(self, model: str) -> float | None:
        return self.limits.paused_until(model)

    def pause(self, model: str, seconds: float, *, now: Callable[[], float]) -> float:
        return self.limits.pause(model, seconds, now=now)

    @asynccontextmanager
    async def slot(self, model: str, **options: Any) -> AsyncIterator[None]:
        """The inner limits' slot, once the driver is known to be alive."""
        self.lifeline.check()
        async with self.limits.slot(model, **options):
            self.lifeline.check()
            yield

    def __repr__(self) -> str:
        return f"LifelineLimits({self.limits!r}, driver pid {self.lifeline.pid})"


def _end_worker() -> None:
    os._exit(1)  # no cleanup: the results belong to the dead driver


def _start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] == "Z" else int(fields[19])


def _namespace() -> str | None:
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        return f"{boot}/{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return None


def _job_alive(job_id: str | None) -> bool:
    if job_id is None:
        return True
    with contextlib.suppress(Exception):  # an unreachable GCS is the cluster's trouble, not a dead driver
        from ray._private import state

        for job in state.jobs():
            if job.get("JobID") == job_id:
                return not job.get("IsDead", False)
    return True


__all__ = ["LOCAL_POLL_S", "REMOTE_POLL_S", "DriverLifeline", "LifelineLimits"]

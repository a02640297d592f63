"""Where tasks run: the executor seam shared by the runner and the sweep.

An executor runs one picklable function over many items and yields ``(index, result)`` as each
task finishes. The caller (the driver) applies the results; tasks never write a run's file.

* :class:`PoolExecutor` (``pool``, the default): a local process pool, ``forkserver`` workers
  (:func:`pool_context`).
* :class:`RayExecutor` (``ray``): Ray tasks, on a local Ray instance started for the run or on the
  cluster at ``address`` (``auto`` or ``ray://HOST:PORT``). A task whose worker process dies is
  retried by Ray; only the result of the attempt that finished reaches the driver, so a retried
  task never duplicates rows. Ray is the optional extra ``omlab[ray]``. Tasks live only as long
  as the driver: each one carries its :class:`~omlab.bench.run.ray_lifeline.DriverLifeline` and
  ends its worker when the driver dies, even by ``kill -9``; a local instance is killed whole by
  its guard (:mod:`omlab.bench.run.ray_guard`).

Stopping (an error in the driver, ``Ctrl-C``): tasks not started are dropped, running ones are
cancelled; whatever the driver applied before stays, so the run is resumable.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Protocol, Self, TypeVar

from omlab.bench.run.ray_guard import start_guard, stop_guard
from omlab.bench.run.ray_lifeline import DriverLifeline
from omlab.bench.run.worker_lifeline import pool_initializer
from omlab.bench.suite.tables import EXECUTORS, check_address

T = TypeVar("T")
R = TypeVar("R")

LOCAL_START_ATTEMPTS = 3


class ExecutorError(RuntimeError):
    """An executor that cannot be used as asked (Ray not installed, a bad address)."""


class Executor(Protocol):
    """Runs ``fn`` over ``items``; yields ``(index, result)`` in completion order."""

    name: str

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]: ...

    def close(self) -> None: ...


def make_executor(
    name: str,
    *,
    workers: int,
    address: str | None = None,
    preload: Sequence[str] = (),
    task_cpus: float = 1.0,
    max_in_flight: int | None = None,
) -> Executor:
    """The executor called ``name`` (:data:`EXECUTORS`)."""
    if name == "pool":
        return PoolExecutor(workers, preload=preload)
    if name == "ray":
        return RayExecutor(address, workers=workers, task_cpus=task_cpus, max_in_flight=max_in_flight)
    raise ExecutorError(f"--executor must be one of {', '.join(EXECUTORS)}, got {name!r}")


class PoolExecutor:
    """A local process pool of ``workers`` processes (today's behaviour)."""

    name = "pool"

    def __init__(self, workers: int, *, preload: Sequence[str] = ()) -> None:
        self.workers = max(1, workers)
        self.preload = tuple(preload)

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        if not items:
            return
        workers = min(self.workers, len(items))
        # the workers exit when this process dies, even by kill -9 (omlab.bench.run.worker_lifeline)
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=pool_context(self.preload), **pool_initializer()
        ) as pool:
            futures = {pool.submit(fn, item): index for index, item in enumerate(items)}
            try:
                for future in as_completed(futures):
                    yield futures[future], future.result()
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise

    def close(self) -> None:
        """Nothing to release: each :meth:`run` owns its pool."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class RayExecutor:
    """Ray tasks on the cluster at ``address``, or on a local instance started here.

    Args:
        address: ``auto``, ``ray://HOST:PORT`` or ``HOST:PORT`` to join a running cluster; None
            starts a local Ray instance with ``workers`` CPUs (shut down by :meth:`close`).
        workers: CPUs of a local instance.
        task_cpus: CPUs each task reserves (0 for I/O-bound tasks, which the rate limit paces).
        max_in_flight: At most this many tasks submitted at once (None: all).
        max_retries: How often Ray reruns a task whose worker died.
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        workers: int = 2,
        task_cpus: float = 1.0,
        max_in_flight: int | None = None,
        max_retries: int = 3,
    ) -> None:
        ray = import_ray()
        if address is not None:
            check_address(address)
        self.address = address
        self.task_cpus = task_cpus
        self.max_in_flight = max_in_flight
        self.max_retries = max_retries
        self.started = connect_ray(ray, address, workers)
        # a guard only for an instance started here: a cluster's own processes are not the run's
        self.guard = start_guard(local_session_dir(ray)) if self.started and address is None else None
        self.lifeline = DriverLifeline.of_this_process(ray.get_runtime_context().get_job_id())

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[tuple[int, R]]:
        ray = import_ray()
        if not items:
            return
        task = ray.remote(num_cpus=self.task_cpus, max_retries=self.max_retries)(call)
        fn_ref = ray.put(fn)
        limit = self.max_in_flight or len(items)
        waiting = list(enumerate(items))[::-1]
        running: dict[Any, int] = {}
        try:
            while waiting or running:
                while waiting and len(running) < limit:
                    index, item = waiting.pop()
                    running[task.remote(fn_ref, item, self.lifeline)] = index
                done, _ = ray.wait(list(running), num_returns=1)
                for ref in done:
                    index = running.pop(ref)
                    yield index, ray.get(ref)
        except BaseException:
            for ref in running:
                ray.cancel(ref, force=False)
            raise

    def close(self) -> None:
        """Disconnect from Ray (stopping a local instance) if this executor connected."""
        if self.started:
            import_ray().shutdown()
            self.started = False
        stop_guard(self.guard)
        self.guard = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def pool_context(preload: Sequence[str] = ()) -> multiprocessing.context.BaseContext:
    """The start method of worker processes: ``forkserver`` (preloading omlab's phases and
    ``preload``; effective when the server first starts) where available, else ``spawn``."""
    if sys.platform.startswith("linux") or sys.platform == "darwin":
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["omlab.bench.run.phases", *preload])
        return context
    return multiprocessing.get_context("spawn")


def call(fn: Callable[[T], R], item: T, lifeline: DriverLifeline | None = None) -> R:
    """A Ray task's body: ``fn(item)``, in a worker that ends when the driver of ``lifeline``
    dies (module level, so Ray pickles it by reference)."""
    if lifeline is not None:
        lifeline.watch()
    return fn(item)


def local_session_dir(ray: Any) -> str:
    """The session directory of the Ray instance this process started."""
    return str(ray._private.worker._global_node.get_session_dir_path())


def import_ray() -> Any:
    """The ``ray`` module, or an :class:`ExecutorError` saying how to install it."""
    try:
        import ray
    except ImportError as error:  # pragma: no cover - the test environment has ray
        raise ExecutorError("--executor ray needs Ray: pip install 'omlab[ray]'") from error
    return ray


def connect_ray(ray: Any, address: str | None, workers: int) -> bool:
    """Connect this process to Ray (a local instance of ``workers`` CPUs without ``address``); True
    when connected here, so :meth:`RayExecutor.close` disconnects (and stops a local instance)."""
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": "WARNING", "log_to_driver": False}
    if address is not None:
        ray.init(address=address, **options)
        return True
    for attempt in range(LOCAL_START_ATTEMPTS):
        try:
            ray.init(num_cpus=max(1, workers), **options)
            return True
        except Exception as error:
            # Ray's raylet gives its metrics agent a fixed 15 s to start and the driver waits a
            # fixed 30 s; on a loaded machine a local start can miss them and succeed next time.
            if "timed out during startup" not in str(error) or attempt == LOCAL_START_ATTEMPTS - 1:
                raise
            ray.shutdown()
    return True  # pragma: no cover - the loop returns or raises


__all__ = [
    "Executor",
    "ExecutorError",
    "PoolExecutor",
    "RayExecutor",
    "connect_ray",
    "import_ray",
    "make_executor",
    "pool_context",
]

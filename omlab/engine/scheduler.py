"""Where background work runs and how long things take: live (asyncio, wall clock) or virtual.

The engine hands every background operation (a buffered observation, a buffered reflection) to a
scheduler as two halves: ``work`` (the model call, producing a result) and ``commit`` (applying
the result to the memory, under the memory's lock). The two schedulers differ only in *when* the
commit happens:

* :class:`LiveScheduler` runs ``work`` as an asyncio task; when it finishes the task takes the
  memory's lock and commits, unless the engine already committed it while waiting for it.
* :class:`VirtualScheduler` runs ``work`` at once (against the state at submission time) but
  commits it only when the virtual clock reaches ``start + latency``, where the latency comes from
  a :class:`LatencyModel` (the measured latency of the call, a fixed or lognormal figure per model
  or role, or a token-rate model). Whether buffering keeps up is thus decided by simulated time,
  reproducibly.

Blocking is measured the same way: a synchronous model call costs the actor its latency
(:meth:`Scheduler.block`), and waiting for a background operation costs the time until it lands
(:meth:`Scheduler.settle`). Both add to :attr:`Scheduler.blocked_s`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol

from omlab.engine.clock import Clock, SystemClock, VirtualClock

log = logging.getLogger("omlab.engine")

#: How long a waiting step gives a background operation before going on without it (§3).
DEFAULT_WAIT_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class CallCost:
    """What a latency model may base its answer on."""

    role: str  # observer | reflector
    model: str | None
    measured_s: float
    input_tokens: int
    output_tokens: int


class LatencyModel(Protocol):
    def latency_s(self, cost: CallCost) -> float: ...


class MeasuredLatency:
    """The call's own measured latency (offline models: practically zero)."""

    def latency_s(self, cost: CallCost) -> float:
        return max(0.0, cost.measured_s)


@dataclass(frozen=True, slots=True)
class FixedLatency:
    seconds: float

    def __post_init__(self) -> None:
        if self.seconds < 0 or not math.isfinite(self.seconds):
            raise ValueError(f"FixedLatency.seconds must be a finite number >= 0, got {self.seconds}")

    def latency_s(self, cost: CallCost) -> float:
        return self.seconds


@dataclass(slots=True)
class LognormalLatency:
    """Lognormal latencies with the given median and shape, from a seeded generator."""

    median_s: float
    sigma: float = 0.5
    seed: int = 0
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.median_s <= 0 or self.sigma < 0:
            raise ValueError("LognormalLatency needs median_s > 0 and sigma >= 0")
        self._rng = random.Random(self.seed)

    def latency_s(self, cost: CallCost) -> float:
        return self._rng.lognormvariate(math.log(self.median_s), self.sigma)


@dataclass(frozen=True, slots=True)
class TokenRateLatency:
    """``base_s + input_tokens / input_tps + output_tokens / output_tps``: a provider-like model
    (prefill is fast, decoding is slow)."""

    base_s: float = 0.5
    input_tps: float = 20_000.0
    output_tps: float = 80.0

    def latency_s(self, cost: CallCost) -> float:
        return self.base_s + cost.input_tokens / self.input_tps + cost.output_tokens / self.output_tps


@dataclass(slots=True)
class CalibratedLatency:
    """A fitted provider: ``(base_s + input_tokens × input_s + output_tokens × output_s)`` times a
    lognormal factor of mean 1 and shape ``sigma`` (the fit's scatter), from a seeded generator."""

    base_s: float
    input_s: float = 0.0
    output_s: float = 0.0
    sigma: float = 0.0
    seed: int = 0
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("base_s", "input_s", "output_s", "sigma"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"CalibratedLatency.{name} must be a finite number >= 0, got {value}")
        self._rng = random.Random(self.seed)

    def latency_s(self, cost: CallCost) -> float:
        mean = self.base_s + cost.input_tokens * self.input_s + cost.output_tokens * self.output_s
        if self.sigma == 0:
            return mean
        return mean * math.exp(self._rng.gauss(0.0, self.sigma) - self.sigma**2 / 2)


@dataclass(frozen=True, slots=True)
class PerModelLatency:
    """Pick a latency model by model name or role (model wins), with a default."""

    by_name: Mapping[str, LatencyModel]
    default: LatencyModel = field(default_factory=MeasuredLatency)

    def latency_s(self, cost: CallCost) -> float:
        chosen = self.by_name.get(cost.model or "") or self.by_name.get(cost.role) or self.default
        return chosen.latency_s(cost)


Commit = Callable[[Any, BaseException | None], Awaitable[None]]


@dataclass(slots=True, eq=False)
class _Op:
    key: str
    started: Any  # datetime
    commit: Commit
    lock: asyncio.Lock | None
    task: asyncio.Task | None = None
    result: Any = None
    error: BaseException | None = None
    ready_at: Any = None  # datetime, virtual only
    finished: bool = False
    committed: bool = False


class Scheduler(ABC):
    """Common bookkeeping: one operation in flight per key, blocked-time accounting."""

    clock: Clock

    def __init__(self) -> None:
        self._ops: dict[str, _Op] = {}
        self.blocked_s = 0.0

    def in_flight(self, key: str) -> bool:
        """Whether an operation for ``key`` was submitted and not yet committed."""
        return key in self._ops

    def started_at(self, key: str) -> Any:
        op = self._ops.get(key)
        return op.started if op else None

    async def _commit(self, op: _Op) -> None:
        if op.committed:
            return
        op.committed = True
        self._ops.pop(op.key, None)
        try:
            await op.commit(op.result, op.error)
        except Exception:  # a failed commit must not take the step down
            log.exception("committing background operation %s failed", op.key)

    @abstractmethod
    async def submit(
        self,
        key: str,
        work: Callable[[], Awaitable[Any]],
        commit: Commit,
        *,
        cost: Callable[[Any], CallCost | None],
        lock: asyncio.Lock | None,
    ) -> None:
        """Run ``work`` in the background and ``commit`` its result (or error) under ``lock``."""

    @abstractmethod
    async def poll(self, prefix: str) -> None:
        """Commit the finished operations whose key starts with ``prefix`` (caller holds the lock)."""

    @abstractmethod
    async def settle(self, key: str, timeout_s: float = DEFAULT_WAIT_TIMEOUT_S) -> float:
        """Wait for the operation ``key`` and commit it (caller holds the lock); returns the
        seconds the caller was blocked."""

    @abstractmethod
    async def block(self, cost: CallCost | None) -> float:
        """Account for a synchronous call the actor waited on; returns its blocking seconds."""

    @abstractmethod
    async def drain(self) -> None:
        """Wait for every background operation (end of a replay, shutdown)."""


class LiveScheduler(Scheduler):
    """Background work as asyncio tasks on the running loop; wall-clock time."""

    def __init__(self, clock: Clock | None = None) -> None:
        super().__init__()
        self.clock = clock or SystemClock()

    async def submit(self, key, work, commit, *, cost, lock) -> None:
        if key in self._ops:
            raise RuntimeError(f"an operation for {key} is already in flight")
        op = _Op(key=key, started=self.clock.now(), commit=commit, lock=lock)
        self._ops[key] = op

        async def run() -> None:
            try:
                op.result = await work()
            except Exception as exc:  # noqa: BLE001 - reported through commit, never raised into a turn
                op.error = exc
            op.finished = True
            if op.lock is not None:
                async with op.lock:
                    await self._commit(op)
            else:
                await self._commit(op)

        op.task = asyncio.get_running_loop().create_task(run(), name=f"omlab:{key}")

    async def poll(self, prefix: str) -> None:
        for op in [o for o in self._ops.values() if o.key.startswith(prefix) and o.finished]:
            await self._commit(op)

    async def settle(self, key: str, timeout_s: float = DEFAULT_WAIT_TIMEOUT_S) -> float:
        op = self._ops.get(key)
        if op is None or op.task is None:
            return 0.0
        start = time.monotonic()
        while not op.finished:
            remaining = timeout_s - (time.monotonic() - start)
            if remaining <= 0:
                log.warning("gave up waiting for %s after %.0f s", key, timeout_s)
                break
            # the task needs our lock only to commit, so it can always finish its work meanwhile
            await asyncio.wait([op.task], timeout=min(remaining, 0.05))
        waited = time.monotonic() - start
        self.blocked_s += waited
        if op.finished:
            await self._commit(op)
        return waited

    async def block(self, cost: CallCost | None) -> float:
        seconds = cost.measured_s if cost else 0.0
        self.blocked_s += seconds
        return seconds

    async def drain(self) -> None:
        tasks = [o.task for o in self._ops.values() if o.task is not None]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


class VirtualScheduler(Scheduler):
    """Background work lands at ``start + latency`` on a :class:`VirtualClock`."""

    def __init__(self, clock: VirtualClock | None = None, latency: LatencyModel | None = None) -> None:
        super().__init__()
        self.clock = clock or VirtualClock()
        self.latency = latency or MeasuredLatency()

    def _latency(self, cost: CallCost | None) -> float:
        return max(0.0, self.latency.latency_s(cost)) if cost is not None else 0.0

    async def submit(self, key, work, commit, *, cost, lock) -> None:
        if key in self._ops:
            raise RuntimeError(f"an operation for {key} is already in flight")
        started = self.clock.now()
        op = _Op(key=key, started=started, commit=commit, lock=lock)
        self._ops[key] = op
        try:
            op.result = await work()
            seconds = self._latency(cost(op.result))
        except Exception as exc:  # noqa: BLE001 - reported through commit, never raised into a turn
            op.error = exc
            seconds = 0.0
        op.finished = True
        op.ready_at = started + timedelta(seconds=seconds)

    async def poll(self, prefix: str) -> None:
        now = self.clock.now()
        ready = sorted(
            (o for o in self._ops.values() if o.key.startswith(prefix) and o.ready_at <= now), key=lambda o: o.ready_at
        )
        for op in ready:
            await self._commit(op)

    async def settle(self, key: str, timeout_s: float = DEFAULT_WAIT_TIMEOUT_S) -> float:
        op = self._ops.get(key)
        if op is None:
            return 0.0
        waited = max(0.0, (op.ready_at - self.clock.now()).total_seconds())
        if waited > timeout_s:
            self.clock.advance(timeout_s)
            self.blocked_s += timeout_s
            return timeout_s
        self.clock.advance(waited)
        self.blocked_s += waited
        await self._commit(op)
        return waited

    async def block(self, cost: CallCost | None) -> float:
        seconds = self._latency(cost)
        self.clock.advance(seconds)
        self.blocked_s += seconds
        return seconds

    def next_ready_at(self, prefix: str = "") -> Any:
        """When the next background operation under ``prefix`` lands (None if none)."""
        times = [o.ready_at for o in self._ops.values() if o.key.startswith(prefix)]
        return min(times) if times else None

    async def drain(self) -> None:
        for op in sorted(self._ops.values(), key=lambda o: o.ready_at):
            self.clock.set(op.ready_at)
            if op.lock is not None:
                async with op.lock:
                    await self._commit(op)
            else:
                await self._commit(op)

"""Provider rate limits shared by every worker of a cluster: one Ray actor holds them.

:class:`LimitsState` keeps, per provider, the requests in flight (at most the concurrency limit),
a requests-per-minute and a tokens-per-minute token bucket (each refilled continuously, starting
full), and the shared pause a ``retry-after`` asks for. It lives in one Ray actor
(:func:`start_limits_actor`); :class:`ClusterLimits` is what a worker's
:class:`~omlab.llm.client.ModelClient` uses in place of a local
:class:`~omlab.llm.limits.ProviderLimits` (same methods): every slot is granted by the actor, so
32 workers behave like one well-mannered client. :func:`local_limits` gives the same limits to one
process's asyncio run (the pool executor's provider-bound runs). Pauses are kept on the actor's clock and handed
to workers as durations, so nodes' clocks never need to agree. Offline models are never limited.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from omlab.llm.limits import DEFAULT_CONCURRENCY, _check_limit, _provider_name, provider_of
from omlab.llm.spec import OFFLINE_PROVIDER, split_model

_POLL_S = 0.01


@dataclass(slots=True)
class _Bucket:
    """A token bucket of ``capacity`` tokens refilled at ``capacity`` per minute."""

    capacity: float
    level: float
    at: float

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.at) * self.capacity / 60.0)
        self.at = now

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` tokens are there (0 when they are; a request larger than the
        bucket waits for a full bucket)."""
        missing = min(amount, self.capacity) - self.level
        return 0.0 if missing <= 0 else missing * 60.0 / self.capacity


class LimitsState:
    """Per-provider concurrency, RPM and TPM buckets and pauses (the actor's state).

    Args:
        default: Concurrent requests per provider unless ``per_provider`` names it.
        per_provider: Concurrency per provider (``{"openai": 32}``).
        rpm: Requests per minute per provider (absent: unlimited).
        tpm: Tokens per minute per provider (absent: unlimited).
        clock: Monotonic seconds (tests inject one).
    """

    def __init__(
        self,
        default: int = DEFAULT_CONCURRENCY,
        per_provider: Mapping[str, int] | None = None,
        rpm: Mapping[str, int] | None = None,
        tpm: Mapping[str, int] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        _check_limit("default", default)
        self.default = default
        self.per_provider = _per_provider("per_provider", per_provider)
        self.rpm = _per_provider("rpm", rpm)
        self.tpm = _per_provider("tpm", tpm)
        self._clock = clock
        self._in_flight: dict[str, int] = {}
        self._paused_until: dict[str, float] = {}
        self._buckets: dict[tuple[str, str], _Bucket] = {}
        self.peak: dict[str, int] = {}
        self.granted: dict[str, int] = {}

    def concurrency(self, provider: str) -> int:
        return self.per_provider.get(provider, self.default)

    def try_acquire(self, provider: str, tokens: int = 0) -> float:
        """Take a slot (and a request and ``tokens`` from the buckets) if one is free now: 0.0;
        else the seconds to wait before trying again (nothing taken)."""
        now = self._clock()
        pause = self._paused_until.get(provider, -math.inf) - now
        if pause > 0:
            return pause
        if self._in_flight.get(provider, 0) >= self.concurrency(provider):
            return _POLL_S
        buckets = [(self._bucket("rpm", provider, now), 1.0), (self._bucket("tpm", provider, now), float(tokens))]
        waits = [bucket.wait_for(amount) for bucket, amount in buckets if bucket is not None]
        if any(wait > 0 for wait in waits):
            return max(waits)
        for bucket, amount in buckets:
            if bucket is not None:
                bucket.level -= min(amount, bucket.capacity)
        self._in_flight[provider] = self._in_flight.get(provider, 0) + 1
        self.peak[provider] = max(self.peak.get(provider, 0), self._in_flight[provider])
        self.granted[provider] = self.granted.get(provider, 0) + 1
        return 0.0

    async def acquire(self, provider: str, tokens: int = 0) -> None:
        """Wait for a slot of ``provider`` (pause, concurrency and buckets), then hold it."""
        while (wait := self.try_acquire(provider, tokens)) > 0:
            await asyncio.sleep(min(wait, 1.0))

    def release(self, provider: str) -> None:
        """Give back a slot taken by :meth:`acquire`."""
        self._in_flight[provider] = max(0, self._in_flight.get(provider, 0) - 1)

    def pause(self, provider: str, seconds: float) -> float:
        """Hold every request to ``provider`` for ``seconds`` (a pause only grows); the seconds
        left of the provider's pause."""
        if not math.isfinite(seconds):
            raise ValueError(f"pause needs a finite number of seconds, got {seconds!r}")
        now = self._clock()
        until = max(self._paused_until.get(provider, -math.inf), now + max(0.0, seconds))
        self._paused_until[provider] = until
        return until - now

    def remaining_pause(self, provider: str) -> float:
        """Seconds left of ``provider``'s pause (0 when not paused)."""
        return max(0.0, self._paused_until.get(provider, -math.inf) - self._clock())

    def stats(self) -> dict[str, dict[str, int]]:
        """Peak requests in flight and slots granted, per provider."""
        return {"peak": dict(self.peak), "granted": dict(self.granted), "in_flight": dict(self._in_flight)}

    def _bucket(self, kind: str, provider: str, now: float) -> _Bucket | None:
        limit = (self.rpm if kind == "rpm" else self.tpm).get(provider)
        if limit is None:
            return None
        bucket = self._buckets.setdefault((kind, provider), _Bucket(float(limit), float(limit), now))
        bucket.refill(now)
        return bucket


class ClusterLimits:
    """A :class:`~omlab.llm.limits.ProviderLimits` stand-in whose slots and pauses live in a
    :class:`LimitsState` actor (picklable: it travels to workers with the actor handle)."""

    def __init__(self, actor: Any, default: int, per_provider: Mapping[str, int]) -> None:
        self.actor = actor
        self.default = default
        self.per_provider = dict(per_provider)
        self._paused_until: dict[str, float] = {}

    def limit_for(self, model: str) -> int | None:
        if split_model(model)[0] == OFFLINE_PROVIDER:
            return None
        return self.per_provider.get(provider_of(model), self.default)

    def paused_until(self, model: str) -> float | None:
        """When this worker last heard the provider's pause ends (client clock), or None."""
        return self._paused_until.get(provider_of(model))

    def pause(self, model: str, seconds: float, *, now: Callable[[], float]) -> float:
        if self.limit_for(model) is None:
            return now()
        provider = provider_of(model)
        self.actor.pause.remote(provider, float(seconds))
        until = max(self._paused_until.get(provider, -math.inf), now() + max(0.0, seconds))
        self._paused_until[provider] = until
        return until

    @asynccontextmanager
    async def slot(
        self,
        model: str,
        *,
        now: Callable[[], float],
        sleep: Callable[[float], Awaitable[Any]],
        tokens: int = 0,
    ) -> AsyncIterator[None]:
        """Wait until the actor grants a slot of ``model``'s provider; hold it for the body."""
        if self.limit_for(model) is None:
            yield
            return
        provider = provider_of(model)
        await self.actor.acquire.remote(provider, tokens)
        try:
            yield
        finally:
            self.actor.release.remote(provider)

    def __repr__(self) -> str:
        return f"ClusterLimits(default={self.default}, per_provider={self.per_provider!r})"


def start_limits_actor(
    default: int = DEFAULT_CONCURRENCY,
    per_provider: Mapping[str, int] | None = None,
    rpm: Mapping[str, int] | None = None,
    tpm: Mapping[str, int] | None = None,
) -> ClusterLimits:
    """Start the limits actor on the connected Ray cluster; the handle workers use."""
    import ray

    state = LimitsState(default, per_provider, rpm, tpm)  # validates here, where errors are read
    actor_class = ray.remote(num_cpus=0, max_concurrency=10_000)(LimitsState)
    actor = actor_class.remote(default, per_provider, rpm, tpm)
    return ClusterLimits(actor, state.default, state.per_provider)


def local_limits(
    default: int = DEFAULT_CONCURRENCY,
    per_provider: Mapping[str, int] | None = None,
    rpm: Mapping[str, int] | None = None,
    tpm: Mapping[str, int] | None = None,
) -> ClusterLimits:
    """The same limits for the calls of this process only (one asyncio run, no Ray): a
    :class:`LimitsState` held here, behind the interface workers use."""
    state = LimitsState(default, per_provider, rpm, tpm)
    return ClusterLimits(_InProcess(state), state.default, state.per_provider)


class _InProcess:
    """A :class:`LimitsState` whose methods are called like an actor's (``.acquire.remote(...)``)."""

    def __init__(self, state: LimitsState) -> None:
        self.state = state
        self.acquire = _Call(state.acquire)
        self.release = _Call(state.release)
        self.pause = _Call(state.pause)


@dataclass(frozen=True, slots=True)
class _Call:
    remote: Callable[..., Any]


def _per_provider(name: str, values: Mapping[str, int] | None) -> dict[str, int]:
    if values is not None and not isinstance(values, Mapping):
        raise TypeError(f"{name} must be a mapping of provider -> limit, got {type(values).__name__}")
    checked: dict[str, int] = {}
    for provider, limit in (values or {}).items():
        if not isinstance(provider, str) or not provider.strip() or "/" in provider:
            raise ValueError(f"{name}: {provider!r} is not a provider name (e.g. 'openai')")
        _check_limit(f"{name}[{provider!r}]", limit)
        checked[_provider_name(provider)] = limit
    return checked


__all__ = ["ClusterLimits", "LimitsState", "local_limits", "start_limits_actor"]

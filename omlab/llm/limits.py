"""Per-provider concurrency limits and the shared pause a rate-limited provider asks for.

Runs against providers are I/O-bound: many calls are in flight at once, and a provider that is
pushed too hard answers 429. :class:`ProviderLimits` gives each provider (the part of the model
string before ``/``, spelled as litellm spells it, so ``google`` and ``gemini`` share one limit)
an ``asyncio.Semaphore`` of ``per_provider.get(provider, default)`` slots; a request holds a slot
only while it is sent and answered, never while it waits to retry. The built-in offline models
(``omlab/...``) are never limited.

When a provider answers with ``retry-after`` (or ``retry-after-ms``), the client calls
:meth:`ProviderLimits.pause`: *every* caller of that provider then waits until that time before
sending anything, instead of each one finding out with its own 429. The waiting caller retries
afterwards, so a rate limit slows a run down but never ends it (the client's retry budget and
deadline still apply to the caller that was refused).

Pause times are read on the clock of the client that uses the limits; share one
``ProviderLimits`` only between clients that use the same clock.
"""

from __future__ import annotations

import asyncio
import logging
import math
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from omlab.llm.spec import OFFLINE_PROVIDER, litellm_model_name, split_model, validate_model_string

logger = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 8


def provider_of(model: str) -> str:
    """The provider a model string is limited under: ``"google/gemini-2.5-flash"`` → ``"gemini"``."""
    return litellm_model_name(validate_model_string(model)).split("/", 1)[0]


def _provider_name(name: str) -> str:
    """Normalise a ``per_provider`` key (``"google"`` → ``"gemini"``) like :func:`provider_of`."""
    return provider_of(f"{name}/x")


class ProviderLimits:
    """At most ``per_provider.get(provider, default)`` requests in flight per provider.

    ``ProviderLimits(default=8, per_provider={"openai": 32, "anthropic": 4})``. Keys of
    ``per_provider`` are provider names as in model strings (``google``, ``openai``…).
    """

    def __init__(self, default: int = DEFAULT_CONCURRENCY, per_provider: Mapping[str, int] | None = None) -> None:
        _check_limit("ProviderLimits.default", default)
        if per_provider is not None and not isinstance(per_provider, Mapping):
            raise TypeError(
                f"ProviderLimits.per_provider must be a mapping of provider -> limit, got {type(per_provider).__name__}"
            )
        limits: dict[str, int] = {}
        for name, limit in (per_provider or {}).items():
            if not isinstance(name, str) or not name.strip() or "/" in name:
                raise ValueError(f"ProviderLimits.per_provider: {name!r} is not a provider name (e.g. 'openai')")
            _check_limit(f"ProviderLimits.per_provider[{name!r}]", limit)
            limits[_provider_name(name)] = limit
        self.default = default
        self.per_provider: dict[str, int] = limits
        self._paused_until: dict[str, float] = {}
        # asyncio primitives belong to one event loop; each loop gets its own semaphores.
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
            weakref.WeakKeyDictionary()
        )

    def limit_for(self, model: str) -> int | None:
        """Concurrent requests allowed for ``model``'s provider; None (unlimited) for offline models."""
        if split_model(model)[0] == OFFLINE_PROVIDER:
            return None
        return self.per_provider.get(provider_of(model), self.default)

    def paused_until(self, model: str) -> float | None:
        """When the pause of ``model``'s provider ends (client clock), or None if never paused."""
        return self._paused_until.get(provider_of(model))

    def pause(self, model: str, seconds: float, *, now: Callable[[], float]) -> float:
        """Hold every request to ``model``'s provider for ``seconds`` from ``now()``.

        A pause only ever grows (a shorter retry-after never cuts a longer one short). Offline
        models are never paused. Returns the time the provider's pause now ends.
        """
        if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not math.isfinite(seconds):
            raise ValueError(f"pause needs a finite number of seconds, got {seconds!r}")
        if self.limit_for(model) is None:
            return now()
        provider = provider_of(model)
        until = max(self._paused_until.get(provider, -math.inf), now() + max(0.0, seconds))
        if until != self._paused_until.get(provider):
            logger.info("provider %s asked to wait: every call to it pauses %.2f s", provider, until - now())
        self._paused_until[provider] = until
        return until

    @asynccontextmanager
    async def slot(
        self,
        model: str,
        *,
        now: Callable[[], float],
        sleep: Callable[[float], Awaitable[Any]],
    ) -> AsyncIterator[None]:
        """Wait out any pause of the provider, then hold one of its slots for the ``with`` body."""
        limit = self.limit_for(model)
        if limit is None:
            yield
            return
        provider = provider_of(model)
        semaphore = self._semaphore(provider, limit)
        while True:
            await self._wait_out_pause(provider, now, sleep)
            await semaphore.acquire()
            # A pause may have started while this call queued for a slot: honour it too.
            if self._remaining_pause(provider, now) <= 0:
                break
            semaphore.release()
        try:
            yield
        finally:
            semaphore.release()

    def __repr__(self) -> str:
        return f"ProviderLimits(default={self.default}, per_provider={self.per_provider!r})"

    def _semaphore(self, provider: str, limit: int) -> asyncio.Semaphore:
        per_loop = self._semaphores.setdefault(asyncio.get_running_loop(), {})
        if provider not in per_loop:
            per_loop[provider] = asyncio.Semaphore(limit)
        return per_loop[provider]

    def _remaining_pause(self, provider: str, now: Callable[[], float]) -> float:
        until = self._paused_until.get(provider)
        return until - now() if until is not None else 0.0

    async def _wait_out_pause(
        self, provider: str, now: Callable[[], float], sleep: Callable[[float], Awaitable[Any]]
    ) -> None:
        # A loop, because another caller may extend the pause while this one sleeps.
        while (remaining := self._remaining_pause(provider, now)) > 0:
            await sleep(remaining)


def _check_limit(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


__all__ = ["DEFAULT_CONCURRENCY", "ProviderLimits", "provider_of"]

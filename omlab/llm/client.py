"""The model boundary: every model call in omlab goes through :class:`ModelClient`.

``complete()`` resolves the request's model spec (routing a ``ModelByInputTokens`` by
``request.input_tokens``), walks the fallback chain with retries under one deadline, dispatches
``omlab/<name>`` to the built-in offline models and everything else to litellm, prices the call,
and records exactly one :class:`ModelCall` per ``complete()``, successful or not.

With a :class:`~omlab.llm.cache.ResponseCache`, the chain's attempts are looked up first (in
fallback order, each under the key of its resolved model) and a hit is served without any request:
the response has ``cached=True``, the original usage, ``cost_usd=0.0``, ``attempts=0`` and the
*original* ``latency_s`` (so a virtual-time replay of a cached run is identical to the first run);
its :class:`ModelCall` records ``cached=True``, ``cost_usd=0.0`` (nothing was paid),
``configured_cost_usd`` priced from the cached usage with *this* client's prices, the lookup's own
latency and,
under ``metadata["llm"]``, ``cache_key``, ``original_cost_usd`` and ``original_latency_s``. A
strict-mode miss raises :class:`~omlab.llm.cache.CacheMissError` (not wrapped, so no caller can
mistake it for a model failure), after recording the failed call. Successful answers are written
in ``write`` mode.

With :class:`~omlab.llm.limits.ProviderLimits`, each request holds a slot of its provider while it
is in flight, and a retryable error that carries ``retry-after`` pauses every caller of that
provider (not only the refused one) until that time. The deadline starts when the first request
is sent: queueing for a slot is the run's own throttling, not the provider's slowness.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from time import perf_counter, thread_time
from typing import Any, TypeAlias

from omlab.llm.cache import CachedResponse, CacheKeyError, CacheMissError, ResponseCache, cache_key
from omlab.llm.limits import ProviderLimits
from omlab.llm.pricing import PriceOverride, price_call
from omlab.llm.retry import RetryPolicy, backoff_delay, is_missing_key, is_retryable, retry_after_s
from omlab.llm.secrets import environment_secrets, redact_secrets, secret_values
from omlab.llm.spec import ResolvedAttempt, ResolvedModel, describe_model, resolve_model, split_model
from omlab.llm.types import ModelCall, ModelRequest, ModelResponse, Usage

logger = logging.getLogger(__name__)

BackendResult: TypeAlias = tuple[str, Usage, "str | None", dict[str, Any]]
RemoteBackend: TypeAlias = Callable[[ResolvedAttempt, ModelRequest, "float | None"], Awaitable[BackendResult]]
"""``(attempt, request, timeout_s) -> (text, usage, finish_reason, provider_metadata)``."""


_MISSING_KEY_FIX = (
    " (set that key in the environment, or choose another model with the `model` option, e.g."
    " observation.model / reflection.model: omlab/observer, omlab/reflector, omlab/reader and omlab/judge"
    " run offline)"
)


class ModelCallError(RuntimeError):
    """A ``complete()`` that failed after every fallback; ``call`` is the recorded :class:`ModelCall`.

    ``__cause__`` is the last underlying error (for example an ``InputTooLargeError`` from routing).
    """

    def __init__(self, message: str, call: ModelCall) -> None:
        super().__init__(message)
        self.call = call


@dataclass(slots=True)
class _Progress:
    """What happened so far inside one ``complete()``."""

    attempts: int = 0
    errors: list[str] = field(default_factory=list)
    last_error: BaseException | None = None
    last_model: str | None = None


class ModelClient:
    """Calls models with retries, fallbacks, a deadline, pricing and a call log.

    ``prices`` maps a model string to a :class:`~omlab.llm.pricing.Price` or to another model
    string to be priced as (``{"omlab/observer": "google/gemini-2.5-flash"}``). ``on_call`` is
    called with every :class:`ModelCall` (its errors are logged, never raised). ``sleep``, ``now``
    and ``rng`` are injectable for tests and virtual time; ``remote`` replaces the litellm backend.
    ``cache`` serves and records responses; ``limits`` caps concurrent requests per provider and
    shares retry-after pauses (module docstring). ``retry_by_role`` gives a role (a request's
    ``role``: observer, reflector, extractor, actor, judge) its own policy instead of ``retry``.
    """

    def __init__(
        self,
        *,
        retry: RetryPolicy | None = None,
        prices: Mapping[str, PriceOverride] | None = None,
        on_call: Callable[[ModelCall], None] | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        now: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        remote: RemoteBackend | None = None,
        cache: ResponseCache | None = None,
        limits: ProviderLimits | None = None,
        retry_by_role: Mapping[str, RetryPolicy] | None = None,
    ) -> None:
        self.retry = retry or RetryPolicy()
        self.retry_by_role = dict(retry_by_role or {})
        self.prices = dict(prices or {})
        self.on_call = on_call
        self.calls: list[ModelCall] = []
        self._sleep = sleep
        self._now = now
        self._rng = rng or random.Random()
        self._remote = remote
        self.cache = cache
        self.limits = limits
        self.offline_seconds: dict[str, float] = {}
        """Wall seconds spent inside each offline model's ``generate`` (``omlab/<name>`` → s), so a
        benchmark can tell the engine's own time from the models' (which stand in for providers)."""
        self.offline_cpu_seconds: dict[str, float] = {}
        """CPU seconds of the calling thread inside each offline model's ``generate``: unlike wall
        time, they do not count the time other processes held the core."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer ``request`` or raise :class:`ModelCallError` once every fallback has failed."""
        started_at = self._now()
        call_id = uuid.uuid4().hex
        try:
            requested = describe_model(request.model)
        except ValueError:
            requested = f"<invalid {type(request.model).__name__}>"
        progress = _Progress()
        resolved: ResolvedModel | None = None
        try:
            resolved = await resolve_model(request.model, input_tokens=request.input_tokens, context=request.context)
            return await self._walk(request, resolved, progress, call_id, requested, started_at)
        except asyncio.CancelledError:
            self._record_failure(request, resolved, progress, call_id, requested, started_at, "cancelled")
            raise
        except CacheMissError as miss:
            miss.call = self._record_failure(
                request, resolved, progress, call_id, requested, started_at, f"CacheMissError: {miss}"
            )
            raise
        except _Exhausted as exhausted:
            call = self._record_failure(request, resolved, progress, call_id, requested, started_at, exhausted.summary)
            raise ModelCallError(f"model call failed ({requested}): {exhausted.summary}", call) from (
                progress.last_error
            )
        except Exception as err:  # spec resolution: bad spec, missing input_tokens, input too large
            summary = f"{type(err).__name__}: {err}"
            call = self._record_failure(request, resolved, progress, call_id, requested, started_at, summary)
            raise ModelCallError(f"model call failed ({requested}): {summary}", call) from err

    async def _walk(
        self,
        request: ModelRequest,
        resolved: ResolvedModel,
        progress: _Progress,
        call_id: str,
        requested: str,
        started_at: float,
    ) -> ModelResponse:
        keys = self._cache_keys(request, resolved)
        if keys is not None:
            assert self.cache is not None
            hit = self.cache.lookup(
                [(a.model, k) for a, k in zip(resolved.attempts, keys, strict=True) if k is not None]
            )
            if hit is not None:
                return self._serve_cached(request, resolved, keys.index(hit.key), hit, call_id, requested, started_at)
        policy = self.retry_by_role.get(request.role, self.retry) if request.role else self.retry
        remote = self._remote_backend(resolved)
        # Starts with the first request sent: neither litellm's one-off import nor queueing for a
        # provider slot counts against the provider.
        deadline: float | None = None
        for index, attempt in enumerate(resolved.attempts):
            retries = attempt.max_retries if attempt.max_retries is not None else policy.max_retries
            for retry_index in range(retries + 1):
                if self._paused_past(attempt, deadline):
                    progress.errors.append(f"{attempt.model}: provider paused past the deadline")
                    break
                failure: Exception | None = None
                async with self._slot(attempt):
                    if deadline is None and policy.deadline_s is not None:
                        deadline = self._now() + policy.deadline_s
                    remaining = deadline - self._now() if deadline is not None else None
                    if remaining is not None and remaining <= 0:
                        raise _Exhausted(self._summary(progress, f"deadline of {policy.deadline_s:g} s passed"))
                    timeout = _min_or_none(policy.attempt_timeout_s, remaining)
                    progress.attempts += 1
                    progress.last_model = attempt.model
                    try:
                        text, usage, finish_reason, metadata = await self._dispatch(attempt, request, timeout, remote)
                    except asyncio.CancelledError:
                        raise
                    except Exception as err:  # noqa: BLE001 - every failure is classified by is_retryable
                        if isinstance(err, TimeoutError) and not str(err) and timeout is not None:
                            err = TimeoutError(f"no reply within {timeout:.2f} s")
                        failure = err
                if failure is None:
                    return self._succeed(
                        request,
                        resolved,
                        attempt,
                        index,
                        progress,
                        call_id,
                        requested,
                        started_at,
                        text,
                        usage,
                        finish_reason,
                        metadata,
                        keys[index] if keys is not None else None,
                    )
                progress.last_error = failure
                progress.errors.append(
                    f"{attempt.model}: {type(failure).__name__}: {_one_line(_redact(str(failure), attempt, request))}"
                    + (_MISSING_KEY_FIX if is_missing_key(failure) else "")
                )
                if not is_retryable(failure) or retry_index == retries:
                    break
                delay = retry_after_s(failure, now=self._now)
                shared_pause = delay is not None and self.limits is not None and not attempt.is_offline
                if delay is None:
                    delay = backoff_delay(retry_index, policy, self._rng)
                if shared_pause:
                    assert self.limits is not None
                    # Every caller of this provider waits, this one included (in _slot), even
                    # when this one gives up below: the provider asked all of them.
                    self.limits.pause(attempt.model, delay, now=self._now)
                if deadline is not None and self._now() + delay >= deadline:
                    # Never sleep past the deadline: give the next fallback what is left.
                    progress.errors.append(f"{attempt.model}: retry in {delay:.2f} s would pass the deadline")
                    break
                if not shared_pause:
                    await self._sleep(delay)
        raise _Exhausted(self._summary(progress, "no model answered"))

    def _slot(self, attempt: ResolvedAttempt) -> AbstractAsyncContextManager[None]:
        if self.limits is None or attempt.is_offline:
            return nullcontext()
        return self.limits.slot(attempt.model, now=self._now, sleep=self._sleep)

    def _paused_past(self, attempt: ResolvedAttempt, deadline: float | None) -> bool:
        if self.limits is None or deadline is None or attempt.is_offline:
            return False
        until = self.limits.paused_until(attempt.model)
        return until is not None and until >= deadline

    def _cache_keys(self, request: ModelRequest, resolved: ResolvedModel) -> list[str | None] | None:
        """One key per attempt (None when a request value cannot be hashed), or None if no cache."""
        if self.cache is None or not self.cache.reads_enabled:
            return None
        keys: list[str | None] = []
        for attempt in resolved.attempts:
            try:
                keys.append(cache_key(attempt, request))
            except CacheKeyError as err:
                if self.cache.mode == "strict":
                    raise
                logger.warning("response cache skipped for a %s call: %s", attempt.model, err)
                keys.append(None)
        return keys

    def _serve_cached(
        self,
        request: ModelRequest,
        resolved: ResolvedModel,
        fallback_index: int,
        entry: CachedResponse,
        call_id: str,
        requested: str,
        started_at: float,
    ) -> ModelResponse:
        details: dict[str, Any] = {
            "fallback_index": fallback_index,
            "finish_reason": entry.finish_reason,
            "cache_key": entry.key,
            "original_cost_usd": entry.cost_usd,
            "original_latency_s": entry.latency_s,
        }
        call = self._call(
            request,
            resolved,
            _Progress(),
            call_id,
            requested,
            started_at,
            details,
            resolved_model=entry.model,
            usage=entry.usage,
            cost=0.0,
            latency=max(0.0, self._now() - started_at),
            error=None,
            cached=True,
            # What the call costs under this run's prices: the entry's stored cost was priced
            # with the prices of the run that wrote it.
            configured_cost=price_call(
                entry.model, entry.usage.input_tokens, entry.usage.output_tokens, overrides=self.prices
            ),
            response=entry.text,
        )
        self._publish(call)
        return ModelResponse(
            text=entry.text,
            usage=Usage(entry.usage.input_tokens, entry.usage.output_tokens),
            model=entry.model,
            cost_usd=0.0,
            latency_s=entry.latency_s,
            tier=resolved.tier,
            finish_reason=entry.finish_reason,
            provider_metadata=dict(entry.provider_metadata),
            cached=True,
            attempts=0,
        )

    def _remote_backend(self, resolved: ResolvedModel) -> RemoteBackend | None:
        if self._remote is not None or all(a.is_offline for a in resolved.attempts):
            return self._remote
        from omlab.llm.litellm_backend import litellm_complete, load_litellm

        load_litellm()
        return litellm_complete

    async def _dispatch(
        self,
        attempt: ResolvedAttempt,
        request: ModelRequest,
        timeout: float | None,
        remote: RemoteBackend | None,
    ) -> BackendResult:
        if attempt.is_offline:
            return self._offline(attempt, request)
        assert remote is not None  # _remote_backend returns one whenever an attempt is remote
        # The backend gets the timeout too, but wait_for is the guarantee.
        return await asyncio.wait_for(remote(attempt, request, timeout), timeout)

    def _offline(self, attempt: ResolvedAttempt, request: ModelRequest) -> BackendResult:
        from omlab.llm.offline import get_offline_model

        _, name = split_model(attempt.model)
        settings = attempt.model_settings
        temperature = settings.get("temperature", request.temperature)
        max_output_tokens = settings.get(
            "maxOutputTokens", settings.get("max_output_tokens", request.max_output_tokens)
        )
        # Offline models are fast and synchronous; a plain call keeps them deterministic.
        profile = settings.get("profile")
        started = perf_counter()
        started, cpu_started = perf_counter(), thread_time()
        try:
            if profile is not None:  # a calibrated profile sizes the output (omlab.llm.offline.sizing)
                from omlab.llm.offline.sizing import OutputSizing, sized_generate

                result = sized_generate(
                    name,
                    request.messages,
                    OutputSizing.from_dict(profile),
                    request.input_tokens,
                    max_output_tokens=max_output_tokens,
                )
            else:
                result = get_offline_model(name).generate(
                    request.messages, max_output_tokens=max_output_tokens, temperature=temperature
                )
        finally:
            self.offline_seconds[attempt.model] = (
                self.offline_seconds.get(attempt.model, 0.0) + perf_counter() - started
            )
            self.offline_cpu_seconds[attempt.model] = (
                self.offline_cpu_seconds.get(attempt.model, 0.0) + thread_time() - cpu_started
            )
        return result.text, Usage(result.input_tokens, result.output_tokens), "stop", {"offline": True}

    def _succeed(
        self,
        request: ModelRequest,
        resolved: ResolvedModel,
        attempt: ResolvedAttempt,
        fallback_index: int,
        progress: _Progress,
        call_id: str,
        requested: str,
        started_at: float,
        text: str,
        usage: Usage,
        finish_reason: str | None,
        provider_metadata: dict[str, Any],
        key: str | None,
    ) -> ModelResponse:
        latency = max(0.0, self._now() - started_at)
        cost = price_call(attempt.model, usage.input_tokens, usage.output_tokens, overrides=self.prices)
        details: dict[str, Any] = {"fallback_index": fallback_index, "finish_reason": finish_reason}
        call = self._call(
            request,
            resolved,
            progress,
            call_id,
            requested,
            started_at,
            details,
            resolved_model=attempt.model,
            usage=usage,
            cost=cost,
            latency=latency,
            error=None,
            configured_cost=cost,
            response=text,
        )
        self._publish(call)
        if key is not None and self.cache is not None and self.cache.writes_enabled:
            self.cache.store(
                CachedResponse(
                    key=key,
                    model=attempt.model,
                    text=text,
                    usage=usage,
                    finish_reason=finish_reason,
                    tier=resolved.tier,
                    latency_s=latency,
                    cost_usd=cost,
                    provider_metadata=provider_metadata,
                    role=request.role,
                    created_at=time.time(),
                )
            )
        return ModelResponse(
            text=text,
            usage=usage,
            model=attempt.model,
            cost_usd=cost,
            latency_s=latency,
            tier=resolved.tier,
            finish_reason=finish_reason,
            provider_metadata=provider_metadata,
            cached=False,
            attempts=progress.attempts,
        )

    def _record_failure(
        self,
        request: ModelRequest,
        resolved: ResolvedModel | None,
        progress: _Progress,
        call_id: str,
        requested: str,
        started_at: float,
        error: str,
    ) -> ModelCall:
        call = self._call(
            request,
            resolved,
            progress,
            call_id,
            requested,
            started_at,
            {},
            resolved_model=progress.last_model,
            usage=Usage(),
            cost=None,
            latency=max(0.0, self._now() - started_at),
            error=error,
        )
        self._publish(call)
        return call

    def _call(
        self,
        request: ModelRequest,
        resolved: ResolvedModel | None,
        progress: _Progress,
        call_id: str,
        requested: str,
        started_at: float,
        details: dict[str, Any],
        *,
        resolved_model: str | None,
        usage: Usage,
        cost: float | None,
        latency: float,
        error: str | None,
        cached: bool = False,
        configured_cost: float | None = None,
        response: str | None = None,
    ) -> ModelCall:
        metadata = dict(request.metadata)
        llm_details = dict(details)
        if progress.errors:
            llm_details["attempt_errors"] = list(progress.errors)
        if resolved is not None and resolved.routing_thresholds is not None:
            llm_details["routing_thresholds"] = list(resolved.routing_thresholds)
        if llm_details:
            # One namespaced key so the engine's own metadata (cycle ids…) is never overwritten.
            metadata["llm"] = llm_details
        return ModelCall(
            call_id=call_id,
            role=request.role,
            requested_model=requested,
            resolved_model=resolved_model,
            tier=resolved.tier if resolved is not None else None,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=cost,
            latency_s=latency,
            started_at=started_at,
            attempts=progress.attempts,
            cached=cached,
            error=error,
            metadata=metadata,
            configured_cost_usd=configured_cost,
            routing_tokens=request.input_tokens if resolved is not None and resolved.tier is not None else None,
            prompt=request.messages,
            response=response,
        )

    def _publish(self, call: ModelCall) -> None:
        self.calls.append(call)
        if self.on_call is None:
            return
        try:
            self.on_call(call)
        except Exception:
            logger.exception("on_call hook failed for model call %s (ignored)", call.call_id)

    @staticmethod
    def _summary(progress: _Progress, reason: str) -> str:
        tail = "; ".join(progress.errors[-4:])
        return f"{reason} after {progress.attempts} attempt(s)" + (f": {tail}" if tail else "")


class _Exhausted(Exception):
    def __init__(self, summary: str) -> None:
        super().__init__(summary)
        self.summary = summary


def _min_or_none(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def _redact(text: str, attempt: ResolvedAttempt, request: ModelRequest) -> str:
    """Blank out every secret the request carries (headers, credential-like settings and provider
    options, from the entry and the request, and the credentials of the environment litellm falls
    back on: :mod:`omlab.llm.secrets`) that a provider may echo."""
    secrets = secret_values(attempt.headers, attempt.model_settings, attempt.provider_options, request.provider_options)
    return redact_secrets(text, secrets | environment_secrets())


def _one_line(err: BaseException | str) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else "(no message)"


__all__ = ["ModelCallError", "ModelClient", "RemoteBackend"]

"""Retry policy for model calls: what is worth retrying, how long to wait, and the hard deadline.

Pure functions over exceptions, so the classification works for litellm errors, the openai SDK's
errors, httpx errors and plain ``TimeoutError`` alike without importing any of them (litellm
takes seconds to import). Exceptions are recognised by class name along their MRO, by HTTP status
codes carried on them (``status_code``, ``response.status_code``, a numeric ``code``) and by
connection-failure wording, searched through ``__cause__``/``__context__``.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

RETRYABLE_STATUS_CODES = frozenset({408, 425, 429})

_RETRYABLE_CLASS_NAMES = frozenset(
    {
        "RateLimitError",
        "APIConnectionError",
        "APITimeoutError",
        "Timeout",
        "InternalServerError",
        "ServiceUnavailableError",
        "BadGatewayError",
        "MidStreamFallbackError",
        "TimeoutError",
        "ConnectionError",
        "RemoteProtocolError",
        "ConnectError",
        "ReadError",
        "WriteError",
        "ReadTimeout",
        "ConnectTimeout",
        "WriteTimeout",
        "PoolTimeout",
    }
)

# Checked before anything else: these never succeed on a second try.
_NEVER_RETRY_CLASS_NAMES = frozenset(
    {
        "AuthenticationError",
        "PermissionDeniedError",
        "BadRequestError",
        "NotFoundError",
        "ContextWindowExceededError",
        "ContentPolicyViolationError",
        "UnprocessableEntityError",
        "UnsupportedParamsError",
        "InvalidRequestError",
        "BudgetExceededError",
        "ModelSpecError",
        "InputTooLargeError",
        "CancelledError",
        "KeyboardInterrupt",
    }
)

_RETRYABLE_MESSAGE_MARKERS = (
    "econnreset",
    "econnrefused",
    "enotfound",
    "eai_again",
    "etimedout",
    "epipe",
    "connection reset",
    "connection refused",
    "connection aborted",
    "connection error",
    "server disconnected",
    "remote end closed connection",
    "socket hang up",
    "fetch failed",
    "und_err_",
    "terminated",
    "broken pipe",
    "timed out",
)

# A provider key that is not set: every retry fails the same way (and litellm may word it as a
# connection error).
_MISSING_KEY = re.compile(r"missing [\w .-]*api[ _-]?key|api_key client option must be set|no api key", re.IGNORECASE)

_MAX_CHAIN = 12


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a model call is retried.

    ``max_retries`` retries after the first attempt (per fallback entry unless the entry sets its
    own); exponential backoff ``base_delay_s * 2**k`` capped at ``max_delay_s`` with ±``jitter``;
    each request is cut after ``attempt_timeout_s``; the whole call (all retries and fallbacks)
    never waits past ``deadline_s``. The defaults reproduce the reference schedule (8 retries,
    1, 2, 4 … 120 s, ±20 %) but bound it with a five-minute deadline.
    """

    max_retries: int = 8
    base_delay_s: float = 1.0
    max_delay_s: float = 120.0
    jitter: float = 0.2
    attempt_timeout_s: float | None = 120.0
    deadline_s: float | None = 300.0

    def __post_init__(self) -> None:
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f"RetryPolicy.max_retries must be a non-negative integer, got {self.max_retries!r}")
        _check_number("base_delay_s", self.base_delay_s, allow_zero=True)
        _check_number("max_delay_s", self.max_delay_s, allow_zero=True)
        if self.max_delay_s < self.base_delay_s:
            raise ValueError(
                f"RetryPolicy.max_delay_s ({self.max_delay_s}) must be >= base_delay_s ({self.base_delay_s})"
            )
        _check_number("jitter", self.jitter, allow_zero=True)
        if self.jitter >= 1:
            raise ValueError(f"RetryPolicy.jitter must be in [0, 1), got {self.jitter!r}")
        if self.attempt_timeout_s is not None:
            _check_number("attempt_timeout_s", self.attempt_timeout_s, allow_zero=False)
        if self.deadline_s is not None:
            _check_number("deadline_s", self.deadline_s, allow_zero=False)


def _check_number(name: str, value: object, *, allow_zero: bool) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (value == 0 and not allow_zero):  # type: ignore[operator]
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"RetryPolicy.{name} must be a finite number {bound}, got {value!r}")


def backoff_delay(attempt: int, policy: RetryPolicy, rng: random.Random) -> float:
    """Seconds to wait before retry number ``attempt + 1`` (``attempt`` counts from 0)."""
    if attempt < 0:
        raise ValueError(f"backoff_delay attempt must be >= 0, got {attempt}")
    # min() before the power would overflow for huge attempt numbers.
    exponent = min(attempt, 64)
    nominal = min(policy.max_delay_s, policy.base_delay_s * (2.0**exponent))
    spread = policy.jitter * (2.0 * rng.random() - 1.0)
    return max(0.0, nominal * (1.0 + spread))


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` then its ``__cause__``/``__context__`` ancestors (cycle-safe, bounded)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < _MAX_CHAIN:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def is_retryable(exc: BaseException) -> bool:
    """Whether a failed model call is worth another try (never for auth, bad requests, cancellation)."""
    for link in exception_chain(exc):
        verdict = _classify(link)
        if verdict is not None:
            return verdict
    return False


def is_missing_key(exc: BaseException) -> bool:
    """Whether a failed call says its provider's API key is not set (never worth a retry)."""
    return any(_MISSING_KEY.search(str(link)) for link in exception_chain(exc))


def _classify(exc: BaseException) -> bool | None:
    names = {cls.__name__ for cls in type(exc).__mro__}
    if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt) or names & _NEVER_RETRY_CLASS_NAMES:
        return False
    if _MISSING_KEY.search(str(exc)):
        return False
    flag = getattr(exc, "is_retryable", None)
    if isinstance(flag, bool):
        return flag
    status = status_code_of(exc)
    if status is not None:
        return status in RETRYABLE_STATUS_CODES or 500 <= status <= 599
    if names & _RETRYABLE_CLASS_NAMES or isinstance(exc, TimeoutError | ConnectionError):
        return True
    message = str(exc).lower()
    if any(marker in message for marker in _RETRYABLE_MESSAGE_MARKERS):
        return True
    return None


def status_code_of(exc: BaseException) -> int | None:
    """The HTTP status an exception carries, if any (``status_code``, ``response``, numeric ``code``)."""
    for candidate in (
        getattr(exc, "status_code", None),
        getattr(getattr(exc, "response", None), "status_code", None),
        getattr(exc, "code", None),
    ):
        status = _as_status(candidate)
        if status is not None:
            return status
    return None


def _as_status(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 100 <= value <= 599 else None
    if isinstance(value, str) and value.isdigit():
        return _as_status(int(value))
    return None


def retry_after_s(exc: BaseException, *, now: Callable[[], float] = time.time) -> float | None:
    """The wait a server asked for: ``retry-after-ms``, or ``retry-after`` in seconds or as an HTTP date."""
    for link in exception_chain(exc):
        for headers in _header_sources(link):
            delay = _retry_after_from_headers(headers, now)
            if delay is not None:
                return delay
    return None


def _header_sources(exc: BaseException) -> Iterator[Mapping[str, str]]:
    for candidate in (
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "litellm_response_headers", None),
        getattr(exc, "headers", None),
        getattr(exc, "response_headers", None),
    ):
        if candidate is not None and hasattr(candidate, "get"):
            yield candidate


def _retry_after_from_headers(headers: Mapping[str, str], now: Callable[[], float]) -> float | None:
    milliseconds = _header(headers, "retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds)
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value / 1000.0
    raw = _header(headers, "retry-after")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        return max(0.0, when.timestamp() - now())
    return value if math.isfinite(value) and value >= 0 else None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        # Plain dicts are case-sensitive; httpx.Headers already is not.
        for key, candidate in headers.items():
            if isinstance(key, str) and key.lower() == name:
                value = candidate
                break
    return value.strip() if isinstance(value, str) and value.strip() else None


__all__ = [
    "RETRYABLE_STATUS_CODES",
    "RetryPolicy",
    "backoff_delay",
    "exception_chain",
    "is_retryable",
    "retry_after_s",
    "status_code_of",
]

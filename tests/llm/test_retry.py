from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime
from email.utils import format_datetime

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from omlab.llm.env import prepare_environment
from omlab.llm.retry import RetryPolicy, backoff_delay, is_retryable, retry_after_s, status_code_of

prepare_environment()
import litellm


def _response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers or {}, request=httpx.Request("POST", "http://127.0.0.1/v1"))


# --- policy -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_retries": -1}, "max_retries"),
        ({"max_retries": 1.5}, "max_retries"),
        ({"base_delay_s": -1}, "base_delay_s"),
        ({"base_delay_s": 10, "max_delay_s": 5}, "max_delay_s"),
        ({"jitter": 1.0}, "jitter"),
        ({"jitter": -0.1}, "jitter"),
        ({"attempt_timeout_s": 0}, "attempt_timeout_s"),
        ({"deadline_s": float("inf")}, "deadline_s"),
    ],
)
def test_policy_validation_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        RetryPolicy(**kwargs)


def test_default_schedule_is_the_reference_one_without_jitter():
    policy = RetryPolicy(jitter=0.0)
    delays = [backoff_delay(k, policy, random.Random(0)) for k in range(policy.max_retries)]
    assert delays == [1, 2, 4, 8, 16, 32, 64, 120]
    assert sum(delays) == 247  # "~4 min" in the reference


@given(attempt=st.integers(min_value=0, max_value=200), seed=st.integers(min_value=0, max_value=2**32))
def test_jittered_delay_stays_within_the_band(attempt, seed):
    policy = RetryPolicy()
    nominal = min(120.0, 2.0 ** min(attempt, 64))
    delay = backoff_delay(attempt, policy, random.Random(seed))
    assert nominal * 0.8 - 1e-9 <= delay <= nominal * 1.2 + 1e-9


# --- classification -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "exc",
    [
        litellm.RateLimitError("slow down", llm_provider="openai", model="gpt"),
        litellm.APIConnectionError(message="boom", llm_provider="openai", model="gpt"),
        litellm.Timeout(message="late", llm_provider="openai", model="gpt"),
        litellm.InternalServerError(message="oops", llm_provider="openai", model="gpt"),
        litellm.ServiceUnavailableError(message="busy", llm_provider="openai", model="gpt"),
        TimeoutError(),
        ConnectionResetError(),
        RuntimeError("read ECONNRESET"),
        RuntimeError("socket hang up"),
    ],
)
def test_transient_errors_are_retryable(exc):
    assert is_retryable(exc)


@pytest.mark.parametrize(
    "exc",
    [
        litellm.AuthenticationError(message="bad key", llm_provider="openai", model="gpt"),
        litellm.BadRequestError(message="bad", llm_provider="openai", model="gpt"),
        litellm.ContextWindowExceededError(message="too long", llm_provider="openai", model="gpt"),
        litellm.NotFoundError(message="no model", llm_provider="openai", model="gpt"),
        asyncio.CancelledError(),
        ValueError("a programming error"),
        KeyError("x"),
    ],
)
def test_permanent_errors_and_cancellation_are_not_retryable(exc):
    assert not is_retryable(exc)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (408, True),
        (425, True),
        (429, True),
        (500, True),
        (503, True),
        (599, True),
        (400, False),
        (401, False),
        (404, False),
        (422, False),
    ],
)
def test_status_codes_on_the_cause_chain(status, expected):
    class ProviderError(Exception):
        def __init__(self, code: int) -> None:
            super().__init__(f"HTTP {code}")
            self.response = _response(code)

    try:
        try:
            raise ProviderError(status)
        except ProviderError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert is_retryable(outer) is expected
        assert status_code_of(outer.__cause__) == status


def test_numeric_code_attribute_counts_as_a_status():
    err = RuntimeError("stream error")
    err.code = "503"  # type: ignore[attr-defined]
    assert is_retryable(err)


def test_explicit_is_retryable_flag_wins():
    err = RuntimeError("whatever")
    err.is_retryable = True  # type: ignore[attr-defined]
    assert is_retryable(err)


# --- retry-after --------------------------------------------------------------------------------


def test_retry_after_seconds_ms_and_date():
    assert retry_after_s(_http_error({"retry-after": "7"})) == 7.0
    assert retry_after_s(_http_error({"Retry-After": "1.5", "retry-after-ms": "250"})) == 0.25
    when = datetime(2030, 1, 1, 12, 0, 30, tzinfo=UTC)
    now = datetime(2030, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    assert retry_after_s(_http_error({"retry-after": format_datetime(when, usegmt=True)}), now=lambda: now) == 30.0


def test_retry_after_absent_or_invalid_is_none():
    assert retry_after_s(_http_error({})) is None
    assert retry_after_s(_http_error({"retry-after": "soon"})) is None
    assert retry_after_s(_http_error({"retry-after": "-3"})) is None
    assert retry_after_s(ValueError("no headers")) is None


def test_retry_after_read_from_a_litellm_rate_limit_error():
    err = litellm.RateLimitError(
        "slow down", llm_provider="openai", model="gpt", response=_response(429, {"retry-after": "12"})
    )
    assert retry_after_s(err) == 12.0


def test_retry_after_found_on_a_wrapped_cause():
    try:
        try:
            raise _http_error({"retry-after-ms": "1500"})
        except Exception as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert retry_after_s(outer) == 1.5


def _http_error(headers: dict[str, str]) -> Exception:
    err = RuntimeError("HTTP 429")
    err.response = _response(429, headers)  # type: ignore[attr-defined]
    return err

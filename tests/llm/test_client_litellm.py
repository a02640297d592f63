"""ModelClient through litellm: litellm's mock_response and a scripted server on 127.0.0.1."""

from __future__ import annotations

import random
import time

import pytest

from omlab.llm.client import ModelCallError, ModelClient
from omlab.llm.litellm_backend import (
    MalformedResponseError,
    build_litellm_kwargs,
    parse_completion,
    provider_option_kwargs,
)
from omlab.llm.retry import RetryPolicy
from omlab.llm.spec import ModelWithRetries, ResolvedAttempt
from omlab.llm.types import ModelRequest, Usage

from .conftest import FakeClock
from .fake_openai_server import FakeOpenAIServer, Reply, completion_body, error_body

MESSAGES = [{"role": "user", "content": "What did I say about Paris?"}]
SECRET = "Bearer very-secret-token-123"


def fake_entry(server: FakeOpenAIServer, **kwargs) -> ModelWithRetries:
    settings = {"api_base": server.api_base, "api_key": "sk-dummy-key-for-tests"}
    return ModelWithRetries("openai/fake", model_settings=settings, headers={"X-Team-Auth": SECRET}, **kwargs)


def fast_client(clock: FakeClock, **policy) -> ModelClient:
    return ModelClient(retry=RetryPolicy(jitter=0.0, **policy), sleep=clock.sleep, now=clock.now, rng=random.Random(3))


# --- litellm mock_response ----------------------------------------------------------------------


async def test_mock_response_usage_and_cost_are_parsed():
    mock = completion_body("Paris, in May.", prompt_tokens=1000, completion_tokens=500, model="gpt-4o-mini")
    entry = ModelWithRetries("openai/gpt-4o-mini", model_settings={"mock_response": mock})
    client = ModelClient()
    response = await client.complete(ModelRequest(model=[entry], messages=MESSAGES, role="reader"))
    assert response.text == "Paris, in May."
    assert response.usage == Usage(input_tokens=1000, output_tokens=500)
    assert response.finish_reason == "stop"
    assert response.cost_usd == pytest.approx(1000 * 0.15e-6 + 500 * 0.60e-6)
    (call,) = client.calls
    assert (call.resolved_model, call.input_tokens, call.output_tokens) == ("openai/gpt-4o-mini", 1000, 500)
    assert call.cost_usd == pytest.approx(0.00045) and call.error is None


async def test_mock_response_string_uses_litellm_default_usage():
    entry = ModelWithRetries("openai/gpt-4o-mini", model_settings={"mock_response": "ok"})
    response = await ModelClient().complete(ModelRequest(model=[entry], messages=MESSAGES))
    assert response.text == "ok"
    assert response.usage == Usage(input_tokens=10, output_tokens=20)  # litellm's mock defaults


async def test_mock_rate_limit_is_retried_then_falls_back(clock):
    limited = ModelWithRetries(
        "openai/gpt-4o-mini", max_retries=2, model_settings={"mock_response": "litellm.RateLimitError"}
    )
    backup = ModelWithRetries("openai/gpt-4o-mini", model_settings={"mock_response": "from backup"})
    client = fast_client(clock, base_delay_s=0.5)
    response = await client.complete(ModelRequest(model=[limited, backup], messages=MESSAGES))
    assert response.text == "from backup" and response.attempts == 4
    assert clock.sleeps == [0.5, 1.0]
    errors = client.calls[0].metadata["llm"]["attempt_errors"]
    assert len(errors) == 3 and all("RateLimitError" in e for e in errors)


# --- the scripted local server ------------------------------------------------------------------


async def test_request_reaches_the_server_with_settings_and_headers(fake_server, clock):
    fake_server.push(Reply(body=completion_body("Paris it is", prompt_tokens=40, completion_tokens=3)))
    client = fast_client(clock)
    response = await client.complete(
        ModelRequest(
            model=[fake_entry(fake_server)],
            messages=MESSAGES,
            temperature=0.3,
            max_output_tokens=64,
            metadata={"cycle_id": "cyc-9"},
        )
    )
    assert response.text == "Paris it is" and response.usage == Usage(40, 3)
    assert response.cost_usd is None  # openai/fake has no price: recorded as unknown, not an error
    (sent,) = fake_server.requests
    assert sent.body["model"] == "fake" and sent.body["messages"] == MESSAGES
    assert sent.body["temperature"] == 0.3 and sent.body["max_tokens"] == 64
    assert sent.headers["x-team-auth"] == SECRET
    assert sent.headers["authorization"] == "Bearer sk-dummy-key-for-tests"
    (call,) = client.calls
    assert call.metadata["cycle_id"] == "cyc-9"
    assert SECRET not in repr(call) and "sk-dummy" not in repr(call)


async def test_429_is_retried_honouring_retry_after(fake_server, clock):
    fake_server.push(
        Reply(429, error_body("slow down", "rate_limit"), headers={"Retry-After": "7"}),
        Reply(429, error_body("slow down", "rate_limit"), headers={"retry-after-ms": "250"}),
        Reply(body=completion_body("finally")),
    )
    client = fast_client(clock)
    response = await client.complete(ModelRequest(model=[fake_entry(fake_server)], messages=MESSAGES))
    assert response.text == "finally" and response.attempts == 3
    assert clock.sleeps == [7.0, 0.25]  # the server's waits, not the backoff schedule
    assert len(fake_server.requests) == 3  # litellm and the openai SDK did not retry on their own


async def test_5xx_without_retry_after_uses_backoff(fake_server, clock):
    fake_server.push(Reply(503, error_body("overloaded")), Reply(500, error_body("oops")), Reply())
    client = fast_client(clock, base_delay_s=2.0)
    response = await client.complete(ModelRequest(model=[fake_entry(fake_server)], messages=MESSAGES))
    assert response.text == "hello from fake"
    assert clock.sleeps == [2.0, 4.0]


async def test_auth_error_is_not_retried_and_the_next_fallback_answers(fake_server, clock):
    fake_server.push(
        Reply(401, error_body("Incorrect API key provided: sk-dummy-key-for-tests", "invalid_request_error"))
    )
    backup = ModelWithRetries("openai/gpt-4o-mini", model_settings={"mock_response": "backup answer"})
    client = fast_client(clock)
    response = await client.complete(
        ModelRequest(model=[fake_entry(fake_server, max_retries=5), backup], messages=MESSAGES)
    )
    assert response.text == "backup answer" and response.attempts == 2
    assert clock.sleeps == [] and len(fake_server.requests) == 1
    (error,) = client.calls[0].metadata["llm"]["attempt_errors"]
    assert "AuthenticationError" in error and "sk-dummy-key-for-tests" not in error  # echoed key redacted


async def test_malformed_reply_without_choices_is_a_clear_error(fake_server, clock):
    no_choices = {"id": "x", "object": "chat.completion", "created": 1, "model": "fake"}
    fake_server.push(Reply(body=no_choices), Reply(body=no_choices))
    client = fast_client(clock)
    with pytest.raises(ModelCallError) as info:
        await client.complete(ModelRequest(model=[fake_entry(fake_server, max_retries=1)], messages=MESSAGES))
    call = info.value.call
    assert isinstance(info.value.__cause__, MalformedResponseError)
    assert "malformed reply" in call.error and call.attempts == 2
    assert (call.input_tokens, call.output_tokens, call.cost_usd) == (0, 0, None)


async def test_empty_choices_then_a_good_reply_is_recovered(fake_server, clock):
    empty = {"id": "x", "object": "chat.completion", "created": 1, "model": "fake", "choices": []}
    fake_server.push(Reply(body=empty), Reply(body=completion_body("recovered")))
    client = fast_client(clock)
    response = await client.complete(ModelRequest(model=[fake_entry(fake_server)], messages=MESSAGES))
    assert response.text == "recovered" and response.attempts == 2
    assert "without choices" in client.calls[0].metadata["llm"]["attempt_errors"][0]


async def test_a_hanging_server_is_cut_by_the_deadline(fake_server):
    # litellm's first request does seconds of synchronous set-up that no timeout can interrupt;
    # warm it up so the measurement below is about the deadline, not about that.
    await ModelClient().complete(ModelRequest(model=[fake_entry(fake_server)], messages=MESSAGES))
    fake_server.push(*[Reply(delay_s=30.0)] * 10)
    policy = RetryPolicy(
        max_retries=10, base_delay_s=0.05, max_delay_s=0.05, jitter=0.0, attempt_timeout_s=0.4, deadline_s=1.0
    )
    client = ModelClient(retry=policy)
    started = time.monotonic()
    with pytest.raises(ModelCallError) as info:
        await client.complete(ModelRequest(model=[fake_entry(fake_server)], messages=MESSAGES))
    elapsed = time.monotonic() - started
    call = info.value.call
    assert call.error is not None and ("deadline" in call.error or "Timeout" in call.error)
    assert 2 <= call.attempts <= 4  # 0.4 s + 0.05 + 0.4 s + 0.05 + what is left of 1 s
    assert call.latency_s < 3.0  # far below the server's 30 s sleep
    assert elapsed < 10.0


# --- argument mapping (pure) --------------------------------------------------------------------


def test_google_thinking_config_maps_to_litellm_thinking():
    kwargs = provider_option_kwargs(
        "google/gemini-2.5-flash",
        {
            "google": {
                "thinkingConfig": {"thinkingBudget": 0, "includeThoughts": False},
                "safetySettings": [],
            },
            "openai": {"reasoningEffort": "high"},  # another provider's namespace: ignored
            "seed": 7,  # not a namespace: passed through
        },
    )
    assert kwargs == {"thinking": {"type": "enabled", "budget_tokens": 0}, "safety_settings": [], "seed": 7}
    assert provider_option_kwargs("google/gemini-3-pro", {"google": {"thinkingConfig": {"thinkingLevel": "low"}}}) == {
        "reasoning_effort": "low"
    }


def test_openai_and_anthropic_namespaces():
    assert provider_option_kwargs("openai/gpt-5-mini", {"openai": {"reasoningEffort": "low"}}) == {
        "reasoning_effort": "low"
    }
    assert provider_option_kwargs(
        "anthropic/claude-sonnet-4-5", {"anthropic": {"thinking": {"type": "enabled", "budgetTokens": 1024}}}
    ) == {"thinking": {"type": "enabled", "budget_tokens": 1024}}


def test_build_kwargs_precedence_and_headers():
    attempt = ResolvedAttempt(
        "google/gemini-2.5-flash",
        model_settings={"temperature": 0.0, "maxOutputTokens": 100, "api_base": "http://127.0.0.1:1/v1"},
        provider_options={"google": {"thinkingConfig": {"thinkingBudget": 512}}},
        headers={"X-Key": "k"},
    )
    request = ModelRequest(
        model="ignored/here",
        messages=MESSAGES,
        temperature=0.7,
        max_output_tokens=9,
        provider_options={"google": {"thinkingConfig": {"thinkingBudget": 0}}},
        response_format={"type": "json_object"},
    )
    kwargs = build_litellm_kwargs(attempt, request, timeout_s=12.5)
    assert kwargs == {
        "model": "gemini/gemini-2.5-flash",
        "messages": MESSAGES,
        "num_retries": 0,
        "max_retries": 0,
        "timeout": 12.5,
        "temperature": 0.0,
        "max_tokens": 100,
        "response_format": {"type": "json_object"},
        "thinking": {"type": "enabled", "budget_tokens": 512},
        "api_base": "http://127.0.0.1:1/v1",
        "extra_headers": {"X-Key": "k"},
    }


def test_reserved_settings_are_refused():
    with pytest.raises(ValueError, match="maxRetries"):
        build_litellm_kwargs(
            ResolvedAttempt("openai/x", model_settings={"maxRetries": 3}),
            ModelRequest("openai/x", MESSAGES),
            None,
        )


def test_parse_completion_rejects_missing_content():
    body = completion_body("x")
    body["choices"][0]["message"]["content"] = None
    with pytest.raises(MalformedResponseError, match="without message content"):
        parse_completion("openai/fake", body)
    text, usage, finish, meta = parse_completion(
        "openai/fake", completion_body("fine", prompt_tokens=3, completion_tokens=1)
    )
    assert (text, usage, finish) == ("fine", Usage(3, 1), "stop")
    assert meta["response_id"] == "chatcmpl-fake" and meta["usage_reported"] is True

"""ModelClient on offline models and an injected remote backend: no litellm, no sockets."""

from __future__ import annotations

import logging
import random

import pytest

from omlab.llm.client import ModelCallError, ModelClient
from omlab.llm.offline import OfflineResult
from omlab.llm.offline import registry as offline_registry
from omlab.llm.retry import RetryPolicy
from omlab.llm.spec import InputTooLargeError, ModelByInputTokens, ModelWithRetries
from omlab.llm.types import ModelRequest, Usage

from .conftest import FakeClock

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there"}]


class EchoModel:
    """Answers with the last user text; counts words as tokens."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.seen: list[dict] = []

    def generate(self, messages, *, max_output_tokens=None, temperature=None):
        self.seen.append({"max_output_tokens": max_output_tokens, "temperature": temperature})
        text = f"{self.name}: {messages[-1]['content']}"
        words = sum(len(str(m["content"]).split()) for m in messages)
        return OfflineResult(text=text, input_tokens=words, output_tokens=len(text.split()))


@pytest.fixture
def echo_models(monkeypatch):
    models = {name: EchoModel(name) for name in ("echo", "small", "large")}
    for name, model in models.items():
        monkeypatch.setitem(offline_registry._REGISTRY, name, lambda model=model: model)
    return models


def request(model, **kwargs) -> ModelRequest:
    return ModelRequest(model=model, messages=MESSAGES, **kwargs)


async def test_offline_call_is_answered_priced_and_recorded(echo_models):
    seen_calls = []
    client = ModelClient(on_call=seen_calls.append)
    response = await client.complete(
        request("omlab/echo", role="observer", temperature=0.3, max_output_tokens=99, metadata={"cycle_id": "c1"})
    )
    assert response.text == "echo: hello there"
    assert response.usage == Usage(input_tokens=4, output_tokens=3)
    assert (response.model, response.cost_usd, response.attempts, response.tier) == (
        "omlab/echo",
        0.0,
        1,
        None,
    )
    assert echo_models["echo"].seen == [{"max_output_tokens": 99, "temperature": 0.3}]
    (call,) = client.calls
    assert seen_calls == [call]
    assert (call.role, call.requested_model, call.resolved_model) == ("observer", "omlab/echo", "omlab/echo")
    assert (call.input_tokens, call.output_tokens, call.cost_usd, call.error, call.attempts) == (
        4,
        3,
        0.0,
        None,
        1,
    )
    assert call.metadata["cycle_id"] == "c1"


async def test_offline_model_priced_as_a_real_one(echo_models):
    client = ModelClient(prices={"omlab/echo": "openai/gpt-4o-mini"})
    response = await client.complete(request("omlab/echo"))
    assert response.cost_usd == pytest.approx(4 * 0.15e-6 + 3 * 0.60e-6)
    assert client.calls[0].cost_usd == response.cost_usd


async def test_router_picks_a_tier_and_records_it(echo_models):
    router = ModelByInputTokens(upTo={100: "omlab/small", 1_000: "omlab/large"})
    client = ModelClient()
    small = await client.complete(request(router, input_tokens=100))
    large = await client.complete(request(router, input_tokens=101))
    assert (small.model, small.tier) == ("omlab/small", 100)
    assert (large.model, large.tier) == ("omlab/large", 1_000)
    assert [c.tier for c in client.calls] == [100, 1_000]
    assert client.calls[0].requested_model == "ModelByInputTokens(100=omlab/small,1000=omlab/large)"
    assert client.calls[0].metadata["llm"]["routing_thresholds"] == [100, 1_000]


async def test_router_without_input_tokens_or_too_large_fails_clearly(echo_models):
    router = ModelByInputTokens(upTo={100: "omlab/small"})
    client = ModelClient()
    with pytest.raises(ModelCallError, match="input_tokens") as missing:
        await client.complete(request(router))
    assert missing.value.call.error is not None and missing.value.call.attempts == 0
    with pytest.raises(ModelCallError, match=r"input token count \(101\) exceeds") as too_large:
        await client.complete(request(router, input_tokens=101))
    assert isinstance(too_large.value.__cause__, InputTooLargeError)
    assert len(client.calls) == 2 and all(c.error for c in client.calls)


async def test_first_fallback_fails_permanently_second_answers(echo_models):
    client = ModelClient()
    spec = [ModelWithRetries("omlab/missing", max_retries=5), "omlab/echo"]
    response = await client.complete(request(spec))
    assert response.model == "omlab/echo"
    assert response.attempts == 2  # the unknown model is not retried
    (call,) = client.calls
    assert call.requested_model == "fallbacks[omlab/missing|omlab/echo]"
    assert call.resolved_model == "omlab/echo" and call.error is None
    assert call.metadata["llm"]["fallback_index"] == 1
    assert "unknown offline model 'omlab/missing'" in call.metadata["llm"]["attempt_errors"][0]


async def test_disabled_entries_are_skipped(echo_models):
    client = ModelClient()
    response = await client.complete(request([ModelWithRetries("omlab/small", enabled=False), "omlab/large"]))
    assert response.model == "omlab/large" and response.attempts == 1
    assert echo_models["small"].seen == []


async def test_entry_model_settings_override_request_settings(echo_models):
    client = ModelClient()
    spec = [ModelWithRetries("omlab/echo", model_settings={"temperature": 1.0, "maxOutputTokens": 7})]
    await client.complete(request(spec, temperature=0.2, max_output_tokens=500))
    assert echo_models["echo"].seen == [{"max_output_tokens": 7, "temperature": 1.0}]


async def test_callable_spec_receives_the_request_context(echo_models):
    client = ModelClient()
    response = await client.complete(request(lambda ctx: f"omlab/{ctx['size']}", context={"size": "large"}))
    assert response.model == "omlab/large"


# --- retries through an injected remote backend (no litellm) -----------------------------------


class Transient(Exception):
    status_code = 503


class Scripted:
    """A remote backend that fails with the scripted errors, then answers."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls: list[tuple[str, float | None]] = []

    async def __call__(self, attempt, request, timeout_s):
        self.calls.append((attempt.model, timeout_s))
        if self.errors:
            raise self.errors.pop(0)
        return f"answer from {attempt.model}", Usage(10, 2), "stop", {}


def client_with(remote, clock: FakeClock, **policy) -> ModelClient:
    return ModelClient(
        retry=RetryPolicy(jitter=0.0, **policy),
        remote=remote,
        sleep=clock.sleep,
        now=clock.now,
        rng=random.Random(1),
    )


async def test_transient_errors_are_retried_with_backoff(clock):
    remote = Scripted(Transient("busy"), Transient("busy"))
    client = client_with(remote, clock, base_delay_s=1.0)
    response = await client.complete(request("acme/model"))
    assert response.text == "answer from acme/model" and response.attempts == 3
    assert clock.sleeps == [1.0, 2.0]
    assert client.calls[0].latency_s == 3.0  # virtual time
    assert response.cost_usd is None  # unknown model: no price, not an error


async def test_entry_max_retries_overrides_the_policy(clock):
    remote = Scripted(Transient("a"), Transient("b"), Transient("c"))
    client = client_with(remote, clock, max_retries=8)
    spec = [ModelWithRetries("acme/one", max_retries=1), ModelWithRetries("acme/two", max_retries=0)]
    with pytest.raises(ModelCallError) as info:
        await client.complete(request(spec))
    assert [m for m, _ in remote.calls] == ["acme/one", "acme/one", "acme/two"]
    assert info.value.call.attempts == 3 and info.value.call.resolved_model == "acme/two"
    assert isinstance(info.value.__cause__, Transient)


async def test_waits_never_pass_the_deadline(clock):
    remote = Scripted(*[Transient("busy")] * 20)
    client = client_with(remote, clock, max_retries=20, base_delay_s=1.0, max_delay_s=100.0, deadline_s=10.0)
    with pytest.raises(ModelCallError, match="deadline") as info:
        await client.complete(request("acme/model"))
    assert clock.sleeps == [1.0, 2.0, 4.0]  # the next wait (8 s) would end past 10 s
    assert sum(clock.sleeps) <= 10.0
    assert info.value.call.attempts == 4
    # each request was given only the time left before the deadline
    assert [t for _, t in remote.calls] == [10.0, 9.0, 7.0, 3.0]


async def test_the_next_fallback_gets_the_time_left(clock):
    remote = Scripted(Transient("busy"), Transient("busy"))
    client = client_with(remote, clock, max_retries=5, base_delay_s=4.0, max_delay_s=8.0, deadline_s=10.0)
    response = await client.complete(request(["acme/one", "acme/two"]))
    # acme/one: fail, wait 4, fail; next wait (8) would pass the deadline, so acme/two answers at once
    assert response.model == "acme/two" and clock.sleeps == [4.0]
    assert remote.calls[-1] == ("acme/two", 6.0)


async def test_on_call_errors_are_logged_not_raised(echo_models, caplog):
    def broken_hook(call):
        raise RuntimeError("hook exploded")

    client = ModelClient(on_call=broken_hook)
    with caplog.at_level(logging.ERROR, logger="omlab.llm.client"):
        response = await client.complete(request("omlab/echo"))
    assert response.text.startswith("echo:")
    assert "on_call hook failed" in caplog.text and len(client.calls) == 1


def _builtins_importable() -> bool:
    try:
        offline_registry.offline_model_names()
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _builtins_importable(), reason="built-in offline models not importable yet")
async def test_models_registered_next_to_the_builtins_are_reachable(monkeypatch):
    monkeypatch.setitem(offline_registry._REGISTRY, "test-echo", lambda: EchoModel("test-echo"))
    assert "test-echo" in offline_registry.offline_model_names()
    client = ModelClient()
    response = await client.complete(request("omlab/test-echo"))
    assert response.text == "test-echo: hello there" and client.calls[0].error is None


async def test_offline_seconds_add_up_the_time_inside_each_offline_model(echo_models, monkeypatch):
    ticks = iter(range(100))
    monkeypatch.setattr("omlab.llm.client.perf_counter", lambda: float(next(ticks)))
    cpu_ticks = iter(range(0, 200, 2))
    monkeypatch.setattr("omlab.llm.client.thread_time", lambda: float(next(cpu_ticks)))

    class Failing(EchoModel):
        def generate(self, messages, **kwargs):
            raise ValueError("no user message")

    monkeypatch.setitem(offline_registry._REGISTRY, "failing", lambda: Failing("failing"))
    client = ModelClient(retry=RetryPolicy(max_retries=0))
    await client.complete(request("omlab/echo"))
    await client.complete(request("omlab/echo"))
    await client.complete(request("omlab/small"))
    with pytest.raises(ModelCallError):
        await client.complete(request("omlab/failing"))
    # one tick per generate: a benchmark subtracts exactly the models' time, failed calls included
    assert client.offline_seconds == {"omlab/echo": 2.0, "omlab/small": 1.0, "omlab/failing": 1.0}
    # and the CPU time of the calling thread, which other processes holding the core do not inflate
    assert client.offline_cpu_seconds == {"omlab/echo": 4.0, "omlab/small": 2.0, "omlab/failing": 2.0}

"""Per-provider concurrency limits and the shared retry-after pause, alone and in ModelClient."""

from __future__ import annotations

import asyncio
import random
import threading
import time

import pytest

from omlab.llm.client import ModelClient
from omlab.llm.limits import ProviderLimits, provider_of
from omlab.llm.retry import RetryPolicy
from omlab.llm.spec import ModelWithRetries
from omlab.llm.types import ModelRequest, Usage

from .conftest import FakeClock
from .fake_openai_server import FakeOpenAIServer, Reply, _Handler, error_body

MESSAGES = [{"role": "user", "content": "ping"}]


# --- the server side: who is in flight, and when requests arrive ---------------------------------


class Traffic:
    """What the server saw: requests in flight now and at most, arrival and 429 times."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.arrivals: list[float] = []
        self.refusals: list[float] = []


class TrafficHandler(_Handler):
    def do_POST(self) -> None:
        traffic: Traffic = self.server.owner.traffic
        with traffic.lock:
            traffic.in_flight += 1
            traffic.max_in_flight = max(traffic.max_in_flight, traffic.in_flight)
            traffic.arrivals.append(time.time())
        self._counted = True
        try:
            super().do_POST()
        finally:
            self._leave()

    def _send(self, reply: Reply) -> None:
        # Leave before answering: the client may send its next request as soon as it reads this one.
        self._leave()
        if reply.status == 429:
            traffic: Traffic = self.server.owner.traffic
            with traffic.lock:
                traffic.refusals.append(time.time())
        super()._send(reply)

    def _leave(self) -> None:
        if getattr(self, "_counted", False):
            self._counted = False
            traffic: Traffic = self.server.owner.traffic
            with traffic.lock:
                traffic.in_flight -= 1


def watch(server: FakeOpenAIServer) -> Traffic:
    server.traffic = Traffic()
    server._httpd.RequestHandlerClass = TrafficHandler
    return server.traffic


def entry(server: FakeOpenAIServer) -> ModelWithRetries:
    return ModelWithRetries(
        "openai/fake", model_settings={"api_base": server.api_base, "api_key": "sk-test-not-a-secret"}
    )


class RecordingSleep:
    """asyncio.sleep that remembers every wait (so the test sees who waited, and how long)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(seconds)


# --- ProviderLimits alone ---------------------------------------------------------------------------


def test_limits_per_provider_with_aliases_and_offline_unlimited():
    limits = ProviderLimits(default=4, per_provider={"google": 2, "openai": 16})
    assert limits.limit_for("openai/gpt-4o-mini") == 16
    assert limits.limit_for("gemini/gemini-2.5-flash") == limits.limit_for("google/gemini-2.5-flash") == 2
    assert limits.limit_for("anthropic/claude-x") == 4
    assert limits.limit_for("omlab/observer") is None
    assert provider_of("together/llama") == "together_ai"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"default": 0}, r"ProviderLimits.default must be an integer >= 1, got 0"),
        ({"default": 2.5}, r"ProviderLimits.default must be an integer >= 1"),
        ({"per_provider": {"openai": 0}}, r"per_provider\['openai'\] must be an integer >= 1"),
        ({"per_provider": {"openai/gpt-4o": 3}}, r"'openai/gpt-4o' is not a provider name"),
    ],
)
def test_bad_limits_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ProviderLimits(**kwargs)


def test_a_pause_only_grows_and_never_touches_offline_models(clock):
    limits = ProviderLimits()
    assert limits.pause("openai/a", 10, now=clock.now) == clock.t + 10
    assert limits.pause("openai/b", 3, now=clock.now) == clock.t + 10  # shorter: the longer one stands
    assert limits.paused_until("openai/zzz") == clock.t + 10  # the whole provider, not one model
    assert limits.paused_until("anthropic/x") is None
    limits.pause("omlab/reader", 99, now=clock.now)
    assert limits.paused_until("omlab/reader") is None


async def test_slot_waits_out_the_pause_then_holds_a_slot(clock):
    limits = ProviderLimits(default=1)
    limits.pause("openai/a", 7.5, now=clock.now)
    async with limits.slot("openai/a", now=clock.now, sleep=clock.sleep):
        assert clock.sleeps == [7.5]
        other = asyncio.create_task(_enter(limits, "openai/b", clock))
        await asyncio.sleep(0.01)
        assert not other.done()  # the provider's only slot is taken
    await asyncio.wait_for(other, 1)
    async with limits.slot("omlab/observer", now=clock.now, sleep=clock.sleep):
        pass  # offline: no slot, no wait
    assert clock.sleeps == [7.5]


async def _enter(limits: ProviderLimits, model: str, clock: FakeClock) -> None:
    async with limits.slot(model, now=clock.now, sleep=clock.sleep):
        pass


# --- ModelClient against the scripted server ----------------------------------------------------


@pytest.mark.parametrize("limit", [1, 3])
async def test_in_flight_requests_never_exceed_the_provider_limit(fake_server, limit):
    traffic = watch(fake_server)
    fake_server.default = Reply(delay_s=0.08)
    client = ModelClient(limits=ProviderLimits(default=50, per_provider={"openai": limit}))
    replies = await asyncio.gather(
        *(client.complete(ModelRequest(model=[entry(fake_server)], messages=MESSAGES)) for _ in range(8))
    )
    assert [r.text for r in replies] == ["hello from fake"] * 8
    assert len(fake_server.requests) == 8
    assert traffic.max_in_flight == limit


async def test_a_429_with_retry_after_pauses_every_caller_of_the_provider(fake_server):
    traffic = watch(fake_server)
    pause_s = 0.4
    fake_server.push(
        # The first request is refused quickly; the second stays in flight while that happens.
        Reply(
            429,
            error_body("slow down", "rate_limit"),
            headers={"retry-after-ms": str(int(pause_s * 1000))},
            delay_s=0.05,
        ),
        Reply(delay_s=0.3),
    )
    fake_server.default = Reply(delay_s=0.02)
    sleep = RecordingSleep()
    limits = ProviderLimits(per_provider={"openai": 2})
    client = ModelClient(limits=limits, sleep=sleep, retry=RetryPolicy(jitter=0.0), rng=random.Random(1))
    replies = await asyncio.gather(
        *(client.complete(ModelRequest(model=[entry(fake_server)], messages=MESSAGES)) for _ in range(5))
    )
    assert [r.text for r in replies] == ["hello from fake"] * 5
    assert sorted(r.attempts for r in replies) == [1, 1, 1, 1, 2]  # only the refused call retried
    (refused_at,) = traffic.refusals
    assert len(traffic.arrivals) == 6  # 5 calls + 1 retry, no further 429
    later = [t for t in traffic.arrivals if t > refused_at]
    assert len(later) == 4  # three waiting calls and the retry all came after the refusal…
    assert min(later) - refused_at >= pause_s - 0.02  # …and only once the pause was over
    # The waits went through the injected sleep: the refused call and the queued ones all paused.
    assert len(sleep.waits) >= 3 and all(0 < w <= pause_s + 1e-6 for w in sleep.waits)
    assert limits.paused_until("openai/fake") <= time.time()


# --- the pause and the deadline, in virtual time ----------------------------------------------------


class RateLimited(Exception):
    status_code = 429

    def __init__(self, retry_after: str) -> None:
        super().__init__("rate limited")
        self.headers = {"retry-after": retry_after}


async def test_a_pause_longer_than_the_deadline_moves_on_to_the_fallback(clock):
    sent: list[str] = []

    async def remote(attempt, request, timeout):
        sent.append(attempt.model)
        if attempt.model == "openai/a" and len(sent) == 1:
            raise RateLimited("60")
        return f"{attempt.model} says hi", Usage(3, 2), "stop", {}

    limits = ProviderLimits()
    client = ModelClient(
        limits=limits,
        remote=remote,
        sleep=clock.sleep,
        now=clock.now,
        retry=RetryPolicy(deadline_s=10, jitter=0.0),
        prices={"openai/a": "omlab/x", "anthropic/b": "omlab/x"},
    )
    spec = ["openai/a", "anthropic/b"]
    first = await client.complete(ModelRequest(model=spec, messages=MESSAGES))
    assert first.text == "anthropic/b says hi" and sent == ["openai/a", "anthropic/b"]
    assert clock.sleeps == [] and limits.paused_until("openai/a") == clock.t + 60
    assert "would pass the deadline" in client.calls[0].metadata["llm"]["attempt_errors"][-1]

    # A new call queues behind the pause (its deadline has not started) and is then sent.
    second = await client.complete(ModelRequest(model=spec, messages=MESSAGES))
    assert second.text == "openai/a says hi" and clock.sleeps == [60.0]

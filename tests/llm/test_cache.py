"""The response cache: keys, modes, storage across processes, and ModelClient reruns."""

from __future__ import annotations

import hashlib
import multiprocessing
import pickle
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from omlab.llm.cache import (
    CachedResponse,
    CacheKeyError,
    CacheMissError,
    CacheStats,
    ResponseCache,
    cache_key,
    cache_key_material,
    canonical_json,
    is_output_setting,
)
from omlab.llm.client import ModelCallError, ModelClient
from omlab.llm.offline import OfflineResult
from omlab.llm.offline import registry as offline_registry
from omlab.llm.pricing import Price
from omlab.llm.spec import ModelByInputTokens, ModelWithRetries, ResolvedAttempt
from omlab.llm.types import ModelRequest, Usage

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "Where do I live?"}]
API_KEY = "sk-live-do-not-store-0123456789"
HEADER_SECRET = "Bearer header-secret-987654"
# Explicit prices keep litellm (seconds to import) out of this file.
PRICES = {"openai/gpt-4o-mini": Price(0.15, 0.60), "openai/gpt-4o": Price(2.5, 10.0)}


def base_request(**changes) -> ModelRequest:
    fields = {
        "model": "openai/gpt-4o-mini",
        "messages": [dict(m) for m in MESSAGES],
        "temperature": 0.2,
        "max_output_tokens": 64,
        "provider_options": {"openai": {"seed": 7}},
        "response_format": {"type": "json_object"},
    }
    fields.update(changes)
    return ModelRequest(**fields)


def base_attempt(**changes) -> ResolvedAttempt:
    fields = {
        "model": "openai/gpt-4o-mini",
        "model_settings": {"topP": 0.9},
        "provider_options": {},
        "headers": {},
    }
    fields.update(changes)
    return ResolvedAttempt(**fields)


def entry(key: str, text: str = "Lisbon", **changes) -> CachedResponse:
    fields = {"key": key, "model": "openai/gpt-4o-mini", "text": text, "usage": Usage(10, 2)}
    fields |= {"cost_usd": 0.01, "latency_s": 1.5}
    fields.update(changes)
    return CachedResponse(**fields)


# --- keys -----------------------------------------------------------------------------------------


def test_canonical_json_sorts_keys_and_folds_integral_floats():
    assert canonical_json({"b": 1.0, "a": [0.0, 0.5, (1, "é")], "c": None}) == '{"a":[0,0.5,[1,"é"]],"b":1,"c":null}'


def test_key_is_versioned_sha256_of_the_canonical_material():
    attempt, request = base_attempt(), base_request()
    material = cache_key_material(attempt, request)
    expected = hashlib.sha256(canonical_json(material).encode()).hexdigest()
    assert cache_key(attempt, request) == f"v1:{expected}"
    assert material["model"] == "openai/gpt-4o-mini" and material["model_settings"] == {"topP": 0.9}
    assert material["provider_options"] == {"openai": {"seed": 7}}


def test_key_is_stable_across_equivalent_spellings():
    a = cache_key(base_attempt(), base_request(temperature=0.0))
    b = cache_key(base_attempt(), base_request(temperature=0))
    assert a == b
    reordered = [{"content": m["content"], "role": m["role"]} for m in MESSAGES]
    assert cache_key(base_attempt(), base_request(messages=reordered)) == cache_key(base_attempt(), base_request())


@pytest.mark.parametrize(
    ("attempt_changes", "request_changes"),
    [
        ({"model": "openai/gpt-4o"}, {}),
        ({}, {"messages": [*MESSAGES[:1], {"role": "user", "content": "Where do I work?"}]}),
        ({}, {"messages": MESSAGES[1:]}),
        ({}, {"temperature": 0.3}),
        ({}, {"temperature": None}),
        ({}, {"max_output_tokens": 65}),
        ({}, {"provider_options": {"openai": {"seed": 8}}}),
        ({"provider_options": {"openai": {"reasoning_effort": "low"}}}, {}),
        ({}, {"response_format": {"type": "text"}}),
        ({"model_settings": {"topP": 0.8}}, {}),
        ({"model_settings": {"topP": 0.9, "maxOutputTokens": 10}}, {}),
        ({"model_settings": {"topP": 0.9, "api_base": "http://127.0.0.1:9/v1"}}, {}),
        ({"model_settings": {"topP": 0.9, "mock_response": "canned"}}, {}),
    ],
)
def test_every_output_affecting_field_changes_the_key(attempt_changes, request_changes):
    original = cache_key(base_attempt(), base_request())
    assert cache_key(base_attempt(**attempt_changes), base_request(**request_changes)) != original


@pytest.mark.parametrize(
    ("attempt_changes", "request_changes"),
    [
        ({"headers": {"Authorization": HEADER_SECRET}}, {}),
        ({"max_retries": 3}, {}),
        ({"model_settings": {"topP": 0.9, "api_key": API_KEY}}, {}),
        ({"model_settings": {"topP": 0.9, "apiKey": API_KEY, "aws_secret_access_key": "x"}}, {}),
        ({"model_settings": {"topP": 0.9, "timeout": 5, "num_retries": 2, "extra_headers": {"a": "b"}}}, {}),
        ({}, {"metadata": {"cycle_id": "c-9", "attempt": 2}}),
        ({}, {"role": "judge"}),
        ({}, {"input_tokens": 12_345}),
        ({}, {"context": {"thread": "t1"}}),
    ],
)
def test_transport_secrets_and_bookkeeping_do_not_change_the_key(attempt_changes, request_changes):
    original = cache_key(base_attempt(), base_request())
    assert cache_key(base_attempt(**attempt_changes), base_request(**request_changes)) == original


def test_token_count_settings_are_not_mistaken_for_secrets():
    assert is_output_setting("max_tokens") and is_output_setting("maxOutputTokens")
    assert not is_output_setting("api_key") and not is_output_setting("vertex_credentials")
    assert not is_output_setting("maxRetries")


@settings(max_examples=60, deadline=None)
@given(
    first=st.text(max_size=40),
    second=st.text(max_size=40),
    temperature=st.one_of(st.none(), st.floats(0, 2, allow_nan=False)),
)
def test_key_changes_exactly_when_the_messages_change(first, second, temperature):
    def key(text):
        return cache_key(
            base_attempt(),
            base_request(messages=[{"role": "user", "content": text}], temperature=temperature),
        )

    assert (key(first) == key(second)) == (first == second)


def test_pydantic_response_format_is_keyed_by_its_schema():
    class Answer(BaseModel):
        value: str

    class Other(BaseModel):
        value: int

    assert cache_key(base_attempt(), base_request(response_format=Answer)) != cache_key(
        base_attempt(), base_request(response_format=Other)
    )


def test_unhashable_value_is_a_clear_error():
    with pytest.raises(CacheKeyError, match=r"request\.messages\[0\]\.content.*object"):
        cache_key(base_attempt(), base_request(messages=[{"role": "user", "content": object()}]))


# --- the store ------------------------------------------------------------------------------------


def test_store_get_roundtrip_first_write_wins_and_stats(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    stored = entry("v1:a", provider_metadata={"response_id": "r1"}, tier=10_000, finish_reason="stop", role="actor")
    assert cache.store(stored) is True
    assert cache.store(entry("v1:a", text="Porto")) is False  # the first answer is kept
    got = cache.get("v1:a")
    assert got.text == "Lisbon" and got.usage == Usage(10, 2) and got.tier == 10_000
    assert (got.cost_usd, got.latency_s, got.finish_reason, got.role) == (0.01, 1.5, "stop", "actor")
    assert got.provider_metadata == {"response_id": "r1"}
    assert cache.lookup([("openai/x", "v1:missing"), ("openai/gpt-4o-mini", "v1:a")]).text == "Lisbon"
    assert cache.lookup([("openai/x", "v1:missing")]) is None
    assert cache.stats() == CacheStats(hits=1, misses=1, writes=1)
    assert cache.size() == 1


def test_info_and_clear(tmp_path):
    cache = ResponseCache(tmp_path / "sub" / "c.sqlite")
    cache.store(entry("v1:a", role="observer"))
    cache.store(entry("v1:b", model="omlab/observer", role="observer", cost_usd=0.0))
    info = cache.info()
    assert info["entries"] == 2 and info["mode"] == "write" and info["bytes"] > 0
    assert info["by_model"] == {"omlab/observer": 1, "openai/gpt-4o-mini": 1}
    assert info["by_role"] == {"observer": 2}
    assert info["stored_cost_usd"] == pytest.approx(0.01)
    assert info["path"].endswith("c.sqlite") and info["stats"]["writes"] == 2
    assert cache.clear() == 2 and cache.size() == 0


def test_the_file_uses_wal_and_survives_reopening(tmp_path):
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        cache.store(entry("v1:a"))
    reopened = ResponseCache(path, mode="strict")
    assert reopened.get("v1:a").text == "Lisbon"
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_modes(tmp_path):
    path = tmp_path / "c.sqlite"
    ResponseCache(path).store(entry("v1:a"))
    for mode in ("read", "strict", "off"):
        cache = ResponseCache(path, mode=mode)
        assert cache.store(entry(f"v1:{mode}")) is False  # only write mode writes
    assert ResponseCache(path, mode="off").lookup([("m/x", "v1:a")]) is None
    assert ResponseCache(path, mode="read").lookup([("m/x", "v1:a")]).text == "Lisbon"
    with pytest.raises(CacheMissError, match=r"no entry for openai/gpt-4o-mini \(key v1:zzz\)"):
        ResponseCache(path, mode="strict").lookup([("openai/gpt-4o-mini", "v1:zzz")])
    assert ResponseCache(path).size() == 1


def test_bad_mode_and_path_are_named():
    with pytest.raises(ValueError, match="mode must be one of off, read, write, strict, got 'rw'"):
        ResponseCache(None, mode="rw")
    with pytest.raises(TypeError, match="path"):
        ResponseCache(42)


def test_pickling_carries_path_and_mode_only(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite", mode="read")
    cache.size()  # open a connection first
    copy = pickle.loads(pickle.dumps(cache))
    assert (copy.path, copy.mode, copy.stats()) == (cache.path, "read", CacheStats())


def _write_entries(path: str, start: int, count: int, barrier) -> None:
    cache = ResponseCache(path)
    barrier.wait(timeout=30)  # both create the file and write at the same moment
    for i in range(start, start + count):
        cache.store(entry(f"v1:{i:05d}", text=f"answer {i}", provider_metadata={"i": i}))


def test_two_processes_write_the_same_file(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    workers = [context.Process(target=_write_entries, args=(path, start, 300, barrier)) for start in (0, 150)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [w.exitcode for w in workers] == [0, 0]
    cache = ResponseCache(path, mode="strict")
    assert cache.size() == 450
    for i in range(450):
        got = cache.get(f"v1:{i:05d}")
        assert got.text == f"answer {i}" and got.provider_metadata == {"i": i}
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# --- through ModelClient --------------------------------------------------------------------------


class CountingRemote:
    """A remote backend that answers from a table and counts every request it gets."""

    def __init__(self, answers: dict[str, str] | None = None) -> None:
        self.answers = answers or {}
        self.calls: list[str] = []

    async def __call__(self, attempt, request, timeout):
        self.calls.append(attempt.model)
        if attempt.model not in self.answers:
            raise PermissionError(f"{attempt.model} refused")  # not retryable
        text = self.answers[attempt.model] + " / " + request.messages[-1]["content"]
        return text, Usage(1000, 500), "stop", {"response_id": f"r{len(self.calls)}"}


def fallback_spec():
    return [
        ModelWithRetries("openai/gpt-4o", model_settings={"api_key": API_KEY}, headers={"X-Auth": HEADER_SECRET}),
        ModelWithRetries("openai/gpt-4o-mini", model_settings={"api_key": API_KEY}, headers={"X-Auth": HEADER_SECRET}),
    ]


async def test_a_rerun_makes_zero_backend_calls_and_reproduces_the_answers(tmp_path):
    path = tmp_path / "c.sqlite"
    questions = [f"question {i}" for i in range(3)]
    remote = CountingRemote({"openai/gpt-4o-mini": "mini"})
    first = ModelClient(remote=remote, prices=PRICES, cache=ResponseCache(path))
    first_answers = [
        await first.complete(ModelRequest(model=fallback_spec(), messages=[{"role": "user", "content": q}]))
        for q in questions
    ]
    assert remote.calls == ["openai/gpt-4o", "openai/gpt-4o-mini"] * 3
    assert [r.cached for r in first_answers] == [False] * 3

    rerun_remote = CountingRemote({"openai/gpt-4o-mini": "mini"})
    rerun = ModelClient(remote=rerun_remote, prices=PRICES, cache=ResponseCache(path, mode="strict"))
    again = [
        await rerun.complete(ModelRequest(model=fallback_spec(), messages=[{"role": "user", "content": q}]))
        for q in questions
    ]
    assert rerun_remote.calls == []
    assert [r.text for r in again] == [r.text for r in first_answers] == [f"mini / {q}" for q in questions]
    response, call = again[0], rerun.calls[0]
    original_cost = 1000 * 0.15e-6 + 500 * 0.60e-6
    assert first_answers[0].cost_usd == pytest.approx(original_cost)
    assert (response.cached, response.cost_usd, response.attempts, response.model) == (
        True,
        0.0,
        0,
        "openai/gpt-4o-mini",
    )
    assert response.usage == Usage(1000, 500) and response.latency_s == first_answers[0].latency_s
    assert response.provider_metadata == {"response_id": "r2"}
    assert (call.cached, call.cost_usd, call.input_tokens, call.output_tokens, call.attempts) == (
        True,
        0.0,
        1000,
        500,
        0,
    )
    assert call.metadata["llm"]["original_cost_usd"] == pytest.approx(original_cost)
    assert call.metadata["llm"]["fallback_index"] == 1
    assert rerun.cache.stats() == CacheStats(hits=3, misses=0, writes=0)


async def test_secrets_never_reach_the_cache_file(tmp_path):
    path = tmp_path / "c.sqlite"
    client = ModelClient(remote=CountingRemote({"openai/gpt-4o-mini": "ok"}), prices=PRICES, cache=ResponseCache(path))
    await client.complete(ModelRequest(model=fallback_spec(), messages=MESSAGES))
    client.cache.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"ok / Where do I live?" in raw
    assert API_KEY.encode() not in raw and HEADER_SECRET.encode() not in raw


async def test_strict_miss_raises_unwrapped_and_is_recorded(tmp_path):
    remote = CountingRemote({"openai/gpt-4o-mini": "mini"})
    client = ModelClient(remote=remote, prices=PRICES, cache=ResponseCache(tmp_path / "c.sqlite", mode="strict"))
    with pytest.raises(
        CacheMissError, match="strict mode and has no entry for openai/gpt-4o .*fallbacks tried"
    ) as caught:
        await client.complete(ModelRequest(model=fallback_spec(), messages=MESSAGES))
    assert remote.calls == []
    (call,) = client.calls
    assert caught.value.call is call and call.error.startswith("CacheMissError") and call.attempts == 0


async def test_read_mode_serves_hits_but_records_nothing(tmp_path):
    path = tmp_path / "c.sqlite"
    remote = CountingRemote({"openai/gpt-4o-mini": "mini"})
    reader = ModelClient(remote=remote, prices=PRICES, cache=ResponseCache(path, mode="read"))
    await reader.complete(ModelRequest(model="openai/gpt-4o-mini", messages=MESSAGES))
    await reader.complete(ModelRequest(model="openai/gpt-4o-mini", messages=MESSAGES))
    assert len(remote.calls) == 2 and ResponseCache(path).size() == 0
    assert reader.cache.stats() == CacheStats(hits=0, misses=2, writes=0)


async def test_off_mode_bypasses_a_filled_cache(tmp_path):
    path = tmp_path / "c.sqlite"
    remote = CountingRemote({"openai/gpt-4o-mini": "mini"})
    await ModelClient(remote=remote, prices=PRICES, cache=ResponseCache(path)).complete(
        ModelRequest(model="openai/gpt-4o-mini", messages=MESSAGES)
    )
    off = ModelClient(remote=remote, prices=PRICES, cache=ResponseCache(path, mode="off"))
    response = await off.complete(ModelRequest(model="openai/gpt-4o-mini", messages=MESSAGES))
    assert response.cached is False and len(remote.calls) == 2
    assert off.cache.stats() == CacheStats() and ResponseCache(path).size() == 1


class TierModel:
    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    def generate(self, messages, *, max_output_tokens=None, temperature=None):
        self.calls += 1
        return OfflineResult(f"{self.name} answer", 7, 2)


async def test_tiers_cache_separately_and_offline_models_are_cached(tmp_path, monkeypatch):
    models = {name: TierModel(name) for name in ("small", "large")}
    for name, model in models.items():
        monkeypatch.setitem(offline_registry._REGISTRY, name, lambda model=model: model)
    router = ModelByInputTokens({100: "omlab/small", 1000: "omlab/large"})
    client = ModelClient(cache=ResponseCache(tmp_path / "c.sqlite"))

    async def ask(tokens):
        return await client.complete(ModelRequest(model=router, messages=MESSAGES, input_tokens=tokens))

    small, large = await ask(50), await ask(500)
    assert (small.text, small.tier, large.text, large.tier) == ("small answer", 100, "large answer", 1000)
    again_small, again_large = await ask(99), await ask(999)
    assert again_small.cached and again_small.text == "small answer" and again_small.tier == 100
    assert again_large.cached and again_large.model == "omlab/large" and again_large.tier == 1000
    assert (models["small"].calls, models["large"].calls) == (1, 1)
    assert client.cache.size() == 2


async def test_an_unhashable_request_skips_the_cache_outside_strict_mode(tmp_path):
    remote = CountingRemote({"openai/gpt-4o-mini": "mini"})
    odd = [{"role": "user", "content": "hi", "extra": object()}]
    client = ModelClient(remote=remote, prices=PRICES, cache=ResponseCache(tmp_path / "c.sqlite"))
    response = await client.complete(ModelRequest(model="openai/gpt-4o-mini", messages=odd))
    assert response.text == "mini / hi" and client.cache.size() == 0
    strict = ModelClient(remote=remote, prices=PRICES, cache=ResponseCache(tmp_path / "c.sqlite", mode="strict"))
    with pytest.raises(ModelCallError, match="CacheKeyError"):
        await strict.complete(ModelRequest(model="openai/gpt-4o-mini", messages=odd))

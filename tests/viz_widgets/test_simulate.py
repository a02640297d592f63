"""simulate(): the frames and summary of a what-if replay, checked against the engine run by hand."""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest

from omlab import ConfigError, ObservationalMemory
from omlab.bench.results.schema import columns_of
from omlab.bench.run.replay import memory_prompt_tokens
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.scheduler import FixedLatency, PerModelLatency, VirtualScheduler
from omlab.engine.token_counter import TokenCounter
from omlab.viz.simulate import (
    DEFAULT_SETTINGS,
    SIMULATION_RUN_ID,
    SUMMARY_METRICS,
    Sample,
    SampleTokenCounter,
    engine_options,
    sample_conversation,
    simulate,
)
from tests.viz_widgets.samples import SMALL, small_sample


def by_hand(sample: Sample, *, latency_s: float, **settings: object) -> dict[str, object]:
    """The engine driven directly, as benchmarks/bench_buffering_sweep.py does, with the totals a
    summary must match."""
    options = engine_options(
        buffer_tokens=settings.get("buffer_tokens", 0.2),
        buffer_activation=settings.get("buffer_activation", 0.8),
        block_after=settings.get("block_after", 1.2),
        message_tokens=settings["message_tokens"],
        observation_tokens=settings["observation_tokens"],
    )

    async def run() -> dict[str, object]:
        clock = VirtualClock(sample.messages[0].created_at)
        latency = PerModelLatency({"observer": FixedLatency(latency_s), "reflector": FixedLatency(latency_s)})
        memory = ObservationalMemory(options, scheduler=VirtualScheduler(clock, latency))
        overhead = memory_prompt_tokens(memory.counter)
        totals = {"blocked_s": 0.0, "sync_observations": 0, "activations": 0, "sync_reflections": 0}
        context = []
        results = []
        for message in sample.messages:
            clock.set(message.created_at)
            copy = Message.of(message.role, message.text, message.created_at, id=message.id)
            results.append(await memory.add_messages("t", [copy]))
        results.append(await memory.finalize("t"))
        for result in results:
            totals["blocked_s"] += result.blocked_s
            totals["sync_observations"] += result.sync_observations
            totals["activations"] += result.activations
            totals["sync_reflections"] += result.sync_reflections
            status = result.status
            context.append(
                status.pending_tokens + status.observation_tokens + (overhead if status.observation_tokens else 0)
            )
        totals["context_tokens_peak"] = max(context)
        totals["context_tokens_avg"] = sum(context) / len(context)
        totals["observations"] = await memory.get_observations("t")
        return totals

    return asyncio.run(run())


@pytest.fixture(scope="module")
def small():
    return simulate(small_sample(), **SMALL)


def test_frames_have_the_results_getters_columns(small):
    sample = small_sample()
    assert list(small.steps.columns) == [c.name for c in columns_of("steps")]
    assert list(small.events.columns) == [c.name for c in columns_of("events")]
    assert list(small.calls.columns) == [c.name for c in columns_of("model_calls")]
    assert len(small.steps) == len(sample.messages) + 1  # one per message, then finalize
    assert small.steps["step"].tolist() == list(range(1, len(sample.messages) + 2))
    assert small.steps["message_id"].tolist()[:-1] == [m.id for m in sample.messages]
    assert set(small.steps["run_id"]) == {SIMULATION_RUN_ID}
    assert small.events["seq"].tolist() == list(range(1, len(small.events) + 1))
    assert (small.events["kind"] == "data").all()
    assert set(small.calls["role"]) == {"observer", "reflector"}
    assert str(small.steps["ts"].dtype) == "datetime64[us, UTC]"


def test_summary_matches_the_engine_driven_by_hand(small):
    truth = by_hand(small_sample(), latency_s=SMALL["observer_latency_s"], **SMALL)
    summary = small.summary
    assert summary["blocked_s"] == pytest.approx(truth["blocked_s"])
    assert summary["sync_observations"] == truth["sync_observations"]
    assert summary["activations"] == truth["activations"]
    assert summary["sync_reflections"] == truth["sync_reflections"]
    assert summary["context_tokens_peak"] == truth["context_tokens_peak"]
    assert summary["context_tokens_avg"] == pytest.approx(truth["context_tokens_avg"])
    assert small.observations == truth["observations"]
    # this configuration exercises every path the panel reports on
    for name in ("blocked_s", "sync_observations", "activations", "sync_reflections", "reflection_activations"):
        assert summary[name] > 0, name


def test_summary_keys_and_sample_size(small):
    assert set(SUMMARY_METRICS) <= set(small.summary)
    assert small.summary["n_message_tokens"] == small_sample().n_tokens
    assert small.summary["n_steps"] == len(small.steps)
    assert small.summary["final_observation_tokens"] == small.steps["observation_tokens"].iloc[-1]
    observation_cycles = small.events[
        small.events["type"].isin(["data-om-observation-end", "data-om-activation"])
        & (small.events["operation_type"] == "observation")
    ]
    ratio = observation_cycles["tokens_in"].sum() / observation_cycles["tokens_out"].sum()
    assert small.summary["compression_observation"] == pytest.approx(ratio)


def test_repeatable(small):
    again = simulate(small_sample(), **SMALL)
    columns = ["step", "ts", "pending_tokens", "observation_tokens", "blocked_s", "context_tokens"]
    pd.testing.assert_frame_equal(again.steps[columns], small.steps[columns])
    assert again.observations == small.observations
    assert again.events["type"].tolist() == small.events["type"].tolist()
    assert not again.calls["cached"].any()


def test_no_latency_means_no_blocking():
    result = simulate(small_sample(), **{**SMALL, "observer_latency_s": 0.0})
    assert result.summary["blocked_s"] == 0
    assert result.summary["sync_observations"] == 0


def test_buffering_off_observes_synchronously_only():
    result = simulate(small_sample(), **{**SMALL, "buffer_tokens": False})
    assert "blockAfter" not in result.options["observation"]
    assert result.summary["activations"] == 0
    assert result.summary["sync_observations"] > 0
    assert not (result.events["type"] == "data-om-buffering-start").any()


def test_engine_refusal_names_the_option():
    with pytest.raises(ConfigError, match="observation.blockAfter"):
        simulate(small_sample(), **{**SMALL, "block_after": 1.0})
    with pytest.raises(ConfigError, match="observation.bufferTokens"):
        simulate(small_sample(), **{**SMALL, "buffer_tokens": 5000})
    with pytest.raises(ValueError, match="FixedLatency"):
        simulate(small_sample(), **{**SMALL, "observer_latency_s": -1.0})


def test_options_are_the_engine_options():
    assert engine_options(
        message_tokens=4000, buffer_tokens=0.2, buffer_activation=0.8, block_after=1.5, observation_tokens=6000
    ) == {
        "observation": {
            "model": "omlab/observer",
            "messageTokens": 4000,
            "bufferTokens": 0.2,
            "bufferActivation": 0.8,
            "blockAfter": 1.5,
        },
        "reflection": {"model": "omlab/reflector", "observationTokens": 6000},
    }


def test_sample_counts_are_tokenx_counts():
    sample = small_sample()
    counter = TokenCounter()
    assert dict(sample.token_counts) == {m.id: counter.count_message(m) for m in sample.messages}
    looked_up = SampleTokenCounter({"x": 12345})
    assert looked_up.count_message(Message.of("user", "hello there", sample.messages[0].created_at, id="x")) == 12345
    other = Message.of("user", "hello there", sample.messages[0].created_at, id="y")
    assert looked_up.count_message(other) == counter.count_message(other)


def test_sample_of_rejects_bad_input():
    message = small_sample().messages[0]
    with pytest.raises(ValueError, match="no messages"):
        Sample.of([])
    with pytest.raises(ValueError, match="unique"):
        Sample.of([message, message])


def test_plain_messages_are_accepted():
    messages = list(small_sample().messages[:40])
    result = simulate(messages, **SMALL)
    assert len(result.steps) == 41
    assert result.steps["conversation_id"].iloc[0] == "sample"


def test_default_sample_is_sized_for_the_panel():
    # how fast a redraw is, is benchmarks/bench_whatif.py's job
    sample = sample_conversation()
    assert 30_000 <= sample.n_tokens <= 60_000
    result = simulate(block_after=DEFAULT_SETTINGS["block_after"] + 0.3)
    assert result.summary["n_message_tokens"] == sample.n_tokens

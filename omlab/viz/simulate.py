"""What-if re-simulation: replay a sample conversation offline, in virtual time, under other settings.

:func:`simulate` feeds a conversation, one message per step, to a fresh
:class:`~omlab.memory.ObservationalMemory` running the offline models (``omlab/observer``,
``omlab/reflector``) on a :class:`~omlab.engine.scheduler.VirtualScheduler`, and returns the same
``steps`` / ``events`` / ``model_calls`` frames a benchmark run records (built by the harness's
own row builders in :mod:`omlab.bench.run.replay`), plus a summary computed by the harness's
:func:`~omlab.bench.report.metrics.compute_metrics`. Nothing is written anywhere: a what-if panel calls
it on every slider change.

Speed (a slider change must redraw within about two seconds): the default sample is ~40k tokens
(~700 messages), generated once per process (:func:`sample_conversation` is cached), and every
message's token count is computed once and handed to each new engine by a counter that looks it up
(:class:`SampleTokenCounter`). A simulation of the default sample takes about 0.3 s on a 2-core
machine, most of it in the offline Observer and Reflector. (Answering repeated Observer requests
from an in-memory response cache was tried and saved only ~10%: a setting that changes one chunk
boundary changes every later request, so it was left out and the calls frame stays plain.)

Latency is virtual: each Observer call takes ``observer_latency_s`` and each Reflector call
``reflector_latency_s`` (by default the same), unless a :class:`~omlab.engine.scheduler.LatencyModel`
is given. The default sample's turns come a second apart, so an Observer taking
about a minute is what makes buffering fall behind and the actor block.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import pandas as pd

from omlab.bench.datasets.anonymised_ids import thread_key
from omlab.bench.report.metrics import RunFrames, compute_metrics
from omlab.bench.results.catalog import typed_frame
from omlab.bench.results.redact import to_safe_json
from omlab.bench.results.schema import columns_of
from omlab.bench.run.execution import run_coroutine
from omlab.bench.run.replay import RowRecorder, conversation_messages, memory_prompt_tokens, step_row
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.scheduler import FixedLatency, LatencyModel, PerModelLatency, VirtualScheduler
from omlab.engine.token_counter import TokenCounter
from omlab.llm.client import ModelClient
from omlab.memory import ObservationalMemory

SIMULATION_RUN_ID = "what-if"
"""The ``run_id`` of every simulated row (the frames have the results getters' columns)."""

DEFAULT_SETTINGS: Mapping[str, Any] = {
    "message_tokens": 4_000,
    "buffer_tokens": 0.2,
    "buffer_activation": 0.8,
    "block_after": 1.2,
    "observation_tokens": 6_000,
    "observer_latency_s": 60.0,
}
"""Defaults scaled to the ~40k-token sample (the engine's own defaults, 30k/40k, would observe
it only once): about a dozen observation cycles and a few reflections. At 60 s per model call
against a turn a second, buffering falls behind now and then, so ``blockAfter`` visibly trades
blocked seconds (1.1: ~1000 s) for peak context (2.0: ~300 s, +2k tokens)."""

SUMMARY_METRICS: tuple[str, ...] = (
    "blocked_s",
    "blocked_steps",
    "sync_observations",
    "activations",
    "buffered_observations",
    "sync_reflections",
    "reflection_activations",
    "context_tokens_avg",
    "context_tokens_peak",
    "compression_observation",
    "compression_reflection",
    "calls",
)
"""Harness metrics (group ``all``, names of :mod:`omlab.bench.report.metrics`) a summary carries; one the
frames do not allow (e.g. no reflection happened) is NaN."""


class SampleTokenCounter(TokenCounter):
    """A tokenx counter that knows the sample's message counts already (looked up by message id)."""

    def __init__(self, counts: Mapping[str, int], model: str | None = None) -> None:
        super().__init__(model)
        self._counts = counts

    def count_message(self, message: Message, *, model: str | None = None) -> int:
        """The precomputed count for a sample message, else a fresh count."""
        known = self._counts.get(message.id) if model is None else None
        return known if known is not None else super().count_message(message, model=model)


@dataclass(frozen=True, slots=True)
class Sample:
    """A conversation to simulate: its messages (in order) and each message's token count."""

    conversation_id: str
    thread_id: str
    messages: tuple[Message, ...]
    token_counts: Mapping[str, int] = field(repr=False)

    @property
    def n_tokens(self) -> int:
        """Tokens of all messages together (the sum of the per-message counts)."""
        return sum(self.token_counts.values())

    @classmethod
    def of(cls, messages: Sequence[Message], *, conversation_id: str = "sample") -> Sample:
        """A sample from engine messages (ids must be unique; counted once with tokenx)."""
        messages = tuple(messages)
        if not messages:
            raise ValueError("simulate: the sample has no messages")
        ids = [m.id for m in messages]
        if len(set(ids)) != len(ids):
            raise ValueError("simulate: sample message ids must be unique")
        counter = TokenCounter()
        return cls(
            conversation_id, thread_key(conversation_id), messages, {m.id: counter.count_message(m) for m in messages}
        )


@lru_cache(maxsize=4)
def sample_conversation(
    seed: int = 7, target_tokens: int = 40_000, *, turn_pace_s: float = 1.0, session_tokens: int = 40_000
) -> Sample:
    """A synthetic conversation of about ``target_tokens`` tokens, made once per process.

    Sessions of about ``session_tokens`` tokens with a turn every ``turn_pace_s`` seconds (by
    default one long session at an agent's tool-loop pace, where background observation can
    fall behind), 1-3 days apart (:func:`omlab.bench.datasets.generate_synthetic`).
    """
    from omlab.bench.datasets import generate_synthetic

    conversation = generate_synthetic(
        seed, target_tokens, n_questions=5, turn_pace=turn_pace_s, session_tokens=session_tokens
    )
    messages = conversation_messages(conversation, thread_key(conversation.id))
    return Sample.of(messages, conversation_id=conversation.id)


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """One simulation: the frames a benchmark run would record, and their summary."""

    steps: pd.DataFrame
    """``steps_df`` columns; one row per message, then a row for the final ``finalize``."""
    events: pd.DataFrame
    """``events_df`` columns: every ``data-om-*`` part, in ``seq`` order (no debug events)."""
    calls: pd.DataFrame
    """``calls_df`` columns: every Observer and Reflector call."""
    summary: dict[str, float]
    """:data:`SUMMARY_METRICS`, plus ``n_steps``, ``n_message_tokens``,
    ``final_observation_tokens`` and ``wall_s`` (seconds this simulation took)."""
    options: dict[str, Any]
    """The ``observationalMemory`` options the engine ran with (camelCase)."""
    observations: str
    """The observation log at the end."""


def engine_options(
    *,
    message_tokens: int,
    buffer_tokens: float | bool,
    buffer_activation: float,
    block_after: float | None,
    observation_tokens: int,
    observer_model: str = "omlab/observer",
    reflector_model: str = "omlab/reflector",
) -> dict[str, Any]:
    """The ``observationalMemory`` options for the what-if settings (snake_case in, camelCase out).

    ``buffer_tokens=False`` turns async buffering off; ``buffer_activation`` and ``block_after``
    then have no meaning and are left out (the engine refuses them without buffering).
    """
    observation: dict[str, Any] = {
        "model": observer_model,
        "messageTokens": message_tokens,
        "bufferTokens": buffer_tokens,
    }
    if buffer_tokens is not False:
        observation["bufferActivation"] = buffer_activation
        if block_after is not None:
            observation["blockAfter"] = block_after
    return {
        "observation": observation,
        "reflection": {"model": reflector_model, "observationTokens": observation_tokens},
    }


def simulate(
    messages: Sample | Sequence[Message] | None = None,
    *,
    message_tokens: int = DEFAULT_SETTINGS["message_tokens"],
    buffer_tokens: float | bool = DEFAULT_SETTINGS["buffer_tokens"],
    buffer_activation: float = DEFAULT_SETTINGS["buffer_activation"],
    block_after: float | None = DEFAULT_SETTINGS["block_after"],
    observation_tokens: int = DEFAULT_SETTINGS["observation_tokens"],
    observer_latency_s: float = DEFAULT_SETTINGS["observer_latency_s"],
    reflector_latency_s: float | None = None,
    latency: LatencyModel | None = None,
    observer_model: str = "omlab/observer",
    reflector_model: str = "omlab/reflector",
) -> SimulationResult:
    """Replay ``messages`` through the engine in virtual time under these settings.

    Args:
        messages: A :class:`Sample`, engine messages (made into a sample, counted once), or None
            for :func:`sample_conversation`'s default sample.
        message_tokens: ``observation.messageTokens``.
        buffer_tokens: ``observation.bufferTokens`` (ratio of messageTokens, tokens, or False).
        buffer_activation: ``observation.bufferActivation``.
        block_after: ``observation.blockAfter`` (multiplier or tokens; None for the engine default).
        observation_tokens: ``reflection.observationTokens``.
        observer_latency_s: Virtual seconds each Observer call takes.
        reflector_latency_s: Virtual seconds each Reflector call takes (default: the Observer's).
        latency: A latency model that replaces both fixed latencies (e.g. ``TokenRateLatency``).
        observer_model: Observer model (offline by default; a paid model would be called!).
        reflector_model: Reflector model.

    Raises:
        omlab.ConfigError: Settings the engine refuses (e.g. bufferTokens >= messageTokens),
            with the engine's message naming the option.
        ValueError: A negative latency, or an empty sample.
    """
    started = time.perf_counter()
    sample = _as_sample(messages)
    options = engine_options(
        message_tokens=message_tokens,
        buffer_tokens=buffer_tokens,
        buffer_activation=buffer_activation,
        block_after=block_after,
        observation_tokens=observation_tokens,
        observer_model=observer_model,
        reflector_model=reflector_model,
    )
    if latency is None:
        reflector_s = observer_latency_s if reflector_latency_s is None else reflector_latency_s
        latency = PerModelLatency(
            {"observer": FixedLatency(float(observer_latency_s)), "reflector": FixedLatency(float(reflector_s))}
        )
    rows, observations = run_coroutine(lambda: _replay(sample, options, latency))
    steps = _frame(rows.steps, "steps")
    events = _frame(rows.events, "events")
    calls = _frame(rows.model_calls, "model_calls")
    summary = simulation_summary(steps, events, calls)
    summary["n_message_tokens"] = float(sample.n_tokens)
    summary["wall_s"] = time.perf_counter() - started
    return SimulationResult(steps, events, calls, summary, options, observations)


def simulation_summary(
    steps: pd.DataFrame, events: pd.DataFrame, calls: pd.DataFrame | None = None
) -> dict[str, float]:
    """:data:`SUMMARY_METRICS` (harness definitions) of a simulation's or a recorded run's frames,
    plus ``n_steps`` and ``final_observation_tokens`` (the log size after the last step; the mean
    over conversations when the frames hold several)."""
    empty = pd.DataFrame()
    frames = RunFrames(
        steps=steps, events=events, calls=calls if calls is not None else empty, answers=empty, scores=empty
    )
    metrics = compute_metrics(frames, dataset_kind="synthetic", n_boot=0)
    overall = metrics[metrics["group_key"] == "all"].set_index("name")["value"]
    summary = {name: float(overall.get(name, float("nan"))) for name in SUMMARY_METRICS}
    summary["n_steps"] = float(len(steps))
    if len(steps):
        last = steps.sort_values("step", kind="stable").groupby("conversation_id", sort=False).tail(1)
        summary["final_observation_tokens"] = float(pd.to_numeric(last["observation_tokens"], errors="coerce").mean())
    else:
        summary["final_observation_tokens"] = float("nan")
    return summary


def _as_sample(messages: Sample | Sequence[Message] | None) -> Sample:
    if messages is None:
        return sample_conversation()
    if isinstance(messages, Sample):
        return messages
    return Sample.of(messages)


async def _replay(sample: Sample, options: dict[str, Any], latency: LatencyModel) -> tuple[Any, str]:
    clock = VirtualClock(sample.messages[0].created_at)
    recorder = RowRecorder(sample.conversation_id, clock)
    memory = ObservationalMemory(
        options,
        scheduler=VirtualScheduler(clock, latency),
        client=ModelClient(on_call=recorder.on_call),
        on_event=recorder.on_data,
        token_counter=SampleTokenCounter(sample.token_counts),
    )
    prompt_tokens = memory_prompt_tokens(memory.counter)
    thread = sample.thread_id
    step = 0
    for step, message in enumerate(sample.messages, start=1):
        clock.set(message.created_at)
        result = await memory.add_messages(thread, [_fresh(message, thread)])
        recorder.rows.steps.append(
            step_row(sample.conversation_id, thread, step, clock.now(), message.id, result, prompt_tokens)
        )
    final = await memory.finalize(thread)
    recorder.rows.steps.append(
        step_row(sample.conversation_id, thread, step + 1, clock.now(), None, final, prompt_tokens)
    )
    return recorder.rows, await memory.get_observations(thread)


def _fresh(message: Message, thread: str) -> Message:
    """A per-simulation copy: the engine sets ids on the messages it stores, and simulations may run
    in other threads than the one that keeps the sample (the parts, immutable here, are shared)."""
    return Message(
        id=message.id, role=message.role, parts=message.parts, created_at=message.created_at, thread_id=thread
    )


def _frame(rows: list[dict[str, Any]], table: str) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    if table == "events" and len(frame):
        frame["seq"] = range(1, len(frame) + 1)
        frame["payload"] = [to_safe_json(payload) for payload in frame["payload"]]
    if len(frame) == 0:
        frame = pd.DataFrame(columns=["conversation_id"])
    frame.insert(0, "run_id", SIMULATION_RUN_ID)
    return typed_frame(frame.reindex(columns=_columns(table)), table)


def _columns(table: str) -> list[str]:
    return [column.name for column in columns_of(table)]


__all__ = [
    "DEFAULT_SETTINGS",
    "SIMULATION_RUN_ID",
    "SUMMARY_METRICS",
    "Sample",
    "SampleTokenCounter",
    "SimulationResult",
    "engine_options",
    "sample_conversation",
    "simulate",
    "simulation_summary",
]

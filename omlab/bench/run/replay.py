"""Replaying a dataset conversation through the engine in virtual time, recording every row.

What the system under test sees of a :class:`~omlab.bench.datasets.schema.Conversation` is only each turn's
role, text and time. Ids are anonymised per conversation (:mod:`omlab.bench.datasets.anonymised_ids`): the thread is ``c-<10 hex>`` (a hash of
the conversation id, so LongMemEval's ``_abs`` suffix or ``answer_…`` session ids can never reach a
model) and messages are ``<thread>-m00042`` in conversation order.

Time is virtual: the engine runs on a :class:`~omlab.engine.scheduler.VirtualScheduler` whose
:class:`~omlab.engine.clock.VirtualClock` is set to each batch's timestamp (the dataset's turn
times; loaders space the turns of a session by a pace when a dataset only has session dates).
Background observer/reflector calls land at ``start + latency`` (the configured latency model),
synchronous ones advance the clock by their latency: that is the blocking a sweep measures.

Ingestion granularity: ``message`` adds one message per step; ``pair`` adds a user turn together
with the assistant turns that answer it (one step, stamped with the last of them); ``turn`` steps
where a Mastra agent does (:func:`agent_step`: at each user message and before a second reply of
the same turn), which is how a production thread was observed. Scope: one
thread per conversation, sessions in order; or, with ``scope = "resource"`` (the published
LongMemEval setup), one thread per session in one resource, questions asked in a fresh thread.

Every step becomes a ``steps`` row, every ``data-om-*`` part and debug event an ``events`` row and
every model call a ``model_calls`` row (``docs/results-schema.md``). ``context_tokens`` of a step is
what the actor would carry: unobserved message tokens + observation tokens + the fixed memory
prompt (instructions, tags, reminder; counted once with the engine's token counter) when the log
is not empty. It is an estimate of message contents and ignores chat-format overhead.
A last row, one step number after the final ingest step, records :meth:`finalize` (its
``message_id`` is NULL and its ``blocked_s`` 0: waiting for background work once the conversation
is over is not time the actor spends blocked).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from omlab.bench.datasets.anonymised_ids import message_id, thread_key
from omlab.bench.datasets.mastra.parts import replay_parts
from omlab.bench.datasets.schema import Conversation, Turn
from omlab.bench.results.event_rows import event_row
from omlab.engine.clock import VirtualClock
from omlab.engine.events import DataPart, DebugEvent
from omlab.engine.messages import Message
from omlab.engine.prompts import CONTEXT_INSTRUCTIONS, CONTEXT_PROMPT, CONTINUATION_REMINDER
from omlab.engine.scheduler import LatencyModel, VirtualScheduler
from omlab.engine.step_result import StepResult
from omlab.engine.token_counter import TokenCounter
from omlab.llm.client import ModelClient
from omlab.llm.types import ModelCall
from omlab.memory import ObservationalMemory

ClientFactory = Callable[[Callable[[ModelCall], None]], ModelClient]
"""Builds the model client of one replay, given the hook that records its calls."""

# Transcripts and logs a debug event repeats from the data parts; dropped in "compact" mode.
_BULKY_DEBUG_FIELDS = ("messages", "previousObservations", "rawObserverOutput", "observations")


class ReplayError(RuntimeError):
    """A conversation that cannot be replayed as configured."""


def conversation_messages(
    conversation: Conversation, thread_id: str | None = None, *, speaker_names: bool = False
) -> list[Message]:
    """The conversation's turns as engine messages with anonymised ids, in session order (a turn
    with stored parts, from a Mastra import, keeps them all but production's OM markers).
    ``speaker_names``: each message carries its turn's speaker as its ``name`` (LoCoMo's official
    protocol: the Observer and the actor read "Caroline", not "User")."""
    thread = thread_id or thread_key(conversation.id)
    return [
        _message(turn, message_id(thread, index), thread, turn.speaker if speaker_names else None)
        for index, turn in enumerate(conversation.iter_turns(), start=1)
    ]


def _message(turn: Turn, id_: str, thread: str, name: str | None) -> Message:
    if turn.parts is None:
        return Message.of(turn.role, turn.content, turn.created_at, id=id_, thread_id=thread, name=name)
    # fresh engine parts every replay: the engine caches token counts on them
    parts = replay_parts(turn.parts)
    return Message(id=id_, role=turn.role, parts=parts, created_at=turn.created_at, thread_id=thread, name=name)


def session_thread_ids(conversation: Conversation, resource_id: str) -> list[str]:
    """Per turn, the neutral thread id of its session (``<resource>-s003``) for resource scope."""
    return [
        f"{resource_id}-s{index:03d}"
        for index, session in enumerate(conversation.sessions, start=1)
        for _ in session.turns
    ]


def ingest_batches(messages: Sequence[Message], granularity: str) -> list[list[Message]]:
    """Messages grouped into engine steps: one each (``message``) or user turn + replies (``pair``).
    A batch never spans two threads."""
    if granularity in ("message", "turn"):
        return [[message] for message in messages]
    if granularity != "pair":
        raise ReplayError(f"ingest must be 'message', 'pair' or 'turn', got {granularity!r}")
    batches: list[list[Message]] = []
    for message in messages:
        if message.role == "user" or not batches or batches[-1][0].thread_id != message.thread_id:
            batches.append([message])
        else:
            batches[-1].append(message)
    return batches


def memory_prompt_tokens(counter: TokenCounter) -> int:
    """Tokens of the fixed memory prompt the actor gets whenever the observation log is not empty."""
    fixed = (
        f"{CONTEXT_PROMPT}\n\n{CONTEXT_INSTRUCTIONS}",
        "<observations>",
        "</observations>",
        CONTINUATION_REMINDER,
    )
    return sum(counter.count_string(text) for text in fixed)


@dataclass(slots=True)
class ReplayRows:
    """The result rows of one replay (no ``run_id``: the writer adds it)."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    model_calls: list[dict[str, Any]] = field(default_factory=list)
    call_texts: list[dict[str, Any]] = field(default_factory=list)
    """The calls' prompts and responses (not kept with a prepared memory: a reusing run has none)."""


@dataclass(slots=True)
class ReplayResult:
    """What a replay did, and the engine holding the final memory."""

    thread_id: str  # where questions are asked (resource scope: a fresh thread of the resource)
    memory: ObservationalMemory
    rows: ReplayRows
    n_messages: int
    n_message_tokens: int
    n_steps: int
    observed_message_ids: list[str]
    blocked_s: float
    final: StepResult
    resource_id: str | None = None


class RowRecorder:
    """Turns engine events and model calls into result rows for one conversation."""

    def __init__(self, conversation_id: str, clock: VirtualClock, *, debug_payloads: str = "full") -> None:
        self.conversation_id = conversation_id
        self.clock = clock
        self.compact = debug_payloads == "compact"
        self.rows = ReplayRows()

    def on_data(self, part: DataPart) -> None:
        """Record a ``data-om-*`` part, stamped with the virtual time it was emitted at."""
        self.rows.events.append(event_row(self.conversation_id, "data", part.type, self.clock.now(), part.data))

    def on_debug(self, event: DebugEvent) -> None:
        """Record a debug event (its own timestamp; payload = its fields + thread/resource ids)."""
        fields = event.fields
        if self.compact:
            fields = {k: v for k, v in fields.items() if k not in _BULKY_DEBUG_FIELDS}
        payload = {"threadId": event.thread_id, "resourceId": event.resource_id, **fields}
        self.rows.events.append(event_row(self.conversation_id, "debug", event.type, event.timestamp, payload))

    def on_call(self, call: ModelCall) -> None:
        """Record a model call."""
        self.rows.model_calls.append(call_row(self.conversation_id, call))
        self.rows.call_texts.append(call_text_row(self.conversation_id, call))


def call_row(conversation_id: str, call: ModelCall, question_id: str | None = None) -> dict[str, Any]:
    """A ``model_calls`` row (``cycle_id`` from the engine's request metadata; ``question_id`` for
    the actor and judge calls made for one question).

    Two costs: ``cost_usd`` is the call as configured, its tokens priced with this run's prices
    (for a response-cache hit too: never the cost stored with the cached answer), and
    ``cost_usd_paid`` what this run paid a provider for it (0.0 for a cache hit). For a cache hit
    ``latency_s`` is that of the call that produced the cached answer (what the configuration's
    calls take)."""
    latency, configured = call.latency_s, call.configured_cost_usd
    if call.cached:
        latency = call.metadata.get("llm", {}).get("original_latency_s", latency)
    elif configured is None:
        configured = call.cost_usd
    return {
        "conversation_id": conversation_id,
        "call_id": call.call_id,
        "role": call.role,
        "requested_model": call.requested_model,
        "resolved_model": call.resolved_model,
        "tier": call.tier,
        "routing_tokens": call.routing_tokens,
        "input_tokens": call.input_tokens,
        "output_tokens": call.output_tokens,
        "cost_usd": configured,
        "cost_usd_paid": 0.0 if call.cached else call.cost_usd,
        "latency_s": latency,
        "started_at": call.started_at,
        "attempts": call.attempts,
        "cached": bool(call.cached),
        "error": call.error,
        "cycle_id": _text(call.metadata.get("cycleId")),
        "question_id": question_id,
    }


def call_text_row(conversation_id: str, call: ModelCall) -> dict[str, Any]:
    """A ``call_texts`` row: the messages the call sent and the text it got back (the writer drops
    credential-named keys and key-shaped text from both)."""
    return {
        "conversation_id": conversation_id,
        "call_id": call.call_id,
        "prompt": list(call.prompt),
        "response": call.response,
    }


def step_row(
    conversation_id: str,
    thread_id: str,
    step: int,
    ts: datetime,
    message_id: str | None,
    result: StepResult,
    prompt_tokens: int,
    *,
    blocked_s: float | None = None,
) -> dict[str, Any]:
    """A ``steps`` row from a :class:`StepResult` (see the module docstring for ``context_tokens``);
    ``blocked_s`` overrides the result's own."""
    status = result.status
    overhead = prompt_tokens if status.observation_tokens > 0 else 0
    return {
        "conversation_id": conversation_id,
        "thread_id": thread_id,
        "step": step,
        "ts": ts,
        "message_id": message_id,
        "pending_tokens": status.pending_tokens,
        "threshold": float(status.threshold),
        "observation_tokens": status.observation_tokens,
        "reflect_threshold": float(status.reflect_threshold),
        "block_after": None if status.block_after is None else float(status.block_after),
        "buffered_chunks": status.buffered_chunks,
        "buffered_message_tokens": status.buffered_message_tokens,
        "generation": status.generation_count,
        "context_tokens": status.pending_tokens + status.observation_tokens + overhead,
        "blocked_s": float(result.blocked_s if blocked_s is None else blocked_s),
        "observed": bool(result.observed),
        "activated": bool(result.activated),
        "reflected": bool(result.reflected),
    }


async def replay_conversation(
    conversation: Conversation,
    engine_options: dict[str, Any],
    *,
    make_client: ClientFactory,
    latency: LatencyModel,
    ingest: str = "message",
    timezone: str = "UTC",
    scope: str = "thread",
    debug_payloads: str = "full",
    on_step: Callable[[int, int], None] | None = None,
    speaker_names: bool = False,
) -> ReplayResult:
    """Feed ``conversation`` to a fresh engine in virtual time and record every row.

    Args:
        conversation: The conversation (its questions are not used here).
        engine_options: ``observationalMemory`` options (camelCase as in the seed), models included.
        make_client: Builds the model client, given the call recorder.
        latency: Latency model of the virtual scheduler.
        ingest: ``message``, ``pair`` or ``turn``.
        timezone: IANA zone the engine dates observations in.
        scope: ``thread`` (one thread per conversation) or ``resource`` (a thread per session).
        debug_payloads: ``full`` or ``compact`` (drop transcripts repeated in debug events).
        on_step: Called with ``(steps done, steps total)`` after each step.
        speaker_names: Messages carry their speakers' names (see :func:`conversation_messages`).

    Raises:
        ReplayError: an unknown ``scope``, or the conversation has no turns.
        ModelCallError / engine errors: a model call failed under ``failurePolicy: abort``.
    """
    if scope not in ("thread", "resource"):
        raise ReplayError(f"scope must be 'thread' or 'resource', got {scope!r}")
    thread_id = thread_key(conversation.id)
    messages = conversation_messages(conversation, thread_id, speaker_names=speaker_names)
    resource_id = None
    if scope == "resource":
        # the published LongMemEval setup: one thread per session, one resource per conversation;
        # questions are asked in a fresh thread of the resource
        resource_id = thread_id
        session_threads = session_thread_ids(conversation, resource_id)
        for message, session_thread in zip(messages, session_threads, strict=True):
            message.thread_id = session_thread
        thread_id = f"{resource_id}-ask"
    if not messages:
        raise ReplayError(f"conversation {conversation.id!r} has no turns to replay")
    clock = VirtualClock(messages[0].created_at)
    scheduler = VirtualScheduler(clock, latency)
    recorder = RowRecorder(conversation.id, clock, debug_payloads=debug_payloads)
    memory = ObservationalMemory(
        engine_options,
        scheduler=scheduler,
        client=make_client(recorder.on_call),
        on_event=recorder.on_data,
        on_debug_event=recorder.on_debug,
        timezone=timezone,
    )
    prompt_tokens = memory_prompt_tokens(memory.counter)
    batches = ingest_batches(messages, ingest)
    observed: list[str] = []
    step = 0
    for step, batch in enumerate(batches, start=1):
        clock.set(batch[-1].created_at)
        target = batch[0].thread_id or thread_id
        if ingest == "turn":
            result = await agent_step(memory, target, batch[0], messages[step - 2] if step > 1 else None, resource_id)
        else:
            result = await memory.add_messages(target, batch, resource_id=resource_id)
        observed.extend(result.observed_message_ids)
        recorder.rows.steps.append(
            step_row(
                conversation.id, batch[0].thread_id or thread_id, step, clock.now(), batch[-1].id, result, prompt_tokens
            )
        )
        if on_step is not None:
            on_step(step, len(batches))
    final = await memory.finalize(batches[-1][0].thread_id or thread_id)
    observed.extend(final.observed_message_ids)
    # waiting for background work after the last message is bookkeeping, not the actor blocking
    recorder.rows.steps.append(
        step_row(conversation.id, thread_id, step + 1, clock.now(), None, final, prompt_tokens, blocked_s=0.0)
    )
    return ReplayResult(
        thread_id=thread_id,
        resource_id=resource_id,
        memory=memory,
        rows=recorder.rows,
        n_messages=len(messages),
        n_message_tokens=memory.counter.count_messages(messages),
        n_steps=len(batches),
        observed_message_ids=observed,
        blocked_s=scheduler.blocked_s,
        final=final,
    )


async def agent_step(
    memory: ObservationalMemory,
    thread_id: str,
    message: Message,
    previous: Message | None,
    resource_id: str | None = None,
) -> StepResult:
    """Add one message the way a Mastra agent runs the OM processor (``ingest = "turn"``).

    A user message opens a turn and is stepped once added (the agent's step 0). An assistant
    reply is saved without a step, except a second or later reply of the same turn (or a reply
    with no turn open), before which the agent runs a step. This is how ``@mastra/memory``
    steps in production, so a replay of an imported thread observes at the same messages."""
    if message.role == "user":
        return await memory.add_messages(thread_id, [message], resource_id=resource_id)
    result = None
    if previous is None or previous.role != "user" or previous.thread_id != message.thread_id:
        result = await memory.process(thread_id)
    await memory.add_messages(thread_id, [message], resource_id=resource_id, process=False)
    status = await memory.status(thread_id)
    if result is None:
        return StepResult(status=status)
    result.status = status
    return result


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


__all__ = [
    "ClientFactory",
    "ReplayError",
    "ReplayResult",
    "ReplayRows",
    "RowRecorder",
    "agent_step",
    "call_row",
    "call_text_row",
    "conversation_messages",
    "event_row",
    "ingest_batches",
    "memory_prompt_tokens",
    "replay_conversation",
    "session_thread_ids",
    "step_row",
]

"""The in-process view of one memory: head record, unobserved messages and their token counts."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from omlab.engine.messages import Message
from omlab.engine.record import ObservationRecord

#: The reference's per-conversation overhead, counted once for a non-empty message list.
CONVERSATION_OVERHEAD = 24


@dataclass(slots=True, eq=False)
class LiveMemory:
    """What the engine keeps in memory for one key (thread scope: one thread).

    ``unobserved`` are the messages the actor still sees raw, in arrival order, with their cached
    token counts in ``counts``; ``pending_sum`` is their running sum, so a step costs O(new
    messages). Messages inside buffered chunks are still unobserved until their chunk is activated;
    ``in_flight_ids`` are those handed to a background Observer that has not landed yet.
    """

    key: str
    thread_id: str
    resource_id: str | None
    record: ObservationRecord
    unobserved: list[Message]
    counts: dict[str, int]
    pending_sum: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    step: int = 0
    #: an unproductive reflection is retried only once the log reaches this size
    reflection_retry_at: int | None = None
    #: pending-token level at which the last buffer op started (``lastBufferedAtTokens``)
    buffer_boundary: int = 0
    in_flight_ids: set[str] = field(default_factory=set)
    #: ``compat="reference"``: whether this step opens a turn (its newest message is a user's),
    #: and the boundary a buffer op started at in the turn's first step (see reference_mode)
    turn_opening_step: bool = True
    turn_buffer_boundary: int | None = None
    #: ``compat="reference"``: messages a triggered buffer op sealed (no later message merges in)
    sealed_ids: set[str] = field(default_factory=set)
    #: time of the last assistant message (for ``activateAfterIdle``)
    last_activity_at: datetime | None = None
    #: model of the last assistant turn (for ``activateOnProviderChange``)
    last_actor_model: str | None = None
    #: the newest message added (temporal markers compare against it)
    last_message: Message | None = None
    #: message tokens per buffered chunk id, recounted from ``counts`` (cleared when a message changes)
    chunk_tokens: dict[str, int] = field(default_factory=dict)
    #: ``compat="reference"`` in resource scope: the reference's observed-id sets
    #: (``omlab.engine.reference_resource.ReferenceResourceState``)
    reference_resource: Any = None

    @property
    def obs_key(self) -> str:
        return f"{self.key}|obs"

    @property
    def refl_key(self) -> str:
        return f"{self.key}|refl"

    @property
    def pending_tokens(self) -> int:
        return self.pending_sum + CONVERSATION_OVERHEAD if self.unobserved else 0

    def tokens_of(self, messages: Iterable[Message]) -> int:
        """Token count of a subset of the unobserved messages, as a list."""
        total, any_message = 0, False
        for message in messages:
            total += self.counts.get(message.id, 0)
            any_message = True
        return total + CONVERSATION_OVERHEAD if any_message else 0

    def chunk_message_tokens(self) -> list[int]:
        """Each buffered chunk's message tokens, counted from the live context (weights taken at
        buffering time go stale when messages grow), memoised per chunk."""
        out = []
        for chunk in self.record.buffered_chunks:
            tokens = self.chunk_tokens.get(chunk.id)
            if tokens is None:
                # a chunk's weight is its messages counted as a list (with the list overhead), as
                # at buffering time and in the reference's recount
                present = [mid for mid in chunk.message_ids if mid in self.counts]
                tokens = sum(self.counts[mid] for mid in present) + (CONVERSATION_OVERHEAD if present else 0)
                self.chunk_tokens[chunk.id] = tokens
            out.append(tokens)
        return out

    def chunked_ids(self) -> set[str]:
        return {mid for chunk in self.record.buffered_chunks for mid in chunk.message_ids}

    def unbuffered(self) -> list[Message]:
        """Unobserved messages that are in no chunk and in no in-flight buffer op."""
        taken = self.chunked_ids() | self.in_flight_ids
        return [m for m in self.unobserved if m.id not in taken]

    def is_open(self, message: Message) -> bool:
        """Whether ``message`` is pending and in no buffered chunk or in-flight buffer op."""
        mid = message.id
        return (
            mid in self.counts
            and mid not in self.in_flight_ids
            and mid not in self.sealed_ids
            and mid not in self.chunked_ids()
        )

    def add(self, message: Message, tokens: int) -> None:
        if message.id in self.counts:  # an update of a pending message replaces it
            self.chunk_tokens.clear()
            self.pending_sum -= self.counts[message.id]
            self.unobserved = [m for m in self.unobserved if m.id != message.id]
        self.unobserved.append(message)
        self.counts[message.id] = tokens
        self.pending_sum += tokens

    def remove(self, message_ids: Iterable[str]) -> None:
        gone = set(message_ids)
        if not gone:
            return
        self.unobserved = [m for m in self.unobserved if m.id not in gone]
        self.sealed_ids -= gone  # observed now: no longer a pending message to keep sealed
        for message_id in gone:
            self.pending_sum -= self.counts.pop(message_id, 0)


def ids_at_cursor(
    record: ObservationRecord, observed: Iterable[Message], previous_cursor: datetime | None
) -> list[str]:
    """The ids a record must remember after observing ``observed``: those created at the cursor.

    Reloading takes messages created at or after the cursor minus those ids, so older ids carry no
    information; keeping only these bounds the record's size (the reference kept every id, which
    made each save O(conversation)).
    """
    cursor = record.last_observed_at
    kept = [m.id for m in observed if cursor is not None and m.created_at >= cursor]
    if previous_cursor is not None and previous_cursor == cursor:
        kept = record.observed_message_ids + kept
    return kept


def has_pending_tool_call(message: Message) -> bool:
    """Whether the message holds a tool call that has not returned yet."""
    return any(p.type == "tool-invocation" and p.state in ("call", "partial-call") for p in message.parts)


def safe_prefix(messages: list[Message]) -> list[Message]:
    """The leading messages before the first one with a pending tool call: a call and its result
    must be observed (and pruned) together (#15244)."""
    for index, message in enumerate(messages):
        if has_pending_tool_call(message):
            return messages[:index]
    return messages

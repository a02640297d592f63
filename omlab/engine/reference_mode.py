"""``compat="reference"``: the reference engine's behaviour where omlab deliberately differs.

omlab's default semantics correct or simplify a few of ``@mastra/memory`` 1.31.0's behaviours
(docs/divergences.md). A researcher who wants to predict what production Mastra does sets
``compat="reference"``; each switch below is one entry of the "Reference mode" table in
docs/divergences.md and is proven by replaying the recorded reference traces
(``tests/engine/test_mastra_reference_mode.py``).

* activation text: the activated chunks' texts are joined by a blank line after a single
  ``--- message boundary (<cursor>) ---`` stamped with the new cursor, and the log's token count
  grows by the chunks' own counts (omlab: a boundary before every chunk, stamped with that chunk's
  newest message, and a recount of the log);
* activation parts: one ``data-om-activation`` per chunk, each with ``chunksActivated: 1`` (omlab:
  the number of chunks the activation took);
* D4, buffered cursor: a buffered chunk's cursor is its newest message's ``createdAt`` + 1 ms;
* ``blockAfter`` band: a step that reaches the threshold activates; buffering runs only
  below the threshold; at or over it after activating, the step waits for the in-flight buffer,
  then activates what it left or, with no chunk left, observes synchronously; ``blockAfter`` only
  makes an activation take as much as it may (omlab: buffering keeps running past the threshold,
  the band up to ``blockAfter`` only activates, and ``blockAfter`` blocks);
* buffered-reflection slice: the lines a background reflection condenses are estimated from the
  log's average tokens per line (``floor(observationTokens × bufferActivation / average)``) and
  the slice's size is that estimate, not a count; the reflection is kept even when it did not
  shrink its slice (omlab: lines counted one by one, and an output that did not shrink is refused);
* chunks on a reflection rollover: a new generation starts with no buffered chunk (the chunks stay
  on the retired record and their messages are buffered again; omlab moves them to the new
  generation) and no stored pending count;
* consecutive assistant messages: an assistant message that follows an assistant message not yet
  buffered, sealed (a triggered buffer op seals its candidates even when it then skips them as too
  small) or observed is merged into it (its parts appended; the first message's id and time
  kept), as the reference's message list does within a turn, so the pair costs one message
  overhead (6 tokens) less and the Observer sees one longer message;
* order of a step: a turn's first step (its newest message is a user's) activates when at the
  threshold and reflects up front; then the step buffers below the threshold or, at or over it,
  waits for the in-flight buffer, then activates what it left (and reflects) or observes
  synchronously (omlab: activation, then buffering or the band, then one reflection);
* later steps of a turn: once a step of a turn started a buffer op, the turn's later steps check
  the buffering interval against the pending count that op started at (the reference's turn keeps
  that record, written when the op started), so a later step rarely buffers, until a step of the
  turn activates or observes synchronously: the reference then resets its buffering state and
  reloads the record, and the next step checks the interval from 0 again; a step with nothing
  left to buffer still consumes the interval;
* D3, pending count of the activation choice: which chunks to activate is chosen with the
  pending count stored on the record at the end of the last step
  (``record.pending_message_tokens``, lowered by what each activation since took), not the live
  one; whether to activate still uses the live count;
* a SerializedMemoryConfig builds the engine as Memory does: ``OMConfig.from_memory_config``
  leaves out ``observation``/``reflection`` ``activateAfterIdle`` and ``activateOnProviderChange``
  (each warned by name; the top-level ones still apply) and leaves ``obscureThreadIds`` off in
  resource scope (omlab: applies them, and hashes thread ids in resource scope, as the seed
  documents); the switch is in ``omlab/engine/config_options.py``;
* D5, buffer boundary after an op: a successful buffer op leaves the interval boundary at the
  op's own message tokens, not at the pending count it started at;
* idle activation marker: ``ttlExpiredMs`` is the whole idle time (omlab: how long the TTL was
  exceeded, as the seed documents it; ``omlab.engine.ttl.ttl_expired_ms``);
* relative dates in the actor context: annotated as the reference's
  ``addRelativeTimeToObservations`` does (``omlab.engine.reference_relative_time``; omlab: its
  wider reading of ranges, periods, ISO dates and dates inside lines);
* temporal markers: the reference's relative-span wording and timestamp
  (``omlab.engine.temporal_markers.format_temporal_gap``; omlab: its bucketed ``[… later — …]``);
* resource scope with several threads: the pending count is the unobserved list of every thread
  after the record's cursor plus the other threads' ``<other-conversation>`` blocks counted as a
  string (another thread's messages count twice); a cycle files that whole list under the current
  thread's ``<thread>`` section (each other thread still brings its own messages since its own
  cursor, so a message can be observed twice), never hands the Observer a message twice, merges a
  section into the thread's *first* section of the same date, and sets the cursor to the cycle's
  newest message (omlab: each unobserved message counted once and filed under its own thread;
  ``omlab.engine.reference_resource``);
* bullet order: the Observer's and the Reflector's bullets are kept as written (omlab: the
  bullets of each ``Date:`` group are sorted by their time);
* degenerate synchronous cycle: when the Observer loops twice, the cycle is skipped quietly
  (nothing committed, its messages stay unobserved, the failed part is still emitted) whatever
  ``failurePolicy`` says (omlab: under the default ``"abort"`` the error propagates, as documented).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from omlab.engine.errors import DegenerateObserverOutputError
from omlab.engine.observation_text import format_boundary
from omlab.engine.thresholds import js_round

CURSOR_OFFSET = timedelta(milliseconds=1)
"""The reference moves a buffered chunk's cursor 1 ms past its newest message (D4)."""


def skips_degenerate_cycle(compat: str, error: BaseException) -> bool:
    """Whether a failed synchronous observation cycle is skipped quietly because the reference
    skips a degenerate one (``compat="reference"``) instead of raising it."""
    return compat == "reference" and isinstance(error, DegenerateObserverOutputError)


def selection_pending(record: Any, chunk_tokens: list[int]) -> int:
    """The pending count the reference selects a chunk prefix with (D3): the record's stored
    count, or the chunks' total when none is stored."""
    return record.pending_message_tokens or sum(chunk_tokens)


def boundary_after_buffer(op_tokens: int) -> int:
    """The buffering interval boundary the reference keeps after a successful op (D5)."""
    return op_tokens


def reflection_slice(total_lines: int, log_tokens: int, activation_point: float) -> tuple[int, int]:
    """``(lines, estimated tokens)`` of the log's head a buffered reflection condenses, as the
    reference estimates them from the average tokens per line."""
    average = log_tokens / total_lines if total_lines > 0 else 0.0
    lines = min(math.floor(activation_point / average), total_lines) if average > 0 else total_lines
    return lines, js_round(average * lines)


def merge_assistant_runs(batch: list[Any], previous: Any, can_merge: Callable[[Any], bool]) -> list[Any]:
    """``batch`` with each assistant message that follows an assistant message merged into it.

    ``previous`` is the thread's last message before ``batch``; ``can_merge(message)`` says
    whether a stored message is still open (not buffered, observed or being observed). A merged
    message keeps the first one's id, time and metadata and replaces it when stored."""
    out: list[Any] = []
    last = previous
    for message in batch:
        open_last = last is not None and (bool(out) and out[-1] is last or can_merge(last))
        if message.role == "assistant" and last is not None and last.role == "assistant" and open_last:
            merged = dataclasses.replace(last, parts=[*last.parts, *message.parts], token_cache={})
            if out and out[-1] is last:
                out[-1] = merged
            else:
                out.append(merged)
            last = merged
        else:
            out.append(message)
            last = message
    return out


def later_step_boundary(boundary: int, turn_boundary: int | None) -> int:
    """The boundary a later step of a turn checks the buffering interval against: the larger of
    the live one and the pending count a buffer op of the turn's first step started at."""
    return max(boundary, turn_boundary or 0)


def reset_turn_boundary(live: Any) -> None:
    """After a step activates or observes synchronously, the reference resets its buffering state
    and reloads the turn's record: the turn's later steps check the buffering interval from the
    live boundary (0 after an activation), no longer from the pending count a buffer op of the
    turn started at."""
    live.turn_buffer_boundary = None


def store_step_pending(record: Any, pending_tokens: int) -> None:
    """End of a step: the reference stores the step's pending count on the record."""
    record.pending_message_tokens = pending_tokens


def append_activated(record: Any, activated: list[Any], message_tokens: int) -> None:
    """Put the ``activated`` chunks (weighing ``message_tokens``) into ``record``'s log as the
    reference's storage does."""
    cursor = activated[-1].last_observed_at + CURSOR_OFFSET
    joined = "\n\n".join(chunk.observations for chunk in activated)
    record.active_observations = (
        f"{record.active_observations}{format_boundary(cursor)}{joined}" if record.active_observations else joined
    )
    record.observation_token_count += sum(chunk.token_count for chunk in activated)
    record.last_observed_at = cursor
    record.pending_message_tokens = max(0, record.pending_message_tokens - message_tokens)


__all__ = [
    "CURSOR_OFFSET",
    "append_activated",
    "boundary_after_buffer",
    "reflection_slice",
    "reset_turn_boundary",
    "selection_pending",
    "store_step_pending",
]

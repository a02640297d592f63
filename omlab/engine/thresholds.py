"""The threshold arithmetic of Observational Memory, as pure functions.

Every function here is a direct port of a formula in om-reference.md §2.2, §2.5, §2.6 and §2.8:
when the Observer runs, when background buffering fires, how many buffered chunks an activation
takes, and when reflection starts or blocks. Nothing here reads a clock, a record or a config
object, so the engine, the what-if simulator and the plots all share one definition.

Rounding follows the reference (JavaScript ``Math.round``: halves round up), not Python's
banker's rounding, so resolved values match the reference to the token.

One deliberate difference from the reference code (om-reference.md §10, #22078): omlab keeps
buffering past the threshold, so :func:`should_trigger_buffer` has no "only below the threshold"
guard, and :func:`blocking_band` describes the documented band between ``messageTokens`` and
``blockAfter`` where only buffering and activation run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

#: an activation leaves at least min(this, retention floor) raw message tokens
MIN_REMAINING_CAP = 1000
#: an "over" chunk boundary may eat at most this share of the retention floor
MAX_OVERSHOOT_RATIO = 0.95
#: the buffering interval halves once pending tokens pass threshold - RAMP_FACTOR * bufferTokens
RAMP_FACTOR = 1.1
#: a buffer boundary is stale when pending tokens fall below this share of it
STALE_BOUNDARY_RATIO = 0.5
#: the minimum new tokens a buffer op needs when bufferTokens is unknown (5000 / 2)
FALLBACK_MIN_BUFFER_TOKENS = 2500
#: values of blockAfter in [1, BLOCK_AFTER_ABSOLUTE_FROM) are multipliers, larger ones absolute
BLOCK_AFTER_ABSOLUTE_FROM = 100
#: values of bufferActivation at or above this are absolute retention token counts
ABSOLUTE_ACTIVATION_FROM = 1000


def js_round(value: float) -> int:
    """Round like JavaScript's ``Math.round``: to the nearest integer, halves towards +infinity."""
    return math.floor(value + 0.5)


@dataclass(frozen=True, slots=True)
class TokenRange:
    """A message threshold that grows into unused observation space (``shareTokenBudget``).

    ``min`` is the base ``messageTokens``; ``max`` is the total budget
    (``messageTokens + observationTokens``).
    """

    min: int
    max: int

    def __post_init__(self) -> None:
        if self.min > self.max:
            raise ValueError(f"TokenRange: min ({self.min}) must not exceed max ({self.max})")


Threshold = int | TokenRange


def max_threshold(threshold: Threshold) -> int:
    """The largest value a threshold can take: the number itself, or the range's ``max``."""
    return threshold.max if isinstance(threshold, TokenRange) else threshold


def dynamic_threshold(threshold: Threshold, observation_tokens: int) -> int:
    """The message threshold in force given the current observation size (§2.2).

    A plain number is returned unchanged. A range returns ``round(max(max - observations, min))``:
    with 30k + 40k, no observations gives 70k, 40k of observations gives 30k.
    """
    if not isinstance(threshold, TokenRange):
        return threshold
    return js_round(max(threshold.max - observation_tokens, threshold.min))


def resolve_buffer_tokens(buffer_tokens: float | bool | None, message_tokens: Threshold) -> int | None:
    """Resolve ``observation.bufferTokens`` to an absolute token interval (§2.5).

    ``False``/``None`` → ``None`` (no buffering). A value strictly between 0 and 1 is a ratio of the
    (maximum) message threshold: 0.2 of 30k → 6,000. Anything else is an absolute count and is
    returned as an integer; validation (``> 0`` and ``< messageTokens``) is the config's job.
    """
    if buffer_tokens is None or buffer_tokens is False:
        return None
    if 0 < buffer_tokens < 1:
        return js_round(max_threshold(message_tokens) * buffer_tokens)
    return js_round(buffer_tokens)


def resolve_block_after(block_after: float | None, threshold: Threshold) -> int | None:
    """Resolve ``blockAfter`` to an absolute token count (§2.6).

    A value in ``[1, 100)`` multiplies the (maximum) threshold: 1.2 × 30k → 36,000. A value
    ``>= 100`` is already absolute. ``None`` → ``None``. Values below 1 are returned as given
    (rounded); the config rejects them.
    """
    if block_after is None or block_after is False:
        return None
    if 1 <= block_after < BLOCK_AFTER_ABSOLUTE_FROM:
        return js_round(max_threshold(threshold) * block_after)
    return js_round(block_after)


def retention_floor(buffer_activation: float, threshold: int) -> float:
    """Raw message tokens an activation should leave in context (§2.6).

    An absolute ``bufferActivation`` (``>= 1000``) is the floor itself; a ratio keeps
    ``threshold × (1 − ratio)`` (0.8 of 30k → 6,000; ratio 1.0 → 0). The ratio is clamped to
    [0, 1] and the floor to [0, threshold].
    """
    if buffer_activation >= ABSOLUTE_ACTIVATION_FROM:
        return float(min(buffer_activation, max(threshold, 0)))
    return max(threshold, 0) * (1 - _unit(buffer_activation))


def _unit(ratio: float) -> float:
    """``ratio`` clamped to [0, 1]: the helpers are pure and may be fed any number."""
    return max(0.0, min(1.0, float(ratio)))


def activation_ratio(buffer_activation: float, threshold: int) -> float:
    """``bufferActivation`` as a ratio in [0, 1]; an absolute value becomes ``1 − abs/threshold``."""
    if buffer_activation >= ABSOLUTE_ACTIVATION_FROM:
        return _unit(1 - buffer_activation / threshold) if threshold > 0 else 0.0
    return _unit(buffer_activation)


def min_remaining(buffer_activation: float, threshold: int) -> float:
    """The minimal raw context an activation keeps: ``min(1000, retention floor)`` (0 at ratio 1)."""
    return min(MIN_REMAINING_CAP, retention_floor(buffer_activation, threshold))


def should_trigger_buffer(
    current_tokens: float, last_boundary: float, threshold: int | None, buffer_tokens: int
) -> bool:
    """Whether pending tokens crossed into a new buffering interval since the last buffer op (§2.5).

    The interval is ``bufferTokens``, halved from the ramp point ``threshold − 1.1 × bufferTokens``
    on (finer chunks give better activation boundaries). Triggers iff
    ``floor(current / interval) > floor(last_boundary / interval)``. ``threshold=None`` disables
    the ramp. It does not refuse at or past the threshold: omlab keeps buffering in the band.
    """
    if buffer_tokens <= 0:
        raise ValueError(f"buffer_tokens must be > 0, got {buffer_tokens}")
    ramp_point = math.inf if threshold is None else threshold - buffer_tokens * RAMP_FACTOR
    interval = buffer_tokens / 2 if current_tokens >= ramp_point else buffer_tokens
    return math.floor(current_tokens / interval) > math.floor(last_boundary / interval)


def min_buffer_tokens(buffer_tokens: int | None) -> int:
    """The fewest new message tokens worth a buffer op: ``bufferTokens / 2`` (2,500 without one).

    Rounded up, so ``new_tokens >= min_buffer_tokens(b)`` is exactly ``new_tokens >= b / 2`` for
    integer token counts.
    """
    if not buffer_tokens:
        return FALLBACK_MIN_BUFFER_TOKENS
    return math.ceil(buffer_tokens / 2)


def stale_buffer_boundary(current_tokens: float, last_boundary: float) -> bool:
    """Whether the remembered buffer boundary is stale: pending tokens fell below half of it (§2.3)."""
    return last_boundary > 0 and current_tokens < STALE_BOUNDARY_RATIO * last_boundary


ActivationRule = Literal["none", "force-max-over", "over", "under", "over-fallback", "first-chunk"]


@dataclass(frozen=True, slots=True)
class ActivationChoice:
    """Which prefix of the buffered chunks an activation takes.

    ``chunks`` is the prefix length, ``tokens`` the message tokens it removes, ``rule`` the branch
    of the selection that decided (``none`` only when there are no chunks).
    """

    chunks: int
    tokens: int
    rule: ActivationRule


def select_activation_boundary(
    chunk_message_tokens: Sequence[int],
    pending_tokens: float,
    buffer_activation: float,
    threshold: int,
    *,
    force_max: bool,
) -> ActivationChoice:
    """Choose how many buffered chunks to activate (§2.6, ``swapBufferedToActive``).

    ``target = max(0, pending − floor)`` tokens should go. Walking the cumulative chunk sizes,
    ``bestOver`` is the smallest cumulative ``>= target`` and ``bestUnder`` the largest one below
    it. In order: with ``force_max`` take ``bestOver`` if it leaves ``min_remaining``; take
    ``bestOver`` if it overshoots by at most 0.95 × floor and leaves ``min_remaining``; take
    ``bestUnder`` if it leaves ``min_remaining``; take ``bestOver`` anyway; else one chunk.
    """
    n = len(chunk_message_tokens)
    if n == 0:
        return ActivationChoice(0, 0, "none")
    floor = retention_floor(buffer_activation, threshold)
    target = max(0.0, pending_tokens - floor)

    cumulative = 0
    best_over = best_over_tokens = 0
    best_under = best_under_tokens = 0
    for index, tokens in enumerate(chunk_message_tokens):
        cumulative += tokens
        if cumulative >= target:
            if best_over == 0 or cumulative < best_over_tokens:
                best_over, best_over_tokens = index + 1, cumulative
        elif cumulative > best_under_tokens:
            best_under, best_under_tokens = index + 1, cumulative

    max_overshoot = floor * MAX_OVERSHOOT_RATIO
    keep = min(MIN_REMAINING_CAP, floor)
    over_leaves_enough = pending_tokens - best_over_tokens >= keep
    if force_max and best_over and over_leaves_enough:
        return ActivationChoice(best_over, best_over_tokens, "force-max-over")
    if best_over and best_over_tokens - target <= max_overshoot and over_leaves_enough:
        return ActivationChoice(best_over, best_over_tokens, "over")
    if best_under and pending_tokens - best_under_tokens >= keep:
        return ActivationChoice(best_under, best_under_tokens, "under")
    if best_over:
        return ActivationChoice(best_over, best_over_tokens, "over-fallback")
    return ActivationChoice(1, chunk_message_tokens[0], "first-chunk")


def projected_message_removal(
    chunk_message_tokens: Sequence[int], pending_tokens: float, buffer_activation: float, threshold: int
) -> int:
    """Message tokens an activation would remove right now (the UI's ``projectedMessageRemoval``).

    The same selection as :func:`select_activation_boundary` without ``force_max``; 0 with no
    chunks, and 0 while the pending tokens are at or below the retention floor (an activation
    would have nothing to remove, as in the reference).
    """
    if pending_tokens <= retention_floor(buffer_activation, threshold):
        return 0
    return select_activation_boundary(
        chunk_message_tokens, pending_tokens, buffer_activation, threshold, force_max=False
    ).tokens


BlockingBand = Literal["below", "band", "block"]


def blocking_band(pending_tokens: float, threshold: int, block_after: int | None) -> BlockingBand:
    """Where pending tokens sit relative to the threshold and ``blockAfter`` (documented behaviour).

    ``below``: under the threshold, nothing forced. ``band``: ``threshold <= pending < blockAfter``,
    only buffering and activation run, never a blocking call. ``block``: at or above ``blockAfter``,
    or at the threshold when there is no ``blockAfter`` (async off), a synchronous call runs.
    Works for observation (message tokens) and reflection (observation tokens) alike.
    """
    if pending_tokens < threshold:
        return "below"
    if block_after is None or pending_tokens >= block_after:
        return "block"
    return "band"


def reflection_lines_to_buffer(observation_tokens: float, line_count: int, threshold: int, activation: float) -> int:
    """How many leading observation lines a background reflection covers (§2.8).

    The oldest lines worth about ``threshold × activation`` tokens, estimated with the average
    tokens per line: ``min(floor(T × a / avg), lines)``; all lines when the average is 0.
    """
    if line_count <= 0:
        return 0
    average = observation_tokens / line_count
    if average <= 0:
        return line_count
    return min(math.floor(threshold * activation / average), line_count)


def should_start_buffered_reflection(
    observation_tokens: float,
    threshold: int,
    activation: float | None,
    *,
    op_running: bool = False,
    boundary_set: bool = False,
    has_buffered_reflection: bool = False,
) -> bool:
    """Whether to start a background reflection now (§2.8 step 1).

    Needs async reflection (``activation`` set), observations below the threshold but at least
    ``threshold × activation``, no reflection op running, no remembered reflection boundary and no
    buffered reflection waiting.
    """
    if not activation or activation <= 0:
        return False
    if observation_tokens >= threshold:
        return False
    if op_running or boundary_set or has_buffered_reflection:
        return False
    return observation_tokens >= threshold * activation

"""Async buffering options: ``bufferTokens``, ``bufferActivation`` and ``blockAfter`` of both
sections, checked one by one, then how they combine with ``scope`` and ``shareTokenBudget``."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from omlab.engine.errors import ConfigError
from omlab.engine.option_checks import number
from omlab.engine.thresholds import (
    ABSOLUTE_ACTIVATION_FROM,
    BLOCK_AFTER_ABSOLUTE_FROM,
    TokenRange,
    js_round,
    resolve_block_after,
    resolve_buffer_tokens,
)

DEFAULT_BUFFER_TOKENS = 0.2
DEFAULT_BUFFER_ACTIVATION = 0.8
DEFAULT_BLOCK_AFTER = 1.2
DEFAULT_REFLECTION_BUFFER_ACTIVATION = 0.5

_SHARE_BUDGET_FIX = (
    "requires async buffering to be off (a temporary limitation). Add observation: { bufferTokens: "
    "false } and remove the other buffering options (bufferActivation, blockAfter):\n\n"
    "  observationalMemory: {\n"
    "    shareTokenBudget: true,\n"
    "    observation: { bufferTokens: false },\n"
    "  }\n"
)


@dataclass(frozen=True, slots=True)
class AsyncThresholds:
    """The resolved buffering values of both sections (all ``None`` when buffering is off)."""

    buffer_tokens: int | None = None
    buffer_activation: float | None = None
    block_after: int | None = None
    reflection_buffer_activation: float | None = None
    reflection_block_after: int | None = None


def resolve_async(
    obs: dict[str, Any],
    refl: dict[str, Any],
    *,
    scope: str,
    share: bool,
    message_tokens: int | TokenRange,
    threshold: int,
    observation_tokens: int,
) -> AsyncThresholds:
    """The buffering values from the normalized ``observation``/``reflection`` sections."""
    # raw async options: type and range first, then how they combine
    raw_buffer = obs.get("buffer_tokens")
    if raw_buffer is not None and raw_buffer is not False:
        raw_buffer = number(
            raw_buffer, "observation.bufferTokens", "a ratio in (0, 1), an absolute token count, or false"
        )
        if raw_buffer <= 0:
            raise ConfigError(
                "observation.bufferTokens",
                f"must be > 0, got {raw_buffer}; use a ratio such as 0.2, an absolute "
                f"count such as 5000, or false to disable buffering",
            )
    raw_activation = obs.get("buffer_activation")
    if raw_activation is not None:
        raw_activation = _observation_buffer_activation(raw_activation, threshold)
    raw_block = obs.get("block_after")
    if raw_block is not None:
        raw_block = _block_after_raw(raw_block, "observation.blockAfter", "messageTokens")
    raw_refl_activation = refl.get("buffer_activation")
    if raw_refl_activation is not None:
        raw_refl_activation = number(raw_refl_activation, "reflection.bufferActivation", "a ratio in (0, 1]")
        if not 0 < raw_refl_activation <= 1:
            raise ConfigError(
                "reflection.bufferActivation",
                f"must be a ratio in (0, 1] of observationTokens, got {raw_refl_activation}; "
                f"0.5 starts background reflection at half the threshold",
            )
    raw_refl_block = refl.get("block_after")
    if raw_refl_block is not None:
        raw_refl_block = _block_after_raw(raw_refl_block, "reflection.blockAfter", "observationTokens")

    explicit_async = [
        name
        for name, value in (
            ("observation.bufferTokens", raw_buffer if raw_buffer is not False else None),
            ("observation.bufferActivation", raw_activation),
            ("observation.blockAfter", raw_block),
            ("reflection.bufferActivation", raw_refl_activation),
            ("reflection.blockAfter", raw_refl_block),
        )
        if value is not None
    ]
    async_off = raw_buffer is False or (scope == "resource" and not explicit_async)
    if scope == "resource" and not async_off:
        raise ConfigError(
            explicit_async[0],
            "async buffering is not supported with scope 'resource' (it is disabled "
            "there automatically); remove this option, set observation: { bufferTokens: "
            "false }, or use scope: 'thread'",
        )
    if share and not async_off:
        raise ConfigError("shareTokenBudget", _SHARE_BUDGET_FIX)

    if async_off:
        for name, value in (("observation.blockAfter", raw_block), ("reflection.blockAfter", raw_refl_block)):
            if value is not None and raw_buffer is False:
                # the docs: blockAfter only applies with buffering; the reference drops it silently
                warnings.warn(
                    f"{name}: ignored, it only applies with async buffering, which observation.bufferTokens: "
                    f"false turns off",
                    UserWarning,
                    stacklevel=5,
                )
            elif value is not None:
                reason = (
                    "shareTokenBudget"
                    if share
                    else "scope 'resource'"
                    if raw_buffer is not False
                    else "observation.bufferTokens: false"
                )
                raise ConfigError(
                    name,
                    f"only applies with async buffering, which is off ({reason}); "
                    f"remove blockAfter or enable buffering",
                )
        return AsyncThresholds()
    buffer_tokens = resolve_buffer_tokens(DEFAULT_BUFFER_TOKENS if raw_buffer is None else raw_buffer, message_tokens)
    if buffer_tokens <= 0 or buffer_tokens >= threshold:
        raise ConfigError(
            "observation.bufferTokens",
            f"resolves to {buffer_tokens} tokens, which must be > 0 and less than "
            f"messageTokens ({threshold}); use a smaller ratio or count, or false "
            f"to disable buffering",
        )
    return AsyncThresholds(
        buffer_tokens=buffer_tokens,
        buffer_activation=DEFAULT_BUFFER_ACTIVATION if raw_activation is None else raw_activation,
        block_after=_resolve_block(raw_block, threshold, "observation.blockAfter", "messageTokens"),
        reflection_buffer_activation=(
            DEFAULT_REFLECTION_BUFFER_ACTIVATION if raw_refl_activation is None else raw_refl_activation
        ),
        reflection_block_after=_resolve_block(
            raw_refl_block, observation_tokens, "reflection.blockAfter", "observationTokens"
        ),
    )


def _observation_buffer_activation(value: Any, threshold: int) -> float:
    option = "observation.bufferActivation"
    value = number(value, option, "a ratio in (0, 1] or an absolute token count >= 1000")
    if value <= 0 or 1 < value < ABSOLUTE_ACTIVATION_FROM:
        raise ConfigError(
            option,
            f"must be a ratio in (0, 1] (share of messageTokens to activate) or "
            f"an absolute count >= 1000 (tokens to keep), got {value}",
        )
    if value >= ABSOLUTE_ACTIVATION_FROM and value >= threshold:
        raise ConfigError(
            option,
            f"as an absolute retention ({value}) it must be less than "
            f"messageTokens ({threshold}); keep fewer tokens or use a ratio",
        )
    return value


def _block_after_raw(value: Any, option: str, base: str) -> float:
    value = number(value, option, f"a multiplier of {base} in [1, 100) or an absolute count >= 100")
    if value < 1:
        raise ConfigError(
            option, f"must be >= 1 (a multiplier such as 1.2 of {base}, or an absolute token count >= 100), got {value}"
        )
    return value


def _resolve_block(raw: float | None, threshold: int, option: str, base: str) -> int:
    if raw is None:
        # the default 1.2x must always leave a band, even for toy thresholds
        return max(resolve_block_after(DEFAULT_BLOCK_AFTER, threshold), threshold + 1)
    resolved = resolve_block_after(raw, threshold)
    if resolved <= threshold:
        raise ConfigError(
            option,
            f"resolves to {resolved} tokens, which must exceed {base} "
            f"({threshold}); use a multiplier above 1 (e.g. 1.2) or an absolute "
            f"count above {threshold}",
        )
    return resolved


def rescale_block_after(block_after: int | None, old_threshold: int, new_threshold: int) -> int | None:
    """``blockAfter`` moved with its threshold, keeping the band's proportions (per-record overrides)."""
    if block_after is None or old_threshold == new_threshold:
        return block_after
    return max(js_round(block_after * new_threshold / old_threshold), new_threshold + 1)


def block_after_option(block_after: int | None, threshold: int) -> float | None:
    """A resolved ``blockAfter`` as the option that resolves to it again."""
    if block_after is None:
        return None
    # an absolute value below the absolute range would be read as a multiplier: write it as one
    return block_after if block_after >= BLOCK_AFTER_ABSOLUTE_FROM else block_after / threshold

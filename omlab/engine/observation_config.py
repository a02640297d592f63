"""The ``observation`` section: :class:`ObservationConfig`, its defaults and value checks, and its
parts of a config's provenance snapshot and of the option object that rebuilds it."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from omlab.engine.buffering_config import DEFAULT_BUFFER_ACTIVATION, AsyncThresholds, block_after_option
from omlab.engine.config_snapshot import describe_extractor, json_safe
from omlab.engine.errors import ConfigError
from omlab.engine.model_options import (
    DEFAULT_MODEL,
    OBSERVER_MODEL_SETTINGS,
    OBSERVER_PROVIDER_OPTIONS,
    OBSERVER_TEMPERATURE,
    ModelSettings,
    SelectedModel,
    describe_model,
    model_settings,
    provider_options,
    settings_dict,
    settings_options,
)
from omlab.engine.option_checks import (
    check_bool,
    choice,
    extractors,
    non_negative_int,
    normalize,
    option_keys,
    optional_str,
    positive_int,
)
from omlab.engine.thresholds import TokenRange, max_threshold
from omlab.engine.ttl import ActivationTTL, idle_option

DEFAULT_MESSAGE_TOKENS = 30_000
DEFAULT_MAX_TOKENS_PER_BATCH = 10_000
DEFAULT_PREVIOUS_OBSERVER_TOKENS = 2000

FailurePolicy = Literal["abort", "continue"]
ObserveAttachments = bool | Literal["auto"] | tuple[str, ...]

OBSERVATION_KEYS = option_keys(
    "model",
    "instruction",
    "threadTitle",
    "extract",
    "manageWorkingMemory",
    "observeAttachments",
    "messageTokens",
    "maxTokensPerBatch",
    "modelSettings",
    "providerOptions",
    "bufferTokens",
    "bufferOnIdle",
    "bufferActivation",
    "activateAfterIdle",
    "activateOnProviderChange",
    "blockAfter",
    "previousObserverTokens",
    "failurePolicy",
    "maxRetries",
)
_RANGE_KEYS = option_keys("min", "max")
_MIME_PATTERN = re.compile(r"^(\*|[a-z0-9][a-z0-9!#$&^_.+-]*/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*))$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ObservationConfig:
    """The resolved ``observation`` options. Async buffering is on iff ``buffer_tokens`` is set.

    ``message_tokens`` is a :class:`TokenRange` under ``shareTokenBudget`` (or when the user gave a
    range). ``buffer_tokens`` and ``block_after`` are absolute token counts; ``buffer_activation``
    is as given (a ratio in (0, 1] or an absolute retention >= 1000). ``activate_after_idle`` is
    milliseconds, ``"auto"`` or ``None`` (off). ``previous_observer_tokens`` ``None`` means the
    Observer sees all previous observations.
    """

    model: Any = DEFAULT_MODEL
    instruction: str | None = None
    thread_title: bool = False
    extract: tuple[Any, ...] = ()
    manage_working_memory: bool = False
    observe_attachments: ObserveAttachments = True
    message_tokens: int | TokenRange = DEFAULT_MESSAGE_TOKENS
    max_tokens_per_batch: int = DEFAULT_MAX_TOKENS_PER_BATCH
    model_settings: ModelSettings = OBSERVER_MODEL_SETTINGS
    provider_options: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(OBSERVER_PROVIDER_OPTIONS))
    buffer_tokens: int | None = 6_000
    buffer_on_idle: bool = False
    buffer_activation: float | None = DEFAULT_BUFFER_ACTIVATION
    activate_after_idle: ActivationTTL = None
    activate_on_provider_change: bool = False
    block_after: int | None = 36_000
    previous_observer_tokens: int | None = DEFAULT_PREVIOUS_OBSERVER_TOKENS
    failure_policy: FailurePolicy = "abort"
    max_retries: int | None = None

    @property
    def async_enabled(self) -> bool:
        """Whether background buffering of observations runs."""
        return self.buffer_tokens is not None

    @property
    def max_message_tokens(self) -> int:
        """The largest message threshold (the range's ``max`` under a shared budget)."""
        return max_threshold(self.message_tokens)


def build_observation(
    obs: dict[str, Any],
    selected: SelectedModel,
    message_tokens: int | TokenRange,
    buffering: AsyncThresholds,
    activate_after_idle: ActivationTTL,
    activate_on_provider_change: bool,
) -> ObservationConfig:
    """The section from its normalized options and the values resolved across sections."""
    return ObservationConfig(
        model=selected.model,
        instruction=optional_str(obs.get("instruction"), "observation.instruction"),
        thread_title=check_bool(obs.get("thread_title", False), "observation.threadTitle"),
        extract=extractors(obs.get("extract"), "observation.extract"),
        manage_working_memory=check_bool(obs.get("manage_working_memory", False), "observation.manageWorkingMemory"),
        observe_attachments=_observe_attachments(obs.get("observe_attachments", True)),
        message_tokens=message_tokens,
        max_tokens_per_batch=positive_int(
            obs.get("max_tokens_per_batch", DEFAULT_MAX_TOKENS_PER_BATCH), "observation.maxTokensPerBatch"
        ),
        model_settings=model_settings(
            obs.get("model_settings"), "observation.modelSettings", OBSERVER_TEMPERATURE, selected.is_default
        ),
        provider_options=provider_options(
            obs.get("provider_options"), "observation.providerOptions", OBSERVER_PROVIDER_OPTIONS
        ),
        buffer_tokens=buffering.buffer_tokens,
        buffer_on_idle=check_bool(obs.get("buffer_on_idle", False), "observation.bufferOnIdle"),
        buffer_activation=buffering.buffer_activation,
        activate_after_idle=activate_after_idle,
        activate_on_provider_change=activate_on_provider_change,
        block_after=buffering.block_after,
        previous_observer_tokens=_previous_observer_tokens(
            obs.get("previous_observer_tokens", DEFAULT_PREVIOUS_OBSERVER_TOKENS)
        ),
        failure_policy=choice(obs.get("failure_policy", "abort"), ("abort", "continue"), "observation.failurePolicy"),
        max_retries=(
            None if obs.get("max_retries") is None else non_negative_int(obs["max_retries"], "observation.maxRetries")
        ),
    )


def message_tokens_option(value: Any, option: str) -> int | TokenRange:
    """``messageTokens``: a positive count or a ``{min, max}`` range."""
    if isinstance(value, TokenRange):
        value = {"min": value.min, "max": value.max}
    if isinstance(value, Mapping):
        bounds = normalize(value, _RANGE_KEYS, f"{option}.")
        if set(bounds) != {"min", "max"}:
            raise ConfigError(option, "a range needs both min and max, e.g. {min: 30000, max: 70000}")
        low = positive_int(bounds["min"], f"{option}.min")
        high = positive_int(bounds["max"], f"{option}.max")
        if low > high:
            raise ConfigError(option, f"range min ({low}) must not exceed max ({high})")
        return TokenRange(low, high)
    return positive_int(value, option)


def _previous_observer_tokens(value: Any) -> int | None:
    if value is False:
        return None
    if value is True:
        raise ConfigError("observation.previousObserverTokens", "expected a token budget >= 0 or false, got true")
    return non_negative_int(value, "observation.previousObserverTokens")


def _observe_attachments(value: Any) -> ObserveAttachments:
    option = "observation.observeAttachments"
    if isinstance(value, bool) or value == "auto":
        return value
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ConfigError(option, f"expected true, false, 'auto' or a list of MIME patterns, got {value!r}")
    for pattern in value:
        if not isinstance(pattern, str) or not _MIME_PATTERN.match(pattern.strip()):
            raise ConfigError(
                option, f"{pattern!r} is not a MIME pattern; use e.g. 'application/pdf', 'image/*' or '*'"
            )
    return tuple(pattern.strip() for pattern in value)


def _attachments_value(obs: ObservationConfig) -> Any:
    return list(obs.observe_attachments) if isinstance(obs.observe_attachments, tuple) else obs.observe_attachments


def observation_snapshot(obs: ObservationConfig) -> dict[str, Any]:
    """The section in a config's provenance snapshot (:meth:`OMConfig.to_dict`)."""
    return {
        "model": describe_model(obs.model),
        "instruction": obs.instruction,
        "thread_title": obs.thread_title,
        "extract": [describe_extractor(e) for e in obs.extract],
        "manage_working_memory": obs.manage_working_memory,
        "observe_attachments": _attachments_value(obs),
        "message_tokens": (
            {"min": obs.message_tokens.min, "max": obs.message_tokens.max}
            if isinstance(obs.message_tokens, TokenRange)
            else obs.message_tokens
        ),
        "max_tokens_per_batch": obs.max_tokens_per_batch,
        "model_settings": settings_dict(obs.model_settings),
        "provider_options": json_safe(obs.provider_options),
        "buffer_tokens": obs.buffer_tokens,
        "buffer_on_idle": obs.buffer_on_idle,
        "buffer_activation": obs.buffer_activation,
        "activate_after_idle": obs.activate_after_idle,
        "activate_on_provider_change": obs.activate_on_provider_change,
        "block_after": obs.block_after,
        "previous_observer_tokens": obs.previous_observer_tokens,
        "failure_policy": obs.failure_policy,
        "max_retries": obs.max_retries,
    }


def observation_options(obs: ObservationConfig, share_token_budget: bool) -> dict[str, Any]:
    """The section as camelCase options that rebuild it (the model left to the caller)."""
    message_tokens: Any = obs.message_tokens
    if share_token_budget and isinstance(message_tokens, TokenRange):
        message_tokens = message_tokens.min  # shareTokenBudget rebuilds the range
    elif isinstance(message_tokens, TokenRange):
        message_tokens = {"min": message_tokens.min, "max": message_tokens.max}
    return {
        "instruction": obs.instruction,
        "threadTitle": obs.thread_title,
        "extract": list(obs.extract) or None,
        "manageWorkingMemory": obs.manage_working_memory,
        "observeAttachments": _attachments_value(obs),
        "messageTokens": message_tokens,
        "maxTokensPerBatch": obs.max_tokens_per_batch,
        "modelSettings": settings_options(obs.model_settings),
        "providerOptions": obs.provider_options,
        "bufferTokens": False if obs.buffer_tokens is None else obs.buffer_tokens,
        "bufferOnIdle": obs.buffer_on_idle,
        "bufferActivation": obs.buffer_activation,
        "activateAfterIdle": idle_option(obs.activate_after_idle),
        "activateOnProviderChange": obs.activate_on_provider_change,
        "blockAfter": block_after_option(obs.block_after, obs.max_message_tokens),
        "previousObserverTokens": False if obs.previous_observer_tokens is None else obs.previous_observer_tokens,
        "failurePolicy": obs.failure_policy,
        "maxRetries": obs.max_retries,
    }

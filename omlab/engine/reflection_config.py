"""The ``reflection`` section: :class:`ReflectionConfig`, its defaults, and its parts of a config's
provenance snapshot and of the option object that rebuilds it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from omlab.engine.buffering_config import DEFAULT_REFLECTION_BUFFER_ACTIVATION, AsyncThresholds, block_after_option
from omlab.engine.config_snapshot import describe_extractor, json_safe
from omlab.engine.model_options import (
    DEFAULT_MODEL,
    REFLECTOR_MODEL_SETTINGS,
    REFLECTOR_PROVIDER_OPTIONS,
    REFLECTOR_TEMPERATURE,
    ModelSettings,
    SelectedModel,
    describe_model,
    model_settings,
    provider_options,
    settings_dict,
    settings_options,
)
from omlab.engine.option_checks import check_bool, extractors, option_keys, optional_str
from omlab.engine.ttl import ActivationTTL, idle_option, parse_activate_after_idle

DEFAULT_OBSERVATION_TOKENS = 40_000

REFLECTION_KEYS = option_keys(
    "model",
    "instruction",
    "extract",
    "observationTokens",
    "modelSettings",
    "providerOptions",
    "bufferActivation",
    "activateAfterIdle",
    "activateOnProviderChange",
    "blockAfter",
)


@dataclass(frozen=True, slots=True)
class ReflectionConfig:
    """The resolved ``reflection`` options. Async reflection is on iff ``buffer_activation`` is set.

    ``block_after`` is absolute. ``activate_after_idle``/``activate_on_provider_change`` are this
    section's own values: reflection never inherits the top-level ones.
    """

    model: Any = DEFAULT_MODEL
    instruction: str | None = None
    extract: tuple[Any, ...] = ()
    observation_tokens: int = DEFAULT_OBSERVATION_TOKENS
    model_settings: ModelSettings = REFLECTOR_MODEL_SETTINGS
    provider_options: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(REFLECTOR_PROVIDER_OPTIONS))
    buffer_activation: float | None = DEFAULT_REFLECTION_BUFFER_ACTIVATION
    activate_after_idle: ActivationTTL = None
    activate_on_provider_change: bool = False
    block_after: int | None = 48_000

    @property
    def async_enabled(self) -> bool:
        """Whether background reflection runs."""
        return self.buffer_activation is not None


def build_reflection(
    refl: dict[str, Any], selected: SelectedModel, observation_tokens: int, buffering: AsyncThresholds
) -> ReflectionConfig:
    """The section from its normalized options and the values resolved across sections."""
    return ReflectionConfig(
        model=selected.model,
        instruction=optional_str(refl.get("instruction"), "reflection.instruction"),
        extract=extractors(refl.get("extract"), "reflection.extract"),
        observation_tokens=observation_tokens,
        model_settings=model_settings(
            refl.get("model_settings"), "reflection.modelSettings", REFLECTOR_TEMPERATURE, selected.is_default
        ),
        provider_options=provider_options(
            refl.get("provider_options"), "reflection.providerOptions", REFLECTOR_PROVIDER_OPTIONS
        ),
        buffer_activation=buffering.reflection_buffer_activation,
        activate_after_idle=parse_activate_after_idle(refl.get("activate_after_idle"), "reflection.activateAfterIdle"),
        activate_on_provider_change=check_bool(
            refl.get("activate_on_provider_change", False), "reflection.activateOnProviderChange"
        ),
        block_after=buffering.reflection_block_after,
    )


def reflection_snapshot(refl: ReflectionConfig) -> dict[str, Any]:
    """The section in a config's provenance snapshot (:meth:`OMConfig.to_dict`)."""
    return {
        "model": describe_model(refl.model),
        "instruction": refl.instruction,
        "extract": [describe_extractor(e) for e in refl.extract],
        "observation_tokens": refl.observation_tokens,
        "model_settings": settings_dict(refl.model_settings),
        "provider_options": json_safe(refl.provider_options),
        "buffer_activation": refl.buffer_activation,
        "activate_after_idle": refl.activate_after_idle,
        "activate_on_provider_change": refl.activate_on_provider_change,
        "block_after": refl.block_after,
    }


def reflection_options(refl: ReflectionConfig) -> dict[str, Any]:
    """The section as camelCase options that rebuild it (the model left to the caller)."""
    return {
        "instruction": refl.instruction,
        "extract": list(refl.extract) or None,
        "observationTokens": refl.observation_tokens,
        "modelSettings": settings_options(refl.model_settings),
        "providerOptions": refl.provider_options,
        "bufferActivation": refl.buffer_activation,
        "activateAfterIdle": idle_option(refl.activate_after_idle),
        "activateOnProviderChange": refl.activate_on_provider_change,
        "blockAfter": block_after_option(refl.block_after, refl.observation_tokens),
    }

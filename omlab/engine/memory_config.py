"""``SerializedMemoryConfig`` ↔ :class:`~omlab.engine.config.OMConfig`: the Memory-level fields.

A ``SerializedMemoryConfig`` (the JSON a stored agent keeps) carries, beside
``observationalMemory``, Memory options OM does not own. ``readOnly`` has an OM meaning and is
applied (the engine writes nothing); ``lastMessages``, ``semanticRecall`` and ``generateTitle``
belong to the Memory class, so building an engine from such a document warns about each by name
instead of dropping it silently (they stay in :attr:`OMConfig.extra`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from omlab.engine.thresholds import BLOCK_AFTER_ABSOLUTE_FROM, TokenRange

if TYPE_CHECKING:
    from omlab.engine.config import ModelSettings, OMConfig

#: Memory options that OM cannot apply, and why
UNAPPLIED_MEMORY_OPTIONS = {
    "lastMessages": "the raw window is whatever OM has not observed yet; recent-message history is the Memory class's",
    "semanticRecall": "semantic recall is the Memory class's (OM's own search is retrieval: {vector: true})",
    "generateTitle": "title generation is the Memory class's (OM's is observation.threadTitle)",
}


def warn_unapplied_options(options: Mapping[str, Any] | None) -> None:
    """Warn, by name, about each Memory option of ``options`` that OM does not apply."""
    for name, why in UNAPPLIED_MEMORY_OPTIONS.items():
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
        if options and (options.get(name) is not None or options.get(snake) is not None):
            warnings.warn(f"options.{name}: kept in config.extra but not applied: {why}", UserWarning, stacklevel=3)


def read_only(extra: Mapping[str, Any]) -> bool:
    """``options.readOnly`` of a SerializedMemoryConfig."""
    options = extra.get("options") or {}
    return bool(options.get("readOnly", options.get("read_only", False)))


def _settings(settings: ModelSettings) -> dict[str, Any]:
    out: dict[str, Any] = {"temperature": settings.temperature}
    if settings.max_output_tokens is not None:
        out["maxOutputTokens"] = settings.max_output_tokens
    return out


def _block(block_after: int | None, threshold: int) -> float | None:
    if block_after is None:
        return None
    # an absolute value below the absolute range would be read as a multiplier: write it as one
    return block_after if block_after >= BLOCK_AFTER_ABSOLUTE_FROM else block_after / threshold


def _idle(value: Any) -> Any:
    return False if value is None else (dict(value) if isinstance(value, Mapping) else value)


def to_options(config: OMConfig) -> dict[str, Any]:
    """The resolved config as a camelCase ``observationalMemory`` object that rebuilds it.

    Runtime-only options (hooks, storage, the debug callback) are left out. Models that are not
    strings (a ``ModelByInputTokens``) and extractors are kept as objects, so the result is JSON
    only when they are absent.
    """
    obs, refl = config.observation, config.reflection
    message_tokens: Any = obs.message_tokens
    if config.share_token_budget and isinstance(message_tokens, TokenRange):
        message_tokens = message_tokens.min  # shareTokenBudget rebuilds the range
    elif isinstance(message_tokens, TokenRange):
        message_tokens = {"min": message_tokens.min, "max": message_tokens.max}
    observation: dict[str, Any] = {
        "instruction": obs.instruction,
        "threadTitle": obs.thread_title,
        "extract": list(obs.extract) or None,
        "manageWorkingMemory": obs.manage_working_memory,
        "observeAttachments": list(obs.observe_attachments)
        if isinstance(obs.observe_attachments, tuple)
        else obs.observe_attachments,
        "messageTokens": message_tokens,
        "maxTokensPerBatch": obs.max_tokens_per_batch,
        "modelSettings": _settings(obs.model_settings),
        "providerOptions": obs.provider_options,
        "bufferTokens": False if obs.buffer_tokens is None else obs.buffer_tokens,
        "bufferOnIdle": obs.buffer_on_idle,
        "bufferActivation": obs.buffer_activation,
        "activateAfterIdle": _idle(obs.activate_after_idle),
        "activateOnProviderChange": obs.activate_on_provider_change,
        "blockAfter": _block(obs.block_after, obs.max_message_tokens),
        "previousObserverTokens": False if obs.previous_observer_tokens is None else obs.previous_observer_tokens,
        "failurePolicy": obs.failure_policy,
        "maxRetries": obs.max_retries,
    }
    reflection: dict[str, Any] = {
        "instruction": refl.instruction,
        "extract": list(refl.extract) or None,
        "observationTokens": refl.observation_tokens,
        "modelSettings": _settings(refl.model_settings),
        "providerOptions": refl.provider_options,
        "bufferActivation": refl.buffer_activation,
        "activateAfterIdle": _idle(refl.activate_after_idle),
        "activateOnProviderChange": refl.activate_on_provider_change,
        "blockAfter": _block(refl.block_after, refl.observation_tokens),
    }
    top: dict[str, Any] = {
        "enabled": config.enabled,
        "scope": config.scope,
        "activateAfterIdle": _idle(config.activate_after_idle),
        "activateOnProviderChange": config.activate_on_provider_change,
        "shareTokenBudget": config.share_token_budget,
        "temporalMarkers": config.temporal_markers,
        "retrieval": False
        if config.retrieval is None
        else {
            "vector": config.retrieval.vector,
            "scope": config.retrieval.scope,
            "instructions": config.retrieval.instructions,
        },
        "obscureThreadIds": config.obscure_thread_ids,
    }
    if config.model is not None:
        top["model"] = config.model
    else:
        observation["model"], reflection["model"] = obs.model, refl.model
    top["observation"] = {k: v for k, v in observation.items() if v is not None}
    top["reflection"] = {k: v for k, v in reflection.items() if v is not None}
    return top


def to_memory_config(config: OMConfig) -> dict[str, Any]:
    """A ``SerializedMemoryConfig`` that :meth:`OMConfig.from_memory_config` turns back into an
    equal config (same :meth:`~OMConfig.config_hash`), with the Memory fields of ``extra``."""
    return {**config.extra, "observationalMemory": to_options(config)}

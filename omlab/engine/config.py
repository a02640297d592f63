"""The engine's configuration: every ``observationalMemory`` option, validated and fully resolved.

:class:`OMConfig` is immutable and holds *resolved* values: absolute ``buffer_tokens`` and
``block_after`` token counts, the observer and reflector models after the fallback rules, model
settings with their defaults applied. The engine never re-derives a default.

Build one with :meth:`OMConfig.from_options` (the seed's option object, camelCase or snake_case
keys, pasted as-is), :meth:`OMConfig.from_memory_config` (a ``SerializedMemoryConfig``) or
:meth:`OMConfig.from_json`. Every problem raises :class:`ConfigError`, whose message starts with
the camelCase option path (``observation.bufferTokens: ...``) and says how to fix it.

``None`` always means "not given" (the default applies), as ``undefined`` does in the reference;
use ``False`` to switch something off (``bufferTokens``, ``previousObserverTokens``,
``activateAfterIdle``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from omlab.engine.buffering_config import rescale_block_after
from omlab.engine.config_options import Compat, config_fields, merge_kwargs, unwrap
from omlab.engine.config_snapshot import describe_callable, json_safe, type_name
from omlab.engine.errors import ConfigError
from omlab.engine.hooks import HOOK_NAMES, OMHooks
from omlab.engine.memory_config import (
    is_memory_config,
    read_json_source,
    read_only,
    split_memory_config,
    warn_unapplied_options,
)
from omlab.engine.model_options import describe_model
from omlab.engine.observation_config import (
    ObservationConfig,
    message_tokens_option,
    observation_options,
    observation_snapshot,
)
from omlab.engine.option_checks import positive_int
from omlab.engine.reflection_config import ReflectionConfig, reflection_options, reflection_snapshot
from omlab.engine.retrieval_config import RetrievalConfig, Scope, retrieval_dict
from omlab.engine.thresholds import ABSOLUTE_ACTIVATION_FROM, TokenRange, max_threshold
from omlab.engine.ttl import ActivationTTL, idle_option


@dataclass(frozen=True, slots=True)
class OMConfig:
    """One Observational Memory configuration, validated and resolved. ``OMConfig()`` = defaults.

    ``model`` is the raw top-level option (``None`` when not given); the models in force are
    ``observation.model`` and ``reflection.model``. ``storage``, ``on_debug_event`` and
    ``obscure_thread_ids`` are the standalone-only options. ``extra`` keeps the non-OM fields of a
    ``SerializedMemoryConfig`` (``vector``, ``embedder``, ``embedderOptions``, ``options``).
    """

    enabled: bool = True
    model: Any = None
    scope: Scope = "thread"
    activate_after_idle: ActivationTTL = None
    activate_on_provider_change: bool = False
    share_token_budget: bool = False
    temporal_markers: bool = False
    retrieval: RetrievalConfig | None = None
    hooks: OMHooks | None = None
    observation: ObservationConfig = field(default_factory=ObservationConfig)
    reflection: ReflectionConfig = field(default_factory=ReflectionConfig)
    storage: Any = None
    on_debug_event: Callable[..., Any] | None = None
    obscure_thread_ids: bool = False
    compat: Compat = "omlab"
    extra: dict[str, Any] = field(default_factory=dict)

    # --- loaders ---

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | bool | None = None, /, **kwargs: Any) -> OMConfig:
        """Build from the seed's ``observationalMemory`` value.

        ``options`` is ``True``/``None`` (defaults), ``False`` (disabled), an option mapping with
        camelCase or snake_case keys at any level, or ``{"observationalMemory": <any of those>}``.
        Keyword arguments are top-level options and win over ``options``.
        """
        return cls(**config_fields(merge_kwargs(unwrap(options), kwargs), via_memory=False))

    @classmethod
    def from_memory_config(cls, serialized: Mapping[str, Any]) -> OMConfig:
        """Build from a ``SerializedMemoryConfig``: ``{"observationalMemory": true | {...},
        "options": {...}, "vector": ..., "embedder": ..., "embedderOptions": ...}``.

        Without ``observationalMemory`` OM is disabled (as in ``Memory``). It may also sit under
        ``options``. The other fields are kept in :attr:`extra`. As with ``new Memory(...)``,
        resource scope turns ``obscureThreadIds`` on unless it is given.
        """
        om, extra = split_memory_config(serialized)
        warn_unapplied_options(extra)
        config = cls(**config_fields(unwrap(om if om is not None else False), via_memory=True))
        if config.retrieval is not None and config.retrieval.vector and extra.get("vector") is False:
            raise ConfigError(
                "retrieval.vector",
                "semantic recall needs the memory's vector store, "
                "but the memory config sets vector: false; enable "
                "a vector store or set retrieval.vector to false",
            )
        return replace(config, extra=extra)

    @classmethod
    def from_json(cls, text_or_path: str | os.PathLike[str]) -> OMConfig:
        """Build from JSON text or a JSON file.

        The document is an ``observationalMemory`` value (``true``, ``false`` or an option object,
        optionally wrapped as ``{"observationalMemory": ...}``) or a ``SerializedMemoryConfig``
        (recognised by ``options``/``vector``/``embedder``/``embedderOptions`` at the top level).
        Text starting with ``{`` (or equal to ``true``/``false``/``null``) is parsed as JSON;
        anything else is a file path.
        """
        source, text = read_json_source(text_or_path)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ConfigError(source, f"invalid JSON: {err}") from None
        if is_memory_config(data):
            return cls.from_memory_config(data)
        if data is not None and not isinstance(data, bool | Mapping):
            raise ConfigError(source, f"expected a JSON object or true/false, got {type(data).__name__}")
        return cls.from_options(data)

    def to_options(self) -> dict[str, Any]:
        """This config as a camelCase ``observationalMemory`` object that rebuilds it (runtime
        options such as hooks and storage left out)."""
        obs, refl = self.observation, self.reflection
        observation = observation_options(obs, self.share_token_budget)
        reflection = reflection_options(refl)
        top: dict[str, Any] = {
            "enabled": self.enabled,
            "scope": self.scope,
            "activateAfterIdle": idle_option(self.activate_after_idle),
            "activateOnProviderChange": self.activate_on_provider_change,
            "shareTokenBudget": self.share_token_budget,
            "temporalMarkers": self.temporal_markers,
            "retrieval": False if self.retrieval is None else retrieval_dict(self.retrieval),
            "obscureThreadIds": self.obscure_thread_ids,
        }
        if self.model is not None:
            top["model"] = self.model
        else:
            observation["model"], reflection["model"] = obs.model, refl.model
        top["observation"] = {k: v for k, v in observation.items() if v is not None}
        top["reflection"] = {k: v for k, v in reflection.items() if v is not None}
        return top

    def to_memory_config(self) -> dict[str, Any]:
        """This config as a ``SerializedMemoryConfig``; :meth:`from_memory_config` round-trips it."""
        return {**self.extra, "observationalMemory": self.to_options()}

    # --- derived values ---

    @property
    def read_only(self) -> bool:
        """``options.readOnly`` of the SerializedMemoryConfig it came from: the engine writes nothing."""
        return read_only(self.extra)

    @property
    def async_buffering(self) -> bool:
        """Whether background buffering (observation and reflection) is on."""
        return self.observation.async_enabled

    def with_overrides(
        self, message_tokens: int | TokenRange | Mapping[str, int] | None = None, observation_tokens: int | None = None
    ) -> OMConfig:
        """This config with per-record threshold overrides applied (om-reference §2.11).

        A ``message_tokens`` override at or below ``buffer_tokens``, or at or below an absolute
        ``buffer_activation``, is ignored (the instance value stays). ``buffer_tokens`` and
        ``buffer_activation`` keep their absolute values, as in the reference. omlab additions:
        ``block_after`` is rescaled by the same factor as its threshold, so the band between the
        threshold and ``blockAfter`` keeps its proportions; under ``shareTokenBudget`` the message
        threshold stays a range (``override .. override + observationTokens``).
        """
        obs, refl = self.observation, self.reflection
        if observation_tokens is not None:
            tokens = positive_int(observation_tokens, "reflection.observationTokens")
            refl = replace(
                refl,
                observation_tokens=tokens,
                block_after=rescale_block_after(refl.block_after, refl.observation_tokens, tokens),
            )
            if self.share_token_budget and isinstance(obs.message_tokens, TokenRange):
                base = obs.message_tokens.min
                obs = replace(obs, message_tokens=TokenRange(base, base + tokens))
        if message_tokens is not None:
            value = message_tokens_option(message_tokens, "observation.messageTokens")
            new_max = max_threshold(value)
            below_buffer = obs.buffer_tokens is not None and new_max <= obs.buffer_tokens
            below_retention = (
                obs.buffer_activation is not None
                and obs.buffer_activation >= ABSOLUTE_ACTIVATION_FROM
                and new_max <= obs.buffer_activation
            )
            if not (below_buffer or below_retention):
                if self.share_token_budget and isinstance(value, int):
                    value = TokenRange(value, value + refl.observation_tokens)
                obs = replace(
                    obs,
                    message_tokens=value,
                    block_after=rescale_block_after(obs.block_after, obs.max_message_tokens, max_threshold(value)),
                )
        return replace(self, observation=obs, reflection=refl)

    # --- provenance ---

    def to_dict(self, *, include_runtime: bool = True) -> dict[str, Any]:
        """A JSON-safe snapshot of the resolved config, for provenance and hashing.

        Models are described with :func:`omlab.llm.spec.describe_model`, callables by qualified
        name, storage by type; provider options and ``extra`` have secret-looking keys redacted.
        ``include_runtime=False`` leaves out what cannot change the memory's content (hooks, the
        debug callback, storage, ``extra``).
        """
        snapshot: dict[str, Any] = {
            "enabled": self.enabled,
            "model": None if self.model is None else describe_model(self.model),
            "scope": self.scope,
            "activate_after_idle": self.activate_after_idle,
            "activate_on_provider_change": self.activate_on_provider_change,
            "share_token_budget": self.share_token_budget,
            "temporal_markers": self.temporal_markers,
            "retrieval": None if self.retrieval is None else retrieval_dict(self.retrieval),
            "obscure_thread_ids": self.obscure_thread_ids,
            "compat": self.compat,
            "observation": observation_snapshot(self.observation),
            "reflection": reflection_snapshot(self.reflection),
        }
        if include_runtime:
            snapshot["hooks"] = (
                None
                if self.hooks is None
                else {name: describe_callable(getattr(self.hooks, name)) for name in HOOK_NAMES}
            )
            snapshot["on_debug_event"] = describe_callable(self.on_debug_event)
            snapshot["storage"] = None if self.storage is None else type_name(self.storage)
            snapshot["extra"] = json_safe(self.extra)
        return snapshot

    def config_hash(self) -> str:
        """A stable SHA-256 (64 hex chars) of the behaviour-defining snapshot.

        Computed over ``to_dict(include_runtime=False)`` serialised with sorted keys, so equal
        configs hash equally across processes, and hooks or storage choice do not change it.
        """
        text = json.dumps(
            self.to_dict(include_runtime=False), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = ["OMConfig"]

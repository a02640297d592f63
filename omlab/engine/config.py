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

import copy
import difflib
import hashlib
import json
import math
import os
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from omlab.engine.memory_config import read_only, to_memory_config, to_options, warn_unapplied_options
from omlab.engine.thresholds import (
    ABSOLUTE_ACTIVATION_FROM,
    TokenRange,
    js_round,
    max_threshold,
    resolve_block_after,
    resolve_buffer_tokens,
)
from omlab.engine.ttl import ActivationTTL, parse_activate_after_idle

DEFAULT_MODEL = "google/gemini-2.5-flash"
DEFAULT_MESSAGE_TOKENS = 30_000
DEFAULT_OBSERVATION_TOKENS = 40_000
DEFAULT_MAX_TOKENS_PER_BATCH = 10_000
DEFAULT_BUFFER_TOKENS = 0.2
DEFAULT_BUFFER_ACTIVATION = 0.8
DEFAULT_BLOCK_AFTER = 1.2
DEFAULT_REFLECTION_BUFFER_ACTIVATION = 0.5
DEFAULT_PREVIOUS_OBSERVER_TOKENS = 2000
DEFAULT_MAX_OUTPUT_TOKENS = 100_000
OBSERVER_TEMPERATURE = 0.3
REFLECTOR_TEMPERATURE = 0.0
OBSERVER_PROVIDER_OPTIONS: dict[str, Any] = {"google": {"thinkingConfig": {"thinkingBudget": 215}}}
REFLECTOR_PROVIDER_OPTIONS: dict[str, Any] = {"google": {"thinkingConfig": {"thinkingBudget": 1024}}}

Scope = Literal["thread", "resource"]
Compat = Literal["omlab", "reference"]
COMPAT_MODES: tuple[str, ...] = ("omlab", "reference")
"""``compat``: ``omlab`` (the default) keeps omlab's corrected semantics; ``reference`` reproduces
``@mastra/memory`` 1.31.0 where omlab deliberately differs (docs/divergences.md, "Reference mode")."""
FailurePolicy = Literal["abort", "continue"]
ObserveAttachments = bool | Literal["auto"] | tuple[str, ...]


class ConfigError(ValueError):
    """An invalid option. ``option`` is its camelCase path; the message starts with it."""

    def __init__(self, option: str, message: str) -> None:
        self.option = option
        self.detail = message
        super().__init__(f"{option}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:  # keeps the error picklable across processes
        return (type(self), (self.option, self.detail))


# --- the resolved configuration ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Generation settings of the Observer or Reflector call (``None`` = provider default)."""

    temperature: float | None = None
    max_output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """``retrieval``: durable pointers from observation groups to raw messages, plus a recall tool."""

    vector: bool = False
    scope: Scope = "resource"
    instructions: str | None = None


@dataclass(frozen=True, slots=True)
class OMHooks:
    """``hooks``: lifecycle callbacks around every observation and reflection cycle."""

    on_observation_start: Callable[..., Any] | None = None
    on_observation_end: Callable[..., Any] | None = None
    on_reflection_start: Callable[..., Any] | None = None
    on_reflection_end: Callable[..., Any] | None = None


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
    model_settings: ModelSettings = ModelSettings(OBSERVER_TEMPERATURE, DEFAULT_MAX_OUTPUT_TOKENS)
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
    model_settings: ModelSettings = ModelSettings(REFLECTOR_TEMPERATURE, DEFAULT_MAX_OUTPUT_TOKENS)
    provider_options: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(REFLECTOR_PROVIDER_OPTIONS))
    buffer_activation: float | None = DEFAULT_REFLECTION_BUFFER_ACTIVATION
    activate_after_idle: ActivationTTL = None
    activate_on_provider_change: bool = False
    block_after: int | None = 48_000

    @property
    def async_enabled(self) -> bool:
        """Whether background reflection runs."""
        return self.buffer_activation is not None


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
        return _build(_merge_kwargs(_unwrap(options), kwargs), via_memory=False)

    @classmethod
    def from_memory_config(cls, serialized: Mapping[str, Any]) -> OMConfig:
        """Build from a ``SerializedMemoryConfig``: ``{"observationalMemory": true | {...},
        "options": {...}, "vector": ..., "embedder": ..., "embedderOptions": ...}``.

        Without ``observationalMemory`` OM is disabled (as in ``Memory``). It may also sit under
        ``options``. The other fields are kept in :attr:`extra`. As with ``new Memory(...)``,
        resource scope turns ``obscureThreadIds`` on unless it is given.
        """
        if not isinstance(serialized, Mapping):
            raise ConfigError("SerializedMemoryConfig", f"expected a mapping, got {type(serialized).__name__}")
        given = _normalize(serialized, _MEMORY_KEYS, "")
        om = given.pop("observational_memory", None)
        options = given.get("options")
        if options is not None:
            if not isinstance(options, Mapping):
                raise ConfigError("options", f"expected a mapping, got {type(options).__name__}")
            nested_key = next((k for k in ("observationalMemory", "observational_memory") if k in options), None)
            if nested_key is not None:
                if om is not None:
                    raise ConfigError("observationalMemory", "given both at the top level and under options; keep one")
                om = options[nested_key]
                given["options"] = {k: v for k, v in options.items() if k != nested_key}
        extra = {_MEMORY_KEYS[k]: copy.deepcopy(v) for k, v in given.items()}
        warn_unapplied_options(extra.get("options"))
        config = _build(_unwrap(om if om is not None else False), via_memory=True)
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
        source, text = _read_json_source(text_or_path)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ConfigError(source, f"invalid JSON: {err}") from None
        if isinstance(data, Mapping) and any(k in data for k in _MEMORY_ONLY_KEYS):
            return cls.from_memory_config(data)
        if data is not None and not isinstance(data, bool | Mapping):
            raise ConfigError(source, f"expected a JSON object or true/false, got {type(data).__name__}")
        return cls.from_options(data)

    def to_options(self) -> dict[str, Any]:
        """This config as a camelCase ``observationalMemory`` object that rebuilds it (runtime
        options such as hooks and storage left out)."""
        return to_options(self)

    def to_memory_config(self) -> dict[str, Any]:
        """This config as a ``SerializedMemoryConfig``; :meth:`from_memory_config` round-trips it."""
        return to_memory_config(self)

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
            tokens = _positive_int(observation_tokens, "reflection.observationTokens")
            refl = replace(
                refl, observation_tokens=tokens, block_after=_rescale(refl.block_after, refl.observation_tokens, tokens)
            )
            if self.share_token_budget and isinstance(obs.message_tokens, TokenRange):
                base = obs.message_tokens.min
                obs = replace(obs, message_tokens=TokenRange(base, base + tokens))
        if message_tokens is not None:
            value = _message_tokens(message_tokens, "observation.messageTokens")
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
                    block_after=_rescale(obs.block_after, obs.max_message_tokens, max_threshold(value)),
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
        obs, refl = self.observation, self.reflection
        snapshot: dict[str, Any] = {
            "enabled": self.enabled,
            "model": None if self.model is None else _describe_model(self.model),
            "scope": self.scope,
            "activate_after_idle": self.activate_after_idle,
            "activate_on_provider_change": self.activate_on_provider_change,
            "share_token_budget": self.share_token_budget,
            "temporal_markers": self.temporal_markers,
            "retrieval": None
            if self.retrieval is None
            else {
                "vector": self.retrieval.vector,
                "scope": self.retrieval.scope,
                "instructions": self.retrieval.instructions,
            },
            "obscure_thread_ids": self.obscure_thread_ids,
            "compat": self.compat,
            "observation": {
                "model": _describe_model(obs.model),
                "instruction": obs.instruction,
                "thread_title": obs.thread_title,
                "extract": [_describe_extractor(e) for e in obs.extract],
                "manage_working_memory": obs.manage_working_memory,
                "observe_attachments": (
                    list(obs.observe_attachments)
                    if isinstance(obs.observe_attachments, tuple)
                    else obs.observe_attachments
                ),
                "message_tokens": _threshold_dict(obs.message_tokens),
                "max_tokens_per_batch": obs.max_tokens_per_batch,
                "model_settings": _settings_dict(obs.model_settings),
                "provider_options": _json_safe(obs.provider_options),
                "buffer_tokens": obs.buffer_tokens,
                "buffer_on_idle": obs.buffer_on_idle,
                "buffer_activation": obs.buffer_activation,
                "activate_after_idle": obs.activate_after_idle,
                "activate_on_provider_change": obs.activate_on_provider_change,
                "block_after": obs.block_after,
                "previous_observer_tokens": obs.previous_observer_tokens,
                "failure_policy": obs.failure_policy,
                "max_retries": obs.max_retries,
            },
            "reflection": {
                "model": _describe_model(refl.model),
                "instruction": refl.instruction,
                "extract": [_describe_extractor(e) for e in refl.extract],
                "observation_tokens": refl.observation_tokens,
                "model_settings": _settings_dict(refl.model_settings),
                "provider_options": _json_safe(refl.provider_options),
                "buffer_activation": refl.buffer_activation,
                "activate_after_idle": refl.activate_after_idle,
                "activate_on_provider_change": refl.activate_on_provider_change,
                "block_after": refl.block_after,
            },
        }
        if include_runtime:
            snapshot["hooks"] = (
                None
                if self.hooks is None
                else {name: _describe_callable(getattr(self.hooks, name)) for name in _HOOK_FIELDS}
            )
            snapshot["on_debug_event"] = _describe_callable(self.on_debug_event)
            snapshot["storage"] = None if self.storage is None else _type_name(self.storage)
            snapshot["extra"] = _json_safe(self.extra)
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


# --- option names -------------------------------------------------------------------------------


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _keys(*camel: str) -> dict[str, str]:
    """snake_case → camelCase for one level of options."""
    return {_snake(name): name for name in camel}


_TOP_KEYS = _keys(
    "enabled",
    "model",
    "scope",
    "activateAfterIdle",
    "activateOnProviderChange",
    "shareTokenBudget",
    "temporalMarkers",
    "retrieval",
    "hooks",
    "observation",
    "reflection",
    "storage",
    "onDebugEvent",
    "obscureThreadIds",
    "compat",
)
_OBSERVATION_KEYS = _keys(
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
_REFLECTION_KEYS = _keys(
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
_MODEL_SETTINGS_KEYS = _keys("temperature", "maxOutputTokens")
_RETRIEVAL_KEYS = _keys("vector", "scope", "instructions")
_HOOK_KEYS = _keys("onObservationStart", "onObservationEnd", "onReflectionStart", "onReflectionEnd")
_HOOK_FIELDS = tuple(_HOOK_KEYS)
_RANGE_KEYS = _keys("min", "max")
_MEMORY_KEYS = _keys("vector", "embedder", "embedderOptions", "options", "observationalMemory")
_MEMORY_ONLY_KEYS = ("options", "vector", "embedder", "embedderOptions", "embedder_options")


def _normalize(raw: Mapping[str, Any], keys: Mapping[str, str], prefix: str) -> dict[str, Any]:
    """Map camelCase/snake_case keys to snake_case; drop ``None`` values (= not given).

    Unknown names raise a ConfigError listing the valid ones (and the closest match).
    """
    camel_to_snake = {camel: snake for snake, camel in keys.items()}
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in raw.items():
        snake = key if key in keys else camel_to_snake.get(key) if isinstance(key, str) else None
        if snake is None:
            valid = ", ".join(keys.values())
            close = difflib.get_close_matches(str(key), [*keys.values(), *keys], n=1, cutoff=0.75)
            hint = f"did you mean {keys.get(close[0], close[0])!r}? " if close else ""
            raise ConfigError(f"{prefix}{key}", f"unknown option; {hint}valid options here: {valid}")
        if snake in spelled:
            raise ConfigError(
                f"{prefix}{keys[snake]}", f"given twice (as {spelled[snake]!r} and {key!r}); keep one spelling"
            )
        spelled[snake] = key
        if value is not None:
            out[snake] = value
    return out


def _section(given: dict[str, Any], name: str, keys: Mapping[str, str], prefix: str) -> dict[str, Any]:
    raw = given.get(name)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(prefix.rstrip("."), f"expected an object of options, got {type(raw).__name__}")
    return _normalize(raw, keys, prefix)


def _unwrap(options: Any) -> Mapping[str, Any] | bool:
    """Accept ``True``/``None``/``False``/a mapping, or ``{"observationalMemory": <one of those>}``."""
    if options is None or options is True:
        return {}
    if options is False:
        return False
    if not isinstance(options, Mapping):
        raise ConfigError(
            "observationalMemory", f"expected true, false or an object of options, got {type(options).__name__}"
        )
    wrapper = [k for k in ("observationalMemory", "observational_memory") if k in options]
    if wrapper:
        if len(options) > 1:
            others = sorted(str(k) for k in options if k not in wrapper)
            raise ConfigError(
                "observationalMemory",
                f"found beside {others}; for a SerializedMemoryConfig use "
                f"OMConfig.from_memory_config, otherwise pass the option object alone",
            )
        return _unwrap(options[wrapper[0]])
    return options


def _merge_kwargs(options: Mapping[str, Any] | bool, kwargs: Mapping[str, Any]) -> Mapping[str, Any] | bool:
    if not kwargs:
        return options
    base = {"enabled": False} if options is False else dict(options)
    for key, value in kwargs.items():
        # a keyword replaces the same option however the mapping spelled it
        twin = _TOP_KEYS.get(key) if key in _TOP_KEYS else _snake(key)
        base.pop(twin, None)
        base[key] = value
    return base


# --- building ---------------------------------------------------------------------------------


def _build(options: Mapping[str, Any] | bool, *, via_memory: bool) -> OMConfig:
    if options is False:
        return OMConfig(enabled=False)
    top = _normalize(options, _TOP_KEYS, "")
    obs = _section(top, "observation", _OBSERVATION_KEYS, "observation.")
    refl = _section(top, "reflection", _REFLECTION_KEYS, "reflection.")

    enabled = _bool(top.get("enabled", True), "enabled")
    scope = top.get("scope", "thread")
    if scope not in ("thread", "resource"):
        raise ConfigError("scope", f"must be 'thread' or 'resource', got {scope!r}")
    share = _bool(top.get("share_token_budget", False), "shareTokenBudget")

    observer_model, reflector_model, top_model = _resolve_models(top, obs, refl)

    # thresholds
    message_tokens = _message_tokens(obs.get("message_tokens", DEFAULT_MESSAGE_TOKENS), "observation.messageTokens")
    observation_tokens = _positive_int(
        refl.get("observation_tokens", DEFAULT_OBSERVATION_TOKENS), "reflection.observationTokens"
    )
    if share:
        if isinstance(message_tokens, TokenRange):
            raise ConfigError(
                "observation.messageTokens",
                "a {min, max} range cannot be combined with shareTokenBudget, which "
                "builds the range itself; give a number",
            )
        message_tokens = TokenRange(message_tokens, message_tokens + observation_tokens)
    threshold = max_threshold(message_tokens)

    # raw async options: type and range first, then how they combine
    raw_buffer = obs.get("buffer_tokens")
    if raw_buffer is not None and raw_buffer is not False:
        raw_buffer = _number(
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
        raw_refl_activation = _number(raw_refl_activation, "reflection.bufferActivation", "a ratio in (0, 1]")
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
                    stacklevel=4,
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
        buffer_tokens = buffer_activation = block_after = None
        refl_activation = refl_block_after = None
    else:
        buffer_tokens = resolve_buffer_tokens(
            DEFAULT_BUFFER_TOKENS if raw_buffer is None else raw_buffer, message_tokens
        )
        if buffer_tokens <= 0 or buffer_tokens >= threshold:
            raise ConfigError(
                "observation.bufferTokens",
                f"resolves to {buffer_tokens} tokens, which must be > 0 and less than "
                f"messageTokens ({threshold}); use a smaller ratio or count, or false "
                f"to disable buffering",
            )
        buffer_activation = DEFAULT_BUFFER_ACTIVATION if raw_activation is None else raw_activation
        block_after = _resolve_block(raw_block, threshold, "observation.blockAfter", "messageTokens")
        refl_activation = DEFAULT_REFLECTION_BUFFER_ACTIVATION if raw_refl_activation is None else raw_refl_activation
        refl_block_after = _resolve_block(
            raw_refl_block, observation_tokens, "reflection.blockAfter", "observationTokens"
        )

    top_idle = parse_activate_after_idle(top.get("activate_after_idle"), "activateAfterIdle")
    top_provider_change = _bool(top.get("activate_on_provider_change", False), "activateOnProviderChange")
    obs_idle = (
        parse_activate_after_idle(obs["activate_after_idle"], "observation.activateAfterIdle")
        if "activate_after_idle" in obs
        else top_idle
    )
    obs_provider_change = _bool(
        obs.get("activate_on_provider_change", top_provider_change), "observation.activateOnProviderChange"
    )

    observation = ObservationConfig(
        model=observer_model.model,
        instruction=_optional_str(obs.get("instruction"), "observation.instruction"),
        thread_title=_bool(obs.get("thread_title", False), "observation.threadTitle"),
        extract=_extractors(obs.get("extract"), "observation.extract"),
        manage_working_memory=_bool(obs.get("manage_working_memory", False), "observation.manageWorkingMemory"),
        observe_attachments=_observe_attachments(obs.get("observe_attachments", True)),
        message_tokens=message_tokens,
        max_tokens_per_batch=_positive_int(
            obs.get("max_tokens_per_batch", DEFAULT_MAX_TOKENS_PER_BATCH), "observation.maxTokensPerBatch"
        ),
        model_settings=_model_settings(
            obs.get("model_settings"), "observation.modelSettings", OBSERVER_TEMPERATURE, observer_model.is_default
        ),
        provider_options=_provider_options(
            obs.get("provider_options"), "observation.providerOptions", OBSERVER_PROVIDER_OPTIONS
        ),
        buffer_tokens=buffer_tokens,
        buffer_on_idle=_bool(obs.get("buffer_on_idle", False), "observation.bufferOnIdle"),
        buffer_activation=buffer_activation,
        activate_after_idle=obs_idle,
        activate_on_provider_change=obs_provider_change,
        block_after=block_after,
        previous_observer_tokens=_previous_observer_tokens(
            obs.get("previous_observer_tokens", DEFAULT_PREVIOUS_OBSERVER_TOKENS)
        ),
        failure_policy=_choice(obs.get("failure_policy", "abort"), ("abort", "continue"), "observation.failurePolicy"),
        max_retries=(
            None if obs.get("max_retries") is None else _non_negative_int(obs["max_retries"], "observation.maxRetries")
        ),
    )
    reflection = ReflectionConfig(
        model=reflector_model.model,
        instruction=_optional_str(refl.get("instruction"), "reflection.instruction"),
        extract=_extractors(refl.get("extract"), "reflection.extract"),
        observation_tokens=observation_tokens,
        model_settings=_model_settings(
            refl.get("model_settings"), "reflection.modelSettings", REFLECTOR_TEMPERATURE, reflector_model.is_default
        ),
        provider_options=_provider_options(
            refl.get("provider_options"), "reflection.providerOptions", REFLECTOR_PROVIDER_OPTIONS
        ),
        buffer_activation=refl_activation,
        activate_after_idle=parse_activate_after_idle(refl.get("activate_after_idle"), "reflection.activateAfterIdle"),
        activate_on_provider_change=_bool(
            refl.get("activate_on_provider_change", False), "reflection.activateOnProviderChange"
        ),
        block_after=refl_block_after,
    )
    obscure_default = via_memory and scope == "resource"
    return OMConfig(
        enabled=enabled,
        model=top_model,
        scope=scope,
        activate_after_idle=top_idle,
        activate_on_provider_change=top_provider_change,
        share_token_budget=share,
        temporal_markers=_bool(top.get("temporal_markers", False), "temporalMarkers"),
        retrieval=_retrieval(top.get("retrieval", False)),
        hooks=_hooks(top.get("hooks")),
        observation=observation,
        reflection=reflection,
        storage=top.get("storage"),
        on_debug_event=_optional_callable(top.get("on_debug_event"), "onDebugEvent"),
        obscure_thread_ids=_bool(top.get("obscure_thread_ids", obscure_default), "obscureThreadIds"),
        compat=_compat(top.get("compat", "omlab")),
    )


def _compat(value: Any) -> Compat:
    if value not in COMPAT_MODES:
        raise ConfigError(
            "compat",
            f"must be one of {', '.join(map(repr, COMPAT_MODES))} (omlab's corrected semantics, or the "
            f"reference engine's behaviour where omlab deliberately differs), got {value!r}",
        )
    return value


_SHARE_BUDGET_FIX = (
    "requires async buffering to be off (a temporary limitation). Add observation: { bufferTokens: "
    "false } and remove the other buffering options (bufferActivation, blockAfter):\n\n"
    "  observationalMemory: {\n"
    "    shareTokenBudget: true,\n"
    "    observation: { bufferTokens: false },\n"
    "  }\n"
)


@dataclass(frozen=True, slots=True)
class _SelectedModel:
    model: Any
    is_default: bool


def _resolve_models(
    top: dict[str, Any], obs: dict[str, Any], refl: dict[str, Any]
) -> tuple[_SelectedModel, _SelectedModel, Any]:
    """Observer: top → observation → reflection → default; reflector symmetric (seed §model)."""
    top_model = _model(top["model"], "model") if "model" in top else None
    obs_model = _model(obs["model"], "observation.model") if "model" in obs else None
    refl_model = _model(refl["model"], "reflection.model") if "model" in refl else None
    if top_model is not None and (obs_model is not None or refl_model is not None):
        both = "observation.model" if obs_model is not None else "reflection.model"
        raise ConfigError(
            "model",
            f"cannot be combined with {both}; either set model once at the top "
            f"level (used by the Observer and the Reflector) or remove it and "
            f"set observation.model / reflection.model per agent",
        )

    def select(*candidates: Any) -> _SelectedModel:
        chosen = next((c for c in candidates if c is not None), None)
        if chosen is None or chosen == "default":
            return _SelectedModel(DEFAULT_MODEL, True)
        return _SelectedModel(chosen, _is_router(chosen))

    return select(top_model, obs_model, refl_model), select(top_model, refl_model, obs_model), top_model


def _is_router(model: Any) -> bool:
    from omlab.llm.spec import ModelByInputTokens

    return isinstance(model, ModelByInputTokens)


def _model(value: Any, option: str) -> Any:
    if isinstance(value, str) and value.strip() == "default":
        return "default"
    if isinstance(value, int | float):  # bool included
        raise ConfigError(
            option,
            f"expected a 'provider/model' string, ModelByInputTokens, a list of "
            f"ModelWithRetries or a callable, got {value!r}",
        )
    from omlab.llm.spec import ModelSpecError, coerce_model_spec

    try:
        return coerce_model_spec(value)
    except ModelSpecError as err:
        raise ConfigError(option, str(err)) from None


# --- value checks -----------------------------------------------------------------------------


def _bool(value: Any, option: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(option, f"expected true or false, got {value!r}")
    return value


def _number(value: Any, option: str, expected: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(option, f"expected {expected}, got {value!r}")
    return value


def _integer(value: Any, option: str, expected: str) -> int:
    number = _number(value, option, expected)
    if isinstance(number, float):
        if not number.is_integer():
            raise ConfigError(option, f"expected {expected}, got {value!r}")
        return int(number)
    return number


def _positive_int(value: Any, option: str) -> int:
    number = _integer(value, option, "a positive whole number of tokens")
    if number <= 0:
        raise ConfigError(option, f"must be a positive number of tokens, got {number}")
    return number


def _non_negative_int(value: Any, option: str) -> int:
    number = _integer(value, option, "a whole number >= 0")
    if number < 0:
        raise ConfigError(option, f"must be >= 0, got {number}")
    return number


def _optional_str(value: Any, option: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ConfigError(option, f"expected a string, got {type(value).__name__}")
    return value


def _optional_callable(value: Any, option: str) -> Callable[..., Any] | None:
    if value is not None and not callable(value):
        raise ConfigError(option, f"expected a function, got {type(value).__name__}")
    return value


def _choice(value: Any, allowed: tuple[str, ...], option: str) -> Any:
    if value not in allowed:
        raise ConfigError(option, f"must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def _message_tokens(value: Any, option: str) -> int | TokenRange:
    if isinstance(value, TokenRange):
        value = {"min": value.min, "max": value.max}
    if isinstance(value, Mapping):
        bounds = _normalize(value, _RANGE_KEYS, f"{option}.")
        if set(bounds) != {"min", "max"}:
            raise ConfigError(option, "a range needs both min and max, e.g. {min: 30000, max: 70000}")
        low = _positive_int(bounds["min"], f"{option}.min")
        high = _positive_int(bounds["max"], f"{option}.max")
        if low > high:
            raise ConfigError(option, f"range min ({low}) must not exceed max ({high})")
        return TokenRange(low, high)
    return _positive_int(value, option)


def _observation_buffer_activation(value: Any, threshold: int) -> float:
    option = "observation.bufferActivation"
    value = _number(value, option, "a ratio in (0, 1] or an absolute token count >= 1000")
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
    value = _number(value, option, f"a multiplier of {base} in [1, 100) or an absolute count >= 100")
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


def _previous_observer_tokens(value: Any) -> int | None:
    if value is False:
        return None
    if value is True:
        raise ConfigError("observation.previousObserverTokens", "expected a token budget >= 0 or false, got true")
    return _non_negative_int(value, "observation.previousObserverTokens")


_MIME_PATTERN = re.compile(r"^(\*|[a-z0-9][a-z0-9!#$&^_.+-]*/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*))$", re.IGNORECASE)


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


def _extractors(value: Any, option: str) -> tuple[Any, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise ConfigError(option, f"expected a list of extractors, got {type(value).__name__}")
    return tuple(value)


def _model_settings(value: Any, option: str, temperature: float, default_selection: bool) -> ModelSettings:
    given: dict[str, Any] = {}
    if value is not None:
        if isinstance(value, ModelSettings):
            value = {"temperature": value.temperature, "max_output_tokens": value.max_output_tokens}
        if not isinstance(value, Mapping):
            raise ConfigError(option, f"expected an object, got {type(value).__name__}")
        given = _normalize(value, _MODEL_SETTINGS_KEYS, f"{option}.")
    if "temperature" in given:
        temperature = _number(given["temperature"], f"{option}.temperature", "a number >= 0")
        if temperature < 0:
            raise ConfigError(f"{option}.temperature", f"must be >= 0, got {temperature}")
    max_output = (
        _positive_int(given["max_output_tokens"], f"{option}.maxOutputTokens")
        if "max_output_tokens" in given
        else DEFAULT_MAX_OUTPUT_TOKENS
        if default_selection
        else None
    )
    return ModelSettings(temperature=float(temperature), max_output_tokens=max_output)


def _provider_options(value: Any, option: str, default: dict[str, Any]) -> dict[str, Any]:
    if value is None:
        return copy.deepcopy(default)
    if not isinstance(value, Mapping):
        raise ConfigError(option, f"expected an object keyed by provider, got {type(value).__name__}")
    return copy.deepcopy(dict(value))  # replaces the default, never merged into it


def _retrieval(value: Any) -> RetrievalConfig | None:
    if value is False:
        return None
    if value is True:
        return RetrievalConfig()
    if not isinstance(value, Mapping):
        raise ConfigError("retrieval", f"expected true, false or {{vector, scope, instructions}}, got {value!r}")
    given = _normalize(value, _RETRIEVAL_KEYS, "retrieval.")
    scope = given.get("scope", "resource")
    if scope not in ("thread", "resource"):
        raise ConfigError("retrieval.scope", f"must be 'thread' or 'resource', got {scope!r}")
    return RetrievalConfig(
        vector=_bool(given.get("vector", False), "retrieval.vector"),
        scope=scope,
        instructions=_optional_str(given.get("instructions"), "retrieval.instructions"),
    )


def _hooks(value: Any) -> OMHooks | None:
    if value is None:
        return None
    if isinstance(value, OMHooks):
        return value
    if isinstance(value, Mapping):
        given = _normalize(value, _HOOK_KEYS, "hooks.")
    else:
        given = {}
        for snake, camel in _HOOK_KEYS.items():
            found = getattr(value, snake, None) or getattr(value, camel, None)
            if found is not None:
                given[snake] = found
        if not given:
            raise ConfigError(
                "hooks",
                f"expected a mapping or an object with {', '.join(_HOOK_KEYS.values())} "
                f"(or their snake_case forms), got {type(value).__name__}",
            )
    for snake, fn in given.items():
        _optional_callable(fn, f"hooks.{_HOOK_KEYS[snake]}")
    return OMHooks(**given)


def _rescale(block_after: int | None, old_threshold: int, new_threshold: int) -> int | None:
    if block_after is None or old_threshold == new_threshold:
        return block_after
    return max(js_round(block_after * new_threshold / old_threshold), new_threshold + 1)


# --- snapshots --------------------------------------------------------------------------------

_SECRET_KEY = re.compile(
    r"api[_-]?key|secret|password|passwd|authorization|bearer|access[_-]?token|"
    r"credential|private[_-]?key",
    re.IGNORECASE,
)


def _json_safe(value: Any) -> Any:
    """A JSON-ready deep copy; secret-looking keys are redacted, objects become type names."""
    if isinstance(value, Mapping):
        return {str(k): "<redacted>" if _SECRET_KEY.search(str(k)) else _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if callable(value):
        return _describe_callable(value)
    return _type_name(value)


def _type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def _describe_callable(fn: Any) -> str | None:
    if fn is None:
        return None
    module = getattr(fn, "__module__", None) or type(fn).__module__
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{name}"


def _describe_model(model: Any) -> str:
    from omlab.llm.spec import ModelSpecError, describe_model

    try:
        return describe_model(model)
    except ModelSpecError:
        return _type_name(model)


def _describe_extractor(extractor: Any) -> Any:
    if isinstance(extractor, str | Mapping):
        return _json_safe(extractor)
    described: dict[str, Any] = {"type": _type_name(extractor)}
    for attribute in ("slug", "name", "instructions"):
        value = getattr(extractor, attribute, None)
        if isinstance(value, str):
            described[attribute] = value
        elif callable(value):
            described[attribute] = _describe_callable(value)
    return described


def _threshold_dict(threshold: int | TokenRange) -> Any:
    if isinstance(threshold, TokenRange):
        return {"min": threshold.min, "max": threshold.max}
    return threshold


def _settings_dict(settings: ModelSettings) -> dict[str, Any]:
    return {"temperature": settings.temperature, "max_output_tokens": settings.max_output_tokens}


def _read_json_source(text_or_path: str | os.PathLike[str]) -> tuple[str, str]:
    if isinstance(text_or_path, str):
        stripped = text_or_path.strip()
        if stripped[:1] in ("{", "[") or stripped in ("true", "false", "null"):
            return "<json>", text_or_path
    path = Path(text_or_path)
    try:
        return str(path), path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(str(path), f"cannot read the config file: {err.strerror or err}") from None


__all__ = [
    "DEFAULT_MODEL",
    "ConfigError",
    "ModelSettings",
    "OMConfig",
    "OMHooks",
    "ObservationConfig",
    "ReflectionConfig",
    "RetrievalConfig",
    "TokenRange",
]

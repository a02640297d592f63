"""The ``observationalMemory`` option object → the field values of an :class:`~omlab.engine.config.OMConfig`.

Reads the top-level options, hands each section to its module (observation, reflection,
buffering, retrieval, hooks, models) and checks what spans sections, in the order the reference
reports problems.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from omlab.engine.buffering_config import resolve_async
from omlab.engine.caller_warnings import warn_at_caller
from omlab.engine.errors import ConfigError
from omlab.engine.hooks import parse_hooks
from omlab.engine.model_options import resolve_models
from omlab.engine.observation_config import (
    DEFAULT_MESSAGE_TOKENS,
    OBSERVATION_KEYS,
    build_observation,
    message_tokens_option,
)
from omlab.engine.option_checks import (
    check_bool,
    normalize,
    option_keys,
    optional_callable,
    positive_int,
    section,
    snake,
)
from omlab.engine.reflection_config import DEFAULT_OBSERVATION_TOKENS, REFLECTION_KEYS, build_reflection
from omlab.engine.retrieval_config import parse_retrieval
from omlab.engine.thresholds import TokenRange, max_threshold
from omlab.engine.ttl import parse_activate_after_idle

Compat = Literal["omlab", "reference"]
COMPAT_MODES: tuple[str, ...] = ("omlab", "reference")
"""``compat``: ``omlab`` (the default) keeps omlab's corrected semantics; ``reference`` reproduces
``@mastra/memory`` 1.31.0 where omlab deliberately differs (docs/divergences.md, "Reference mode")."""

TOP_KEYS = option_keys(
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


def unwrap(options: Any) -> Mapping[str, Any] | bool:
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
        return unwrap(options[wrapper[0]])
    return options


def merge_kwargs(options: Mapping[str, Any] | bool, kwargs: Mapping[str, Any]) -> Mapping[str, Any] | bool:
    """Keyword options over an option object: a keyword replaces the same option however spelled."""
    if not kwargs:
        return options
    base = {"enabled": False} if options is False else dict(options)
    for key, value in kwargs.items():
        twin = TOP_KEYS.get(key) if key in TOP_KEYS else snake(key)
        base.pop(twin, None)
        base[key] = value
    return base


def config_fields(options: Mapping[str, Any] | bool, *, via_memory: bool) -> dict[str, Any]:
    """The resolved field values of an ``OMConfig`` for an unwrapped option object.

    ``via_memory``: the options came from a SerializedMemoryConfig, where resource scope turns
    ``obscureThreadIds`` on unless it is given.
    """
    if options is False:
        return {"enabled": False}
    top = normalize(options, TOP_KEYS, "")
    obs = section(top, "observation", OBSERVATION_KEYS, "observation.")
    refl = section(top, "reflection", REFLECTION_KEYS, "reflection.")
    compat = _compat(top.get("compat", "omlab"))
    if via_memory and compat == "reference":
        _drop_what_memory_does_not_pass(obs, refl)

    enabled = check_bool(top.get("enabled", True), "enabled")
    scope = top.get("scope", "thread")
    if scope not in ("thread", "resource"):
        raise ConfigError("scope", f"must be 'thread' or 'resource', got {scope!r}")
    share = check_bool(top.get("share_token_budget", False), "shareTokenBudget")

    observer_model, reflector_model, top_model = resolve_models(top, obs, refl)

    # thresholds
    message_tokens = message_tokens_option(
        obs.get("message_tokens", DEFAULT_MESSAGE_TOKENS), "observation.messageTokens"
    )
    observation_tokens = positive_int(
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
    buffering = resolve_async(
        obs,
        refl,
        scope=scope,
        share=share,
        message_tokens=message_tokens,
        threshold=max_threshold(message_tokens),
        observation_tokens=observation_tokens,
    )

    top_idle = parse_activate_after_idle(top.get("activate_after_idle"), "activateAfterIdle")
    top_provider_change = check_bool(top.get("activate_on_provider_change", False), "activateOnProviderChange")
    obs_idle = (
        parse_activate_after_idle(obs["activate_after_idle"], "observation.activateAfterIdle")
        if "activate_after_idle" in obs
        else top_idle
    )
    obs_provider_change = check_bool(
        obs.get("activate_on_provider_change", top_provider_change), "observation.activateOnProviderChange"
    )
    observation = build_observation(obs, observer_model, message_tokens, buffering, obs_idle, obs_provider_change)
    reflection = build_reflection(refl, reflector_model, observation_tokens, buffering)
    # the seed: resource scope through Memory hashes thread ids; Memory 1.31.0 never sets the option
    obscure_default = via_memory and scope == "resource" and compat != "reference"
    return {
        "enabled": enabled,
        "model": top_model,
        "scope": scope,
        "activate_after_idle": top_idle,
        "activate_on_provider_change": top_provider_change,
        "share_token_budget": share,
        "temporal_markers": check_bool(top.get("temporal_markers", False), "temporalMarkers"),
        "retrieval": parse_retrieval(top.get("retrieval", False)),
        "hooks": parse_hooks(top.get("hooks")),
        "observation": observation,
        "reflection": reflection,
        "storage": top.get("storage"),
        "on_debug_event": optional_callable(top.get("on_debug_event"), "onDebugEvent"),
        "obscure_thread_ids": check_bool(top.get("obscure_thread_ids", obscure_default), "obscureThreadIds"),
        "compat": compat,
    }


#: Options of the observation/reflection objects that Mastra's Memory (1.31.0) does not pass to the
#: engine it builds, though the seed documents them
_NOT_PASSED_BY_MEMORY = (
    ("activate_after_idle", "activateAfterIdle"),
    ("activate_on_provider_change", "activateOnProviderChange"),
)


def _drop_what_memory_does_not_pass(obs: dict[str, Any], refl: dict[str, Any]) -> None:
    """``compat="reference"`` through a SerializedMemoryConfig: build the engine as Memory does,
    without the per-step activation options it leaves out, each warned by name."""
    for prefix, given in (("observation", obs), ("reflection", refl)):
        for name, camel in _NOT_PASSED_BY_MEMORY:
            if name in given:
                del given[name]
                warn_at_caller(
                    f"observationalMemory.{prefix}.{camel}: not applied with compat='reference': Mastra's Memory "
                    "(1.31.0) does not pass it to the engine (the top-level option still applies)"
                )


def _compat(value: Any) -> Compat:
    if value not in COMPAT_MODES:
        raise ConfigError(
            "compat",
            f"must be one of {', '.join(map(repr, COMPAT_MODES))} (omlab's corrected semantics, or the "
            f"reference engine's behaviour where omlab deliberately differs), got {value!r}",
        )
    return value

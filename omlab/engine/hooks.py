"""Lifecycle hooks (``hooks`` option): called around every observation and reflection cycle.

A hook receives one dict: ``threadId``, ``resourceId``, ``trigger`` (``manual`` | ``turn-sync`` |
``async-buffer``), ``cycleId``, ``operationType``; the end hooks also get ``usage``
(``inputTokens``/``outputTokens``/``totalTokens``), ``providerMetadata``, ``costUsd``, ``model`` and
``error`` (the exception, e.g. a ``DegenerateObserverOutputError``, or None). Hooks may be plain
functions or coroutines. An exception in a hook is logged and never fails the cycle.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from omlab.engine.errors import ConfigError
from omlab.engine.option_checks import normalize, option_keys, optional_callable

log = logging.getLogger("omlab.engine")

HOOK_NAMES = ("on_observation_start", "on_observation_end", "on_reflection_start", "on_reflection_end")
_HOOK_KEYS = option_keys("onObservationStart", "onObservationEnd", "onReflectionStart", "onReflectionEnd")
_CAMEL = {
    "onObservationStart": "on_observation_start",
    "onObservationEnd": "on_observation_end",
    "onReflectionStart": "on_reflection_start",
    "onReflectionEnd": "on_reflection_end",
}


def _lookup(hooks: Any, name: str) -> Any:
    if hooks is None:
        return None
    if isinstance(hooks, dict):
        if name in hooks:
            return hooks[name]
        for camel, snake in _CAMEL.items():
            if snake == name and camel in hooks:
                return hooks[camel]
        return None
    return getattr(hooks, name, None)


async def call_hook(hooks: Any, name: str, payload: dict[str, Any]) -> None:
    """Call hook ``name`` if configured; swallow and log its errors."""
    fn = _lookup(hooks, name)
    if fn is None:
        return
    try:
        result = fn(payload)
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("hook %s failed (ignored)", name)


@dataclass(frozen=True, slots=True)
class OMHooks:
    """``hooks``: lifecycle callbacks around every observation and reflection cycle."""

    on_observation_start: Callable[..., Any] | None = None
    on_observation_end: Callable[..., Any] | None = None
    on_reflection_start: Callable[..., Any] | None = None
    on_reflection_end: Callable[..., Any] | None = None


def parse_hooks(value: Any) -> OMHooks | None:
    """The ``hooks`` option: a mapping or an object with the hook names (camelCase or snake_case)."""
    if value is None:
        return None
    if isinstance(value, OMHooks):
        return value
    if isinstance(value, Mapping):
        given = normalize(value, _HOOK_KEYS, "hooks.")
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
        optional_callable(fn, f"hooks.{_HOOK_KEYS[snake]}")
    return OMHooks(**given)

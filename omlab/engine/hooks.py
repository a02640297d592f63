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
from typing import Any

log = logging.getLogger("omlab.engine")

HOOK_NAMES = ("on_observation_start", "on_observation_end", "on_reflection_start", "on_reflection_end")
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

"""The serialized forms of a config: a ``SerializedMemoryConfig`` and JSON text or files.

A ``SerializedMemoryConfig`` (the JSON a stored agent keeps) carries, beside
``observationalMemory``, Memory options OM does not own. ``readOnly`` has an OM meaning and is
applied (the engine writes nothing); ``lastMessages``, ``semanticRecall`` and ``generateTitle``
belong to the Memory class, so building an engine from such a document warns about each by name
instead of dropping it silently (they stay in :attr:`OMConfig.extra`).
"""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omlab.engine.errors import ConfigError
from omlab.engine.option_checks import normalize, option_keys

#: Memory options that OM cannot apply, and why
UNAPPLIED_MEMORY_OPTIONS = {
    "lastMessages": "the raw window is whatever OM has not observed yet; recent-message history is the Memory class's",
    "semanticRecall": "semantic recall is the Memory class's (OM's own search is retrieval: {vector: true})",
    "generateTitle": "title generation is the Memory class's (OM's is observation.threadTitle)",
}

_MEMORY_KEYS = option_keys("vector", "embedder", "embedderOptions", "options", "observationalMemory")
_MEMORY_ONLY_KEYS = ("options", "vector", "embedder", "embedderOptions", "embedder_options")


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


def split_memory_config(serialized: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """A SerializedMemoryConfig → (its ``observationalMemory`` value or ``None``, the other fields).

    ``observationalMemory`` may also sit under ``options``; the other fields come back camelCase.
    """
    if not isinstance(serialized, Mapping):
        raise ConfigError("SerializedMemoryConfig", f"expected a mapping, got {type(serialized).__name__}")
    given = normalize(serialized, _MEMORY_KEYS, "")
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
    return om, {_MEMORY_KEYS[k]: copy.deepcopy(v) for k, v in given.items()}


def is_memory_config(data: Any) -> bool:
    """Whether a JSON document is a SerializedMemoryConfig (it has a Memory-only field)."""
    return isinstance(data, Mapping) and any(k in data for k in _MEMORY_ONLY_KEYS)


def read_json_source(text_or_path: str | os.PathLike[str]) -> tuple[str, str]:
    """(where it came from, the JSON text) of JSON text or a JSON file."""
    if isinstance(text_or_path, str):
        stripped = text_or_path.strip()
        if stripped[:1] in ("{", "[") or stripped in ("true", "false", "null"):
            return "<json>", text_or_path
    path = Path(text_or_path)
    try:
        return str(path), path.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(str(path), f"cannot read the config file: {err.strerror or err}") from None

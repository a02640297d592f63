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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omlab.engine.caller_warnings import warn_at_caller
from omlab.engine.errors import ConfigError
from omlab.engine.option_checks import normalize, option_keys

#: Memory options that OM cannot apply, and why
UNAPPLIED_MEMORY_OPTIONS = {
    "lastMessages": "the raw window is whatever OM has not observed yet; recent-message history is the Memory class's",
    "messageHistory": "the token budget of the message history is the Memory class's; OM keeps what it has not "
    "observed yet",
    "semanticRecall": "semantic recall is the Memory class's (OM's own search is retrieval: {vector: true})",
    "generateTitle": "title generation is the Memory class's (OM's is observation.threadTitle)",
}

#: Top-level SerializedMemoryConfig fields that OM keeps but cannot apply, and why
UNAPPLIED_MEMORY_FIELDS = {
    "vector": "omlab resolves no vector store by id; semantic recall takes ObservationalMemory(embedder=...)",
    "embedder": "omlab resolves no embedder by id; pass ObservationalMemory(embedder=...) "
    "(e.g. omlab.llm.embeddings.litellm_embedder(...))",
    "embedderOptions": "options of an embedder omlab does not build; give them to the embedder you pass",
}

_MEMORY_KEYS = option_keys("vector", "embedder", "embedderOptions", "options", "observationalMemory")
_MEMORY_ONLY_KEYS = ("options", "vector", "embedder", "embedderOptions", "embedder_options")
#: SerializedMemoryConfig.options as @mastra/core 1.71.0 types it (observationalMemory may sit here too)
_OPTIONS_KEYS = option_keys("readOnly", *UNAPPLIED_MEMORY_OPTIONS, "observationalMemory")


def warn_unapplied_options(extra: Mapping[str, Any]) -> None:
    """Warn, by name and at the caller's line, about each field of a SerializedMemoryConfig's
    non-OM part ``extra`` that OM keeps (in ``config.extra``) but does not apply."""
    options = extra.get("options") or {}
    for name, why in UNAPPLIED_MEMORY_OPTIONS.items():
        if options.get(name) is not None:
            warn_at_caller(f"options.{name}: kept in config.extra but not applied: {why}")
    for name, why in UNAPPLIED_MEMORY_FIELDS.items():
        value = extra.get(name)
        if value is not None and not (name == "vector" and value is False):  # vector: false is applied
            warn_at_caller(f"{name}: kept in config.extra but not applied: {why}")


def read_only(extra: Mapping[str, Any]) -> bool:
    """``options.readOnly`` of a SerializedMemoryConfig."""
    options = extra.get("options") or {}
    return bool(options.get("readOnly", False))


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
        normalized = normalize(options, _OPTIONS_KEYS, "options.")
        if "observational_memory" in normalized:
            if om is not None:
                raise ConfigError("observationalMemory", "given both at the top level and under options; keep one")
            om = normalized.pop("observational_memory")
        given["options"] = {_OPTIONS_KEYS[k]: v for k, v in normalized.items()}
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

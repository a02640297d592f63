"""omlab: a research toolkit for Observational Memory.

``from omlab import ObservationalMemory, ModelByInputTokens`` gives the engine and the token-tier
model selector. Importing omlab sets offline-safe defaults (litellm's bundled price map, tiktoken's
bundled BPE files) without overriding anything the user set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from omlab.llm.env import prepare_environment as _prepare_environment

_prepare_environment()

__version__ = "0.1.0"

_EXPORTS = {
    "ObservationalMemory": "omlab.engine.memory",
    "SyncObservationalMemory": "omlab.engine.memory",
    "ModelByInputTokens": "omlab.llm.spec",
    "ModelWithRetries": "omlab.llm.spec",
    "OMConfig": "omlab.engine.config",
    "ConfigError": "omlab.engine.config",
    "Message": "omlab.engine.messages",
    "Part": "omlab.engine.messages",
    "ModelClient": "omlab.llm.client",
    "VirtualClock": "omlab.engine.clock",
}

if TYPE_CHECKING:  # pragma: no cover
    from omlab.engine.clock import VirtualClock
    from omlab.engine.config import ConfigError, OMConfig
    from omlab.engine.memory import ObservationalMemory, SyncObservationalMemory
    from omlab.engine.messages import Message, Part
    from omlab.llm.client import ModelClient
    from omlab.llm.spec import ModelByInputTokens, ModelWithRetries


def __getattr__(name: str) -> Any:
    # Lazy: `import omlab` stays cheap; litellm and friends load on first use.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'omlab' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "ConfigError",
    "Message",
    "ModelByInputTokens",
    "ModelClient",
    "ModelWithRetries",
    "OMConfig",
    "ObservationalMemory",
    "Part",
    "SyncObservationalMemory",
    "VirtualClock",
]

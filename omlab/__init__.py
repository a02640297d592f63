"""omlab: a research toolkit for Observational Memory.

``from omlab import ObservationalMemory, ModelByInputTokens, Extractor, WorkingMemoryExtractor``
gives the engine, the token-tier model selector and the extractors, under the seed's names. Importing omlab sets offline-safe defaults (litellm's bundled price map, tiktoken's
bundled BPE files) without overriding anything the user set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from omlab.llm.env import prepare_environment as _prepare_environment

_prepare_environment()

__version__ = "0.1.0"

_EXPORTS = {
    "ObservationalMemory": "omlab.memory",
    "SyncObservationalMemory": "omlab.engine.sync_memory",
    "ModelByInputTokens": "omlab.llm.spec",
    "ModelWithRetries": "omlab.llm.spec",
    "OMConfig": "omlab.engine.config",
    "ConfigError": "omlab.engine.errors",
    "Message": "omlab.engine.messages",
    "Part": "omlab.engine.messages",
    "ModelClient": "omlab.llm.client",
    "VirtualClock": "omlab.engine.clock",
    "Extractor": "omlab.engine.extractors",
    "WorkingMemoryExtractor": "omlab.engine.extractors",
    "StepResult": "omlab.engine.step_result",
    "ObservationalMemoryError": "omlab.engine.errors",
    "Status": "omlab.engine.status",
    "DataPart": "omlab.engine.events",
    "DebugEvent": "omlab.engine.events",
    "ObserverError": "omlab.engine.errors",
    "DegenerateObserverOutputError": "omlab.engine.errors",
    "EmptyObserverOutputError": "omlab.engine.errors",
    "InputTooLargeError": "omlab.llm.spec",
    "ModelSpecError": "omlab.llm.spec",
}

if TYPE_CHECKING:  # pragma: no cover
    from omlab.engine.clock import VirtualClock
    from omlab.engine.config import OMConfig
    from omlab.engine.errors import (
        ConfigError,
        DegenerateObserverOutputError,
        EmptyObserverOutputError,
        ObservationalMemoryError,
        ObserverError,
    )
    from omlab.engine.events import DataPart, DebugEvent
    from omlab.engine.extractors import Extractor, WorkingMemoryExtractor
    from omlab.engine.messages import Message, Part
    from omlab.engine.status import Status
    from omlab.engine.step_result import StepResult
    from omlab.engine.sync_memory import SyncObservationalMemory
    from omlab.llm.client import ModelClient
    from omlab.llm.spec import InputTooLargeError, ModelByInputTokens, ModelSpecError, ModelWithRetries
    from omlab.memory import ObservationalMemory


def __getattr__(name: str) -> Any:
    # Lazy: `import omlab` stays cheap; litellm and friends load on first use.
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'omlab' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "ConfigError",
    "DataPart",
    "DebugEvent",
    "DegenerateObserverOutputError",
    "EmptyObserverOutputError",
    "Extractor",
    "InputTooLargeError",
    "Message",
    "ModelByInputTokens",
    "ModelClient",
    "ModelSpecError",
    "ModelWithRetries",
    "OMConfig",
    "ObservationalMemory",
    "ObservationalMemoryError",
    "ObserverError",
    "Part",
    "Status",
    "StepResult",
    "SyncObservationalMemory",
    "VirtualClock",
    "WorkingMemoryExtractor",
]

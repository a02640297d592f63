"""Built-in offline models, addressable as ``omlab/<name>`` like any provider model."""

from __future__ import annotations

from collections.abc import Callable

from omlab.llm.offline.base import OfflineModel, OfflineResult

_REGISTRY: dict[str, Callable[[], OfflineModel]] = {}


def register_offline_model(name: str, factory: Callable[[], OfflineModel]) -> None:
    """Make ``omlab/<name>`` resolve to the model built by ``factory``."""
    _REGISTRY[name] = factory


def get_offline_model(name: str) -> OfflineModel:
    """The offline model called ``name`` (without the ``omlab/`` prefix)."""
    _load_builtins()
    try:
        return _REGISTRY[name]()
    except KeyError:
        known = ", ".join(f"omlab/{n}" for n in sorted(_REGISTRY)) or "(none)"
        raise ValueError(f"unknown offline model 'omlab/{name}'; known: {known}") from None


def offline_model_names() -> list[str]:
    _load_builtins()
    return sorted(_REGISTRY)


def _load_builtins() -> None:
    # Imported lazily so that importing the registry never pulls every model in.
    from omlab.llm.offline import builtin  # noqa: F401


__all__ = ["OfflineModel", "OfflineResult", "get_offline_model", "offline_model_names", "register_offline_model"]

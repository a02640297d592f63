"""The registry of offline models: ``omlab/<name>`` -> a factory of the model."""

from __future__ import annotations

from collections.abc import Callable

from omlab.llm.offline.base import OfflineModel

_REGISTRY: dict[str, Callable[[], OfflineModel]] = {}


def register_offline_model(name: str, factory: Callable[[], OfflineModel]) -> None:
    """Make ``omlab/<name>`` resolve to the model built by ``factory``."""
    _REGISTRY[name] = factory


def get_offline_model(name: str) -> OfflineModel:
    """The offline model called ``name`` (without the ``omlab/`` prefix)."""
    try:
        return _REGISTRY[name]()
    except KeyError:
        known = ", ".join(f"omlab/{n}" for n in sorted(_REGISTRY)) or "(none)"
        raise ValueError(f"unknown offline model 'omlab/{name}'; known: {known}") from None


def offline_model_names() -> list[str]:
    """The names of every registered offline model (without the ``omlab/`` prefix)."""
    return sorted(_REGISTRY)

"""Register omlab's built-in offline models (imported lazily by ``get_offline_model``)."""

from __future__ import annotations

from omlab.llm.offline import register_offline_model
from omlab.llm.offline.observer import OfflineObserver
from omlab.llm.offline.reflector import OfflineReflector

register_offline_model(OfflineObserver.name, OfflineObserver)
register_offline_model(OfflineReflector.name, OfflineReflector)

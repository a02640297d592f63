"""Register omlab's built-in offline models (imported lazily by ``get_offline_model``)."""

from __future__ import annotations

from omlab.llm.offline import register_offline_model
from omlab.llm.offline.judge import OfflineJudge
from omlab.llm.offline.observer import OfflineObserver
from omlab.llm.offline.reader import OfflineReader
from omlab.llm.offline.reflector import OfflineReflector

register_offline_model(OfflineObserver.name, OfflineObserver)
register_offline_model(OfflineReflector.name, OfflineReflector)
register_offline_model(OfflineReader.name, OfflineReader)
register_offline_model(OfflineJudge.name, OfflineJudge)

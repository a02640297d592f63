"""Built-in offline models, addressable as ``omlab/<name>`` like any provider model."""

from __future__ import annotations

from omlab.llm.offline.base import OfflineModel, OfflineResult
from omlab.llm.offline.judge import OfflineJudge
from omlab.llm.offline.observer import OfflineObserver
from omlab.llm.offline.reader import OfflineReader
from omlab.llm.offline.reflector import OfflineReflector
from omlab.llm.offline.registry import get_offline_model, offline_model_names, register_offline_model

for _model in (OfflineObserver, OfflineReflector, OfflineReader, OfflineJudge):
    register_offline_model(_model.name, _model)

__all__ = ["OfflineModel", "OfflineResult", "get_offline_model", "offline_model_names", "register_offline_model"]

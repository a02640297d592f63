"""The reference's ``getResolvedConfig()``: the models an engine will call, as a UI shows them.

Each role's ``model`` is a concrete ``provider/model`` id: a ``ModelByInputTokens`` router gives
the model of its smallest threshold (the reference's choice) and lists every tier in ``routing``
(``[{"upTo": threshold, "model": id}]``); a fallback list gives its first enabled entry; a
callable (``DynamicModel``) is called with the request context. A spec that cannot be resolved
reads ``"(unknown)"``, as in the reference.
"""

from __future__ import annotations

import logging
from typing import Any

from omlab.engine.config import OMConfig
from omlab.llm.spec import ModelByInputTokens, ModelSpec, resolve_model

UNKNOWN_MODEL = "(unknown)"

log = logging.getLogger(__name__)


async def _model_id(spec: ModelSpec, context: dict[str, Any], input_tokens: int | None) -> str:
    resolved = await resolve_model(spec, input_tokens=input_tokens, context=context)
    return resolved.attempts[0].model


async def model_routing(spec: ModelSpec, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"model": id}``, plus ``"routing"`` for a ``ModelByInputTokens`` router."""
    context = dict(context or {})
    try:
        if isinstance(spec, ModelByInputTokens):
            routing = [
                {"upTo": threshold, "model": await _model_id(spec, context, threshold)}
                for threshold in spec.get_thresholds()
            ]
            return {"model": routing[0]["model"], "routing": routing}
        return {"model": await _model_id(spec, context, None)}
    except Exception:  # a UI read must not fail: the reference logs and shows "(unknown)"
        log.exception("could not resolve the model config %s", type(spec).__name__)
        return {"model": UNKNOWN_MODEL}


async def resolved_config(config: OMConfig, request_context: dict[str, Any] | None = None) -> dict[str, Any]:
    """The reference's ``getResolvedConfig(requestContext)`` for ``config``."""
    observation = await model_routing(config.observation.model, request_context)
    reflection = await model_routing(config.reflection.model, request_context)
    previous = config.observation.previous_observer_tokens
    return {
        "scope": config.scope,
        "observation": {
            "messageTokens": getattr(config.observation.message_tokens, "max", config.observation.message_tokens),
            "model": observation["model"],
            "previousObserverTokens": False if previous is None else previous,
            **({"routing": observation["routing"]} if "routing" in observation else {}),
        },
        "reflection": {
            "observationTokens": config.reflection.observation_tokens,
            "model": reflection["model"],
            **({"routing": reflection["routing"]} if "routing" in reflection else {}),
        },
    }

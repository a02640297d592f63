"""The actor's last activity and model, read from messages (for idle and provider-change activation).

Both are derived from the messages themselves, as the reference does, so a new engine over the
same storage knows them after a restart: the last activity is the ``created_at`` of the last
non-data part of the newest assistant message (that message's ``created_at`` when no such part
carries a time); the last actor model is the newest assistant message's model.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from omlab.engine.messages import Message, utc


def last_activity_at(messages: Sequence[Message]) -> datetime | None:
    """When the newest assistant message's last visible (non-data) part was produced."""
    for message in reversed(messages):
        if message.role != "assistant":
            continue
        for part in reversed(message.parts):
            if not part.is_data and part.created_at is not None:
                return utc(part.created_at)
        return message.created_at
    return None


def message_model(message: Message) -> str | None:
    """The ``provider/model`` that wrote an assistant message: a ``step-start`` part's model, else
    ``metadata["model"]``, else ``metadata["provider"]`` + ``metadata["modelId"]``."""
    for part in reversed(message.parts):
        model = part.metadata.get("model") if part.type == "step-start" else None
        if isinstance(model, str) and model:
            return model
    model = message.metadata.get("model")
    if isinstance(model, str) and model:
        return model
    provider, model_id = message.metadata.get("provider"), message.metadata.get("modelId")
    if isinstance(model_id, str) and model_id:
        return f"{provider}/{model_id}" if isinstance(provider, str) and provider else model_id
    return None


def last_actor_model(messages: Sequence[Message]) -> str | None:
    """The model of the newest assistant message that names one."""
    for message in reversed(messages):
        if message.role == "assistant" and (model := message_model(message)):
            return model
    return None


@dataclass(frozen=True, slots=True)
class ActorCall:
    """The actor's model and provider options for the current step (they resolve ``"auto"`` TTLs)."""

    model: str | None = None
    provider_options: dict[str, Any] = field(default_factory=dict)


#: set by a step; background work started in the step inherits it (asyncio copies the context)
_NO_ACTOR = ActorCall()
CURRENT_ACTOR: ContextVar[ActorCall] = ContextVar("omlab_current_actor", default=_NO_ACTOR)

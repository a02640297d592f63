"""The protocol of omlab's built-in offline models (deterministic, no network)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from omlab.llm.types import ChatMessage


@dataclass(slots=True)
class OfflineResult:
    text: str
    input_tokens: int
    output_tokens: int


class OfflineModel(Protocol):
    """A model that answers a chat request locally. ``name`` is what follows ``omlab/``."""

    name: str

    def generate(
        self,
        messages: list[ChatMessage],
        *,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
    ) -> OfflineResult: ...


def message_text(message: ChatMessage) -> str:
    """The text of a chat message whose content is a string or a list of content parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""

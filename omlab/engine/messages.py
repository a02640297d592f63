"""Conversation messages as the engine sees them.

A message is a list of typed parts, like the AI-SDK v5 message format the reference engine uses:
``text``, ``tool-invocation`` (a call and, once it returns, its result), ``reasoning``, ``image``,
``file`` and ``data-*`` parts (UI markers, never sent to a model and never counted).
Timestamps are timezone-aware UTC datetimes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

Role = Literal["user", "assistant", "system", "tool"]
ToolState = Literal[
    "partial-call",
    "call",
    "result",
    "output-error",
    "output-denied",
    "approval-requested",
    "approval-responded",
]

_id_counter = itertools.count(1)


def utc(dt: datetime) -> datetime:
    """Return ``dt`` as an aware UTC datetime (naive values are taken to be UTC)."""
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


@dataclass(slots=True, eq=False)
class Part:
    """One part of a message.

    ``type`` is one of ``text``, ``tool-invocation``, ``reasoning``, ``image``, ``file`` or
    ``data-<name>``; other types are kept and counted as JSON.
    """

    type: str
    text: str | None = None
    # tool invocations
    tool_call_id: str | None = None
    tool_name: str | None = None
    args: Any = None
    result: Any = None
    state: ToolState | None = None
    error_text: str | None = None
    # images and files: ``data`` is bytes, a base64 string, a data: URI or an http(s) URL
    data: bytes | str | None = None
    mime_type: str | None = None
    filename: str | None = None
    width: int | None = None
    height: int | None = None
    detail: str | None = None
    size_bytes: int | None = None
    created_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    #: token-estimate cache: ``"<source>|<kind>:<hash>" -> tokens``; see ``omlab.engine.token_counter``
    token_cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def is_data(self) -> bool:
        return self.type.startswith("data-")


@dataclass(slots=True, eq=False)
class Message:
    """A conversation message: an id, a role, parts and a creation time.

    ``name`` is the speaker's name when the conversation has named speakers (a LoCoMo replay
    under the official protocol): the Observer's history labels the message with it instead of
    its role, and the actor's context carries it as the chat message's ``name``."""

    id: str
    role: Role
    parts: list[Part]
    created_at: datetime
    thread_id: str | None = None
    resource_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    token_cache: dict[str, Any] = field(default_factory=dict, repr=False)
    name: str | None = None

    def __post_init__(self) -> None:
        self.created_at = utc(self.created_at)

    @classmethod
    def of(
        cls,
        role: Role,
        text: str,
        created_at: datetime,
        *,
        id: str | None = None,
        thread_id: str | None = None,
        resource_id: str | None = None,
        name: str | None = None,
    ) -> Message:
        """A message with a single text part."""
        return cls(
            id=id or f"msg-{next(_id_counter)}",
            role=role,
            parts=[Part(type="text", text=text)],
            created_at=created_at,
            thread_id=thread_id,
            resource_id=resource_id,
            name=name,
        )

    @property
    def text(self) -> str:
        """The message's text parts joined with newlines."""
        return "\n".join(p.text for p in self.parts if p.type == "text" and p.text)

    def visible_parts(self) -> list[Part]:
        """Parts that a model would see (everything except ``data-*`` parts)."""
        return [p for p in self.parts if not p.is_data]

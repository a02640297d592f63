"""What an import holds per thread: the stored threads and messages, parts as stored."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class ImportedMessage:
    """One stored message: its parts as stored, and the rest of its ``content`` object."""

    id: str
    thread_id: str
    resource_id: str | None
    role: str
    type: str
    created_at: datetime
    parts: list[dict[str, Any]]
    content_extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ImportedThread:
    """One thread and its messages, oldest first."""

    id: str
    resource_id: str
    title: str
    created_at: datetime | None
    updated_at: datetime | None
    metadata: Any
    messages: list[ImportedMessage]

"""A Mastra import as canonical conversations (``kind = "mastra"`` datasets).

Each imported thread becomes one :class:`~omlab.bench.schema.Conversation` with one session and
no questions: the turns keep every stored part (``Turn.parts``), ``Turn.content`` is the text
parts joined with newlines. ``Conversation.metadata`` names the thread, resource and title.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from omlab.bench.datasets.mastra.errors import MastraImportError
from omlab.bench.datasets.mastra.imported import ImportedThread
from omlab.bench.datasets.mastra.reader import MastraImport, read_mastra
from omlab.bench.datasets.provenance import conversations_digest
from omlab.bench.datasets.schema import Conversation, DatasetInfo, Session, Turn


def load_mastra(
    location: str | Path,
    *,
    resource: str | None = None,
    threads: list[str] | str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> tuple[DatasetInfo, list[Conversation]]:
    """Threads of a Mastra database as conversations (see :func:`read_mastra` for the selection).

    Raises:
        MastraImportError: see :func:`read_mastra`; also a message whose role is neither user
            nor assistant (system and tool messages cannot be replayed as turns).
    """
    imported = read_mastra(location, resource=resource, threads=threads, since=since, until=until)
    return import_conversations(imported)


def import_conversations(imported: MastraImport) -> tuple[DatasetInfo, list[Conversation]]:
    """The conversations of an import already read, and their :class:`DatasetInfo`."""
    conversations = [_conversation(thread, imported.location) for thread in imported.threads]
    info = DatasetInfo(
        name="mastra",
        subset=None,
        source=imported.location,
        revision=None,
        sha256=conversations_digest(conversations),
        n_conversations=len(conversations),
    )
    return info, conversations


def _conversation(thread: ImportedThread, location: str) -> Conversation:
    turns = []
    for message in thread.messages:
        if message.role not in ("user", "assistant"):
            raise MastraImportError(
                f"role {message.role!r} cannot be replayed (only user and assistant messages are turns)",
                file=location,
                thread=thread.id,
                message=message.id,
                column="role",
            )
        text = "\n".join(p["text"] for p in message.parts if p.get("type") == "text" and isinstance(p.get("text"), str))
        turns.append(
            Turn(
                id=message.id,
                role=message.role,  # type: ignore[arg-type]
                content=text,
                created_at=message.created_at,
                parts=tuple(message.parts),
            )
        )
    return Conversation(
        id=thread.id,
        sessions=[Session(id="s001", date=turns[0].created_at, turns=turns)],
        questions=[],
        dataset="mastra",
        metadata={"thread_id": thread.id, "resource_id": thread.resource_id, "title": thread.title},
    )

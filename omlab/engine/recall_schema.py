"""What the actor is told about the ``recall`` tool: its parameters, its function-tool schema
and the guidance appended to the memory prompt (omlab's wording, seed "Tool de rappel")."""

from __future__ import annotations

from typing import Any, Literal

RecallScope = Literal["thread", "resource"]

DEFAULT_LIMIT = 20
MODES = ("messages", "threads", "search")
DETAILS = ("low", "high")
ANCHORS = ("start", "end")
PART_TYPES = ("text", "tool-call", "tool-result", "reasoning", "image", "file")


def tool_schema(scope: RecallScope = "resource", vector: bool = False) -> dict[str, Any]:
    """The OpenAI function-tool schema of ``recall`` for a scope; ``search`` and ``query`` only
    when semantic search is on; ``threadId``/``before``/``after`` only in resource scope."""
    modes = ["messages", "threads", *(["search"] if vector else [])]
    properties: dict[str, Any] = {
        "mode": {
            "type": "string",
            "enum": modes,
            "description": (
                "messages (default): read raw messages; threads: list conversations"
                + ("; search: find messages similar to query" if vector else "")
                + "."
            ),
        },
    }
    if vector:
        properties["query"] = {"type": "string", "description": "What to look for (mode search)."}
    properties["cursor"] = {
        "type": "string",
        "description": (
            "ONE message id to read from, e.g. the start or the end id of an observation group's "
            "range `startId:endId` (never the whole range)."
        ),
    }
    if scope == "resource":
        properties["threadId"] = {
            "type": "string",
            "description": (
                'Read another thread by id (from mode threads), or "current". Without cursor, reading '
                "starts at the thread's first message."
            ),
        }
    properties.update(
        {
            "anchor": {
                "type": "string",
                "enum": list(ANCHORS),
                "description": ("Without cursor: read from the oldest (start, default) or the newest (end) message."),
            },
            "page": {
                "type": "integer",
                "description": (
                    "messages: 1, 2, … read forward from the cursor, -1, -2, … backward (0 counts as 1). "
                    "threads: page number from 0."
                ),
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": f"Items per page (default {DEFAULT_LIMIT}).",
            },
            "detail": {
                "type": "string",
                "enum": list(DETAILS),
                "description": (
                    "low (default): every message, short parts indexed [p0], [p1]…; high: one part in full "
                    "(tool arguments and results) with hints to continue."
                ),
            },
            "partType": {
                "type": "string",
                "enum": list(PART_TYPES),
                "description": "Only parts of this type (messages).",
            },
            "toolName": {"type": "string", "description": "Only calls and results of this tool (messages)."},
            "partIndex": {
                "type": "integer",
                "minimum": 0,
                "description": ("With cursor: show part [pN] of that message in full."),
            },
        }
    )
    if scope == "resource":
        properties["before"] = {
            "type": "string",
            "description": "threads: created before this ISO date (2026-03-15).",
        }
        properties["after"] = {
            "type": "string",
            "description": "threads: created after this ISO date (2026-03-01).",
        }
    where = "this conversation" if scope == "thread" else "the user's conversations"
    return {
        "type": "function",
        "function": {
            "name": "recall",
            "description": (
                f"Read the original messages of {where} behind your memory's observations: exact "
                "wording, code, numbers, links, tool output."
            ),
            "parameters": {"type": "object", "properties": properties, "additionalProperties": False},
        },
    }


def retrieval_instructions(scope: RecallScope = "resource", *, vector: bool = False, custom: str | None = None) -> str:
    """The recall guidance appended to the memory prompt (omlab's wording), for a scope and with
    search only when it is available; ``custom`` (``retrieval.instructions``) comes last."""
    lines = [
        "RECALLING ORIGINAL MESSAGES",
        (
            "Your observations are a summary. Observation groups are headed `## Group `id`` with "
            "`_range: `startId:endId`_`: the ids of the first and last raw message behind them. The "
            "`recall` tool reads those raw messages."
        ),
        (
            "- Use recall when the user wants something repeated, shown or reproduced; when exact "
            "content matters (code, quotes, error messages, URLs, file paths, numbers); when your "
            "memory lacks the detail asked for; or to check a fact before relying on it. When the "
            "user refers to specific past content, recall it rather than guess."
        ),
        ("- Do not use recall for broad summaries or for general preferences your observations already state."),
        (
            "- Pass ONE id as cursor, never the whole range: cursor=startId with page=1 reads the "
            'group forward; cursor=endId with page=-1 reads back from its end. detail="high" shows '
            "one part in full; partIndex=N shows part [pN] of the cursor message."
        ),
    ]
    if scope == "resource":
        if vector:
            lines.append(
                '- To find something from another conversation, start with mode="search" and a '
                "query; each result gives a thread id and a message id to use as cursor. If the "
                'results look unrelated, list the conversations with mode="threads" (filter '
                'with before/after) and read the likely one with mode="messages" and its '
                "threadId: raw history can exist that no observation points to."
            )
        else:
            lines.append(
                "- To find something from another conversation, list the conversations with "
                'mode="threads" (filter with before/after), then read one with '
                'mode="messages" and its threadId.'
            )
    else:
        lines.append("- recall only reads this conversation.")
        if vector:
            lines.append(
                '- mode="search" with a query finds messages of this conversation by meaning; '
                "use the message id it returns as cursor."
            )
    text = "\n".join(lines)
    if custom and custom.strip():
        text += "\n\n" + custom.strip()
    return text


__all__ = [
    "ANCHORS",
    "DEFAULT_LIMIT",
    "DETAILS",
    "MODES",
    "PART_TYPES",
    "RecallScope",
    "retrieval_instructions",
    "tool_schema",
]

"""The ``recall`` tool: lets the actor read the raw messages behind its observations
(``retrieval``, seed "Tool de rappel", om-reference §8).

Three modes, with the seed's parameters and return shapes:

* ``messages`` (default): page through a thread from a ``cursor`` message id (e.g. the start or
  end of an observation group's ``range``), from ``threadId``'s first message, or from the
  current thread's ``anchor`` (``start``/``end``). Positive ``page`` reads forward, negative
  backward, 0 counts as 1. The cursor message itself is included in both directions, so
  ``cursor=startId, page=1`` begins with the group's first message and ``cursor=endId, page=-1``
  ends with its last one (the reference starts strictly after/before the cursor). ``detail``
  ``low`` lists every message with short, indexed parts; ``high`` shows one part in full with
  continuation hints; ``partIndex`` shows one part of the cursor message in full.
* ``threads``: the resource's threads (newest first, ``page`` counted from 0), the current one
  marked ``← current``, optionally ``before``/``after`` a date.
* ``search``: messages ranked by a :class:`SearchIndex` (keyword BM25 or embeddings); only when
  one is configured (``retrieval.vector``).

Scope ``thread`` confines everything to the current thread; ``resource`` allows the resource's
other threads. Bad parameters come back as ``{"error": "…"}`` so the agent can correct itself.
Messages made only of ``data-*`` parts are invisible. The whole ``messages`` text is capped at
:data:`OUTPUT_TOKEN_CAP` tokens (``truncated``, ``tokenOffset``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping
from typing import Any

from omlab.engine.attachment_tokens import is_image_part
from omlab.engine.messages import Message, Part, utc
from omlab.engine.observation_groups import parse_range
from omlab.engine.recall_format import (
    ELLIPSIS,
    LOW_TEXT_CHARS,
    MessageView,
    cut_chars,
    low_message,
    message_header,
    part_matches,
    prefix_within,
    pretty,
    stamp,
    thread_date,
)
from omlab.engine.recall_params import (
    RecallError,
    choice_param,
    date_param,
    integer_param,
    normalise_params,
    string_param,
)
from omlab.engine.recall_schema import (
    ANCHORS,
    DEFAULT_LIMIT,
    DETAILS,
    MODES,
    PART_TYPES,
    RecallScope,
    tool_schema,
)
from omlab.engine.recall_search import SearchIndex, searchable_text
from omlab.engine.storage import Storage
from omlab.tokens.tokenx import estimate_token_count

HIGH_RESULT_TOKENS = 4_000
OUTPUT_TOKEN_CAP = 8_000


# --- the tool ----------------------------------------------------------------------------------


class RecallTool:
    """The ``recall`` tool over a :class:`~omlab.engine.storage.Storage`.

    Args:
        storage: where threads and messages live.
        scope: ``thread`` (only ``current_thread_id``) or ``resource`` (every thread of
            ``resource_id``).
        current_thread_id: the thread the agent is in (``threadId: "current"``).
        resource_id: the user whose threads may be read (resource scope).
        search_index: enables ``mode: "search"``.
        token_count: the estimator behind the result and output caps.

    Call it as ``await tool(**params)`` or ``tool.run(params)``; both return the reply dict.
    """

    name = "recall"

    def __init__(
        self,
        storage: Storage,
        *,
        scope: RecallScope = "resource",
        current_thread_id: str,
        resource_id: str | None = None,
        search_index: SearchIndex | None = None,
        token_count: Callable[[str], int] = estimate_token_count,
    ) -> None:
        if scope not in ("thread", "resource"):
            raise ValueError(f"retrieval.scope must be 'thread' or 'resource', got {scope!r}")
        if not current_thread_id:
            raise ValueError("RecallTool needs the current thread id")
        self.storage = storage
        self.scope: RecallScope = scope
        self.current_thread_id = current_thread_id
        self.resource_id = resource_id
        self.search_index = search_index
        self.token_count = token_count

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI function-tool schema for this tool's scope and search availability."""
        return tool_schema(self.scope, vector=self.search_index is not None)

    async def __call__(self, **params: Any) -> dict[str, Any]:
        return self.run(params)

    def run(self, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Answer one recall request (see the module docstring); errors come back as
        ``{"error": message, …}``."""
        try:
            given = normalise_params(params or {})
            mode = given.get("mode", "messages")
            if mode not in MODES:
                raise RecallError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
            if mode == "threads":
                return self._threads(given)
            if mode == "search":
                return self._search(given)
            return self._messages(given)
        except RecallError as err:
            return {"error": str(err), **err.fields}

    # ------------------------------------------------------------------ thread access

    def _check_thread(self, thread_id: str, via: str) -> None:
        if thread_id == self.current_thread_id:
            return
        if self.scope == "thread":
            raise RecallError(f"{via} points to another thread; recall is limited to the current thread here")
        thread = self.storage.get_thread(thread_id)
        if thread is None or (self.resource_id is not None and thread.resource_id != self.resource_id):
            raise RecallError(f'unknown thread {thread_id!r}; use mode "threads" to list the available threads')

    def _visible_messages(self, thread_id: str) -> list[Message]:
        messages = [m for m in self.storage.get_messages(thread_id) if m.visible_parts()]
        messages.sort(key=lambda m: (utc(m.created_at), m.id))
        return messages

    def _range_hint(self, cursor: str) -> RecallError:
        pieces = [p for p in cursor.split(",") if p.strip()]
        start, _ = self._split_range(pieces[0])
        _, end = self._split_range(pieces[-1])
        return RecallError(
            f"cursor must be ONE message id, but {cursor!r} is an observation-group range. Use its start "
            f"id {start!r} (cursor={start!r}, page=1 reads the group forward) or its end id {end!r} "
            f"(cursor={end!r}, page=-1 reads back from its end).",
            startId=start,
            endId=end,
        )

    def _split_range(self, text: str) -> tuple[str, str]:
        text = text.strip()
        for index, char in enumerate(text):
            if char == ":" and self.storage.get_message(text[:index]) and self.storage.get_message(text[index + 1 :]):
                return text[:index], text[index + 1 :]
        return parse_range(text)

    # ------------------------------------------------------------------ messages

    def _messages(self, p: dict[str, Any]) -> dict[str, Any]:
        detail = choice_param(p, "detail", DETAILS, "low")
        anchor = choice_param(p, "anchor", ANCHORS, "start")
        limit = integer_param(p, "limit", DEFAULT_LIMIT, minimum=1)
        page = integer_param(p, "page", 1) or 1
        part_type = choice_param(p, "partType", PART_TYPES, None)
        tool_name = string_param(p, "toolName")
        part_index = integer_param(p, "partIndex", None, minimum=0)
        cursor = string_param(p, "cursor")
        thread_param = string_param(p, "threadId")
        if thread_param == "current":
            thread_param = self.current_thread_id

        cursor_message: Message | None = None
        if cursor is not None:
            cursor_message = self.storage.get_message(cursor)
            if cursor_message is None:
                if ":" in cursor:
                    raise self._range_hint(cursor)
                raise RecallError(
                    f"no message with id {cursor!r}; cursor must be a message id, e.g. from a group range"
                )
            if cursor_message.thread_id is None:
                raise RecallError(f"message {cursor!r} belongs to no thread")
            if thread_param is not None and thread_param != cursor_message.thread_id:
                raise RecallError(
                    f"cursor {cursor!r} is not in thread {thread_param!r}; drop one of cursor and threadId"
                )
            thread_id = cursor_message.thread_id
            self._check_thread(thread_id, f"cursor {cursor!r}")
        elif thread_param is not None:
            thread_id = thread_param
            self._check_thread(thread_id, f"threadId {thread_id!r}")
        else:
            thread_id = self.current_thread_id

        messages = self._visible_messages(thread_id)
        base = {"threadId": thread_id, "limit": limit, "detail": detail}
        if part_index is not None:
            if cursor_message is None:
                raise RecallError("partIndex needs cursor: the id of the message whose part you want")
            return self._cap({**base, **self._single_part(messages, cursor_message, part_index, page)})

        views = [
            MessageView(
                m,
                [(i, part) for i, part in enumerate(m.visible_parts()) if part_matches(part, part_type, tool_name)],
            )
            for m in messages
        ]
        views = [v for v in views if v.parts]
        keys = [v.key for v in views]
        count_all = len(views)
        if cursor_message is not None:
            cursor_key = (utc(cursor_message.created_at), cursor_message.id)
            if page > 0:
                lo = min(bisect_left(keys, cursor_key) + (page - 1) * limit, count_all)
                hi = min(lo + limit, count_all)
            else:
                hi = max(bisect_right(keys, cursor_key) - (-page - 1) * limit, 0)
                lo = max(hi - limit, 0)
            backward = page < 0
            cursor_id = cursor_message.id
        else:
            number = abs(page)
            if anchor == "start":
                lo = min((number - 1) * limit, count_all)
                hi = min(lo + limit, count_all)
            else:
                hi = max(count_all - (number - 1) * limit, 0)
                lo = max(hi - limit, 0)
            backward = anchor == "end"
            cursor_id = (views[0] if anchor == "start" else views[-1]).message.id if views else None
        window = views[lo:hi]
        reply: dict[str, Any] = {**base, "cursor": cursor_id, "page": page}
        if detail == "low" or not window:
            text = "\n\n".join(low_message(v, part_type) for v in window)
            if not window:
                if count_all:
                    text = "No messages on this page."
                else:
                    text = "No messages match partType/toolName." if part_type or tool_name else "No messages found."
            reply.update(messages=text, count=len(window), hasNextPage=hi < count_all, hasPrevPage=lo > 0)
            return self._cap(reply)
        shown = window[-1] if backward else window[0]
        position = keys.index(shown.key)
        index, part = shown.parts[0]
        later = [i for i, _ in shown.parts[1:]]
        if backward:
            neighbour = views[position - 1] if position > 0 else None
        else:
            neighbour = views[position + 1] if position + 1 < count_all else None
        hints = []
        if later:
            hints.append(f"next part: partIndex={later[0]} (cursor={shown.message.id})")
        if neighbour is not None:
            hints.append(f"next message: cursor={neighbour.message.id}" + (", page=-1" if backward else ""))
        text = self._high_message(shown.message, index, part, part_type, hints)
        reply.update(messages=text, count=1, hasNextPage=position + 1 < count_all, hasPrevPage=position > 0)
        return self._cap(reply)

    def _single_part(self, messages: list[Message], message: Message, part_index: int, page: int) -> dict[str, Any]:
        parts = message.visible_parts()
        if not parts:
            raise RecallError(f"message {message.id!r} has no visible parts")
        if part_index >= len(parts):
            raise RecallError(f"message {message.id!r} has {len(parts)} part(s): partIndex 0 to {len(parts) - 1}")
        ids = [m.id for m in messages]
        position = ids.index(message.id) if message.id in ids else -1
        hints = []
        if part_index + 1 < len(parts):
            hints.append(f"next part: partIndex={part_index + 1} (cursor={message.id})")
        if 0 <= position < len(ids) - 1:
            hints.append(f"next message: cursor={ids[position + 1]}")
        text = self._high_message(message, part_index, parts[part_index], None, hints)
        return {
            "messages": text,
            "count": 1,
            "cursor": message.id,
            "page": page,
            "hasNextPage": 0 <= position < len(ids) - 1,
            "hasPrevPage": position > 0,
        }

    def _high_message(self, message: Message, index: int, part: Part, part_type: str | None, hints: list[str]) -> str:
        total = len(message.visible_parts())
        lines = [
            f"{message_header(message)} part {index + 1} of {total}",
            f"[p{index}] {self._high_part(part, part_type)}",
        ]
        lines.extend(hints)
        return "\n".join(lines)

    def _high_part(self, part: Part, part_type: str | None) -> str:
        kind = part.type
        if kind == "text":
            return part.text or ""
        if kind == "reasoning":
            return f"[Reasoning]\n{part.text or ''}"
        if kind == "tool-invocation":
            name = part.tool_name or "tool"
            pieces = []
            if part_type != "tool-result":
                args = pretty(part.args) if part.args is not None else "{}"
                pieces.append(f"[Tool Call: {name}]\n{self._cap_tokens(args, HIGH_RESULT_TOKENS)}")
            if part_type != "tool-call":
                if part.state == "result":
                    pieces.append(f"[Tool Result: {name}]\n{self._cap_tokens(pretty(part.result), HIGH_RESULT_TOKENS)}")
                elif part.state in ("output-error", "output-denied"):
                    label = "Tool Error" if part.state == "output-error" else "Tool Denied"
                    pieces.append(f"[{label}: {name}] {part.error_text or ''}".rstrip())
            return "\n".join(pieces)
        if kind in ("image", "file"):
            label = "Image" if is_image_part(part) else "File"
            details = ", ".join(
                x for x in (part.mime_type, f"{part.size_bytes} bytes" if part.size_bytes else None) if x
            )
            url = part.data if isinstance(part.data, str) and part.data.startswith(("http://", "https://")) else None
            return (
                f"[{label}: {part.filename or part.mime_type or 'attachment'}]"
                + (f" ({details})" if details else "")
                + (f" {url}" if url else "")
            )
        return pretty({"type": part.type, "text": part.text})

    def _cap_tokens(self, text: str, limit: int) -> str:
        tokens = self.token_count(text)
        if tokens <= limit:
            return text
        kept = prefix_within(text, limit, self.token_count)
        return f"{kept}{ELLIPSIS} [about {tokens - self.token_count(kept)} more tokens not shown]"

    def _cap(self, reply: dict[str, Any]) -> dict[str, Any]:
        text = reply.get("messages", "")
        tokens = self.token_count(text)
        if tokens > OUTPUT_TOKEN_CAP:
            kept = prefix_within(text, OUTPUT_TOKEN_CAP, self.token_count)
            reply["messages"] = kept + f"\n{ELLIPSIS} [output truncated: page with a smaller limit or use partIndex]"
            reply["truncated"] = True
            reply["tokenOffset"] = tokens - self.token_count(kept)
        return reply

    # ------------------------------------------------------------------ threads

    def _threads(self, p: dict[str, Any]) -> dict[str, Any]:
        page = integer_param(p, "page", 0, minimum=0)
        limit = integer_param(p, "limit", DEFAULT_LIMIT, minimum=1)
        before = date_param(p, "before")
        after = date_param(p, "after")
        if self.scope == "thread":
            thread = self.storage.get_thread(self.current_thread_id)
            threads = [thread] if thread is not None else []
        else:
            if self.resource_id is None:
                raise RecallError("no resource id is known, so other threads cannot be listed")
            threads = list(self.storage.list_threads(self.resource_id))
        if before is not None:
            threads = [t for t in threads if utc(t.created_at) < before]
        if after is not None:
            threads = [t for t in threads if utc(t.created_at) > after]
        threads.sort(key=lambda t: (utc(t.created_at), t.id), reverse=True)
        shown = threads[page * limit : (page + 1) * limit]
        lines = []
        for thread in shown:
            title = (thread.title or "").strip() or "(untitled)"
            line = (
                f"- **{title}** — id: `{thread.id}` · created {thread_date(thread.created_at)} · "
                f"updated {thread_date(thread.updated_at)}"
            )
            if thread.id == self.current_thread_id:
                line += " ← current"
            lines.append(line)
        text = "\n".join(lines) if lines else "No threads found."
        return {
            "threads": text,
            "count": len(shown),
            "page": page,
            "hasMore": (page + 1) * limit < len(threads),
        }

    # ------------------------------------------------------------------ search

    def _search(self, p: dict[str, Any]) -> dict[str, Any]:
        if self.search_index is None:
            raise RecallError(
                'search is not available here (semantic recall is off); use mode "threads" and "messages" instead'
            )
        query = string_param(p, "query")
        if not query:
            raise RecallError('mode "search" needs a query')
        limit = integer_param(p, "limit", DEFAULT_LIMIT, minimum=1)
        wanted = limit if self.scope == "resource" else max(limit * 5, 50)
        hits = []
        for message_id, thread_id, score in self.search_index.search(query, wanted, self.resource_id):
            if self.scope == "thread" and thread_id != self.current_thread_id:
                continue
            message = self.storage.get_message(message_id)
            if message is None or not message.visible_parts():
                continue
            hits.append((message, thread_id, score))
            if len(hits) == limit:
                break
        if not hits:
            return {"results": "No matching messages.", "count": 0}
        by_thread: dict[str, list[tuple[Message, float]]] = {}
        for message, thread_id, score in hits:
            by_thread.setdefault(thread_id, []).append((message, score))
        blocks = []
        for thread_id, found in by_thread.items():
            thread = self.storage.get_thread(thread_id)
            title = (thread.title if thread is not None else None) or "(untitled)"
            current = " ← current" if thread_id == self.current_thread_id else ""
            lines = [f"### {title} — thread id: `{thread_id}`{current}"]
            for message, score in found:
                preview = cut_chars(searchable_text(message), LOW_TEXT_CHARS)
                lines.append(
                    f"- score {score:.3f} · {message.role} ({stamp(message.created_at)}): {preview}\n"
                    f"  cursor: `{message.id}`"
                )
            blocks.append("\n".join(lines))
        return {"results": "\n\n".join(blocks), "count": len(hits)}


__all__ = ["OUTPUT_TOKEN_CAP", "RecallError", "RecallTool"]

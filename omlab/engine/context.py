"""The context the actor model receives (om-reference.md §4.6).

Order: the memory prompt and its instructions; ``<observations>``; one system message per
cache-stable chunk of the log (split at message boundaries, 🟡/🟢 removed, relative times computed
against ``current_date``); ``</observations>``; the current task and the suggested response (after
the chunks on purpose, so their churn does not bust a prompt cache); a continuation reminder; then
the raw messages not yet observed. omlab closes the ``<observations>`` tag the reference leaves open.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from omlab.engine.messages import Message
from omlab.engine.observation_groups import render_groups_for_context
from omlab.engine.observation_text import optimize_for_context, split_at_boundaries
from omlab.engine.prompts import CONTEXT_INSTRUCTIONS, CONTEXT_PROMPT, CONTINUATION_REMINDER
from omlab.engine.reference_relative_time import add_reference_relative_time
from omlab.engine.relative_time import add_relative_time

ChatMessage = dict[str, Any]


def observation_system_messages(
    active_observations: str,
    *,
    current_date: datetime,
    current_task: str | None = None,
    suggested_response: str | None = None,
    extra_instructions: str | None = None,
    groups: bool = False,
    reference: bool = False,
) -> list[ChatMessage]:
    """The system messages that carry the observation log.

    ``groups``: the log holds retrieval-mode observation groups, rendered as headings with their
    message ranges for the recall tool. ``reference``: dates are annotated exactly as the
    reference does (``compat="reference"``), not with omlab's wider reading. With no log yet, only ``extra_instructions`` (the recall
    guidance) is sent, so the actor can browse raw history from the first message."""
    if not active_observations.strip():
        return [_system(extra_instructions)] if extra_instructions else []
    prompt = f"{CONTEXT_PROMPT}\n\n{CONTEXT_INSTRUCTIONS}"
    if extra_instructions:
        prompt += f"\n\n{extra_instructions}"
    out: list[ChatMessage] = [_system(prompt), _system("<observations>")]
    text = render_groups_for_context(active_observations) if groups else active_observations
    annotate = add_reference_relative_time if reference else add_relative_time
    rendered = annotate(optimize_for_context(text), current_date)
    for chunk in split_at_boundaries(rendered):
        if chunk.strip():
            out.append(_system(chunk.strip()))
    out.append(_system("</observations>"))
    if current_task:
        out.append(_system(f"<current-task>\n{current_task}\n</current-task>"))
    if suggested_response:
        out.append(_system(f"<suggested-response>\n{suggested_response}\n</suggested-response>"))
    out.append(_system(CONTINUATION_REMINDER))
    return out


def message_to_chat(message: Message) -> ChatMessage | None:
    """A stored message as an OpenAI-style chat message (``None`` if nothing is visible), with the
    speaker's ``name`` when the message has one.

    Tool activity is rendered inline as text so any chat model can read it."""
    pieces: list[str] = []
    for part in message.parts:
        if part.is_data or part.type == "reasoning":
            continue
        if part.type == "text" and part.text:
            pieces.append(part.text)
        elif part.type == "tool-invocation":
            args = part.args if isinstance(part.args, str) else json.dumps(part.args, ensure_ascii=False, default=str)
            line = f"[tool call {part.tool_name}({args})"
            if part.state == "result":
                result = (
                    part.result
                    if isinstance(part.result, str)
                    else json.dumps(part.result, ensure_ascii=False, default=str)
                )
                line += f" -> {result}"
            elif part.error_text:
                line += f" -> error: {part.error_text}"
            pieces.append(line + "]")
        elif part.type in ("image", "file"):
            pieces.append(f"[{part.type}: {part.filename or part.mime_type or 'attachment'}]")
    if not pieces:
        return None
    role = message.role if message.role in ("user", "assistant", "system") else "assistant"
    chat: ChatMessage = {"role": role, "content": "\n".join(pieces)}
    if message.name and role != "system":
        chat["name"] = message.name
    return chat


def build_actor_context(
    active_observations: str,
    unobserved: Sequence[Message],
    *,
    current_date: datetime,
    current_task: str | None = None,
    suggested_response: str | None = None,
    extra_instructions: str | None = None,
    groups: bool = False,
    reference: bool = False,
) -> list[ChatMessage]:
    """Everything the actor sees: the memory system messages, then the raw unobserved messages."""
    out = observation_system_messages(
        active_observations,
        current_date=current_date,
        current_task=current_task,
        suggested_response=suggested_response,
        extra_instructions=extra_instructions,
        groups=groups,
        reference=reference,
    )
    for message in unobserved:
        chat = message_to_chat(message)
        if chat is not None:
            out.append(chat)
    return out


def _system(content: str) -> ChatMessage:
    return {"role": "system", "content": content}

"""The actor with the recall tool: ask, run the tool calls it makes, ask again.

When the engine runs with ``retrieval`` on, the harness gives the actor OM's ``recall`` tool
(``ObservationalMemory.recall_tool``) so it can page through the raw messages behind an
observation group before answering. Models that do not call tools (the offline reader) simply
answer on the first round.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from omlab.llm.types import ModelRequest, ModelResponse

#: rounds of tool calls before the actor must answer
MAX_TOOL_ROUNDS = 4


async def complete_with_tool(
    client: Any, request: ModelRequest, tool: Any | None, *, max_rounds: int = MAX_TOOL_ROUNDS
) -> tuple[ModelResponse, list[dict[str, Any]]]:
    """Run ``request`` through ``client``; while the reply asks for ``recall``, answer the calls
    with ``tool.run`` and ask again. Returns the final response and the tool exchanges made
    (``[{"name", "arguments", "result"}]``). After ``max_rounds`` the tool is withdrawn, so the
    model has to answer."""
    if tool is None:
        return await client.complete(request), []
    request = dataclasses.replace(request, tools=[tool.schema])
    messages = list(request.messages)
    exchanges: list[dict[str, Any]] = []
    for round_ in range(max_rounds + 1):
        response = await client.complete(request)
        calls = response.tool_calls
        if not calls:
            return response, exchanges
        messages.append(
            {
                "role": "assistant",
                "content": response.text or None,
                "tool_calls": [
                    {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                    for c in calls
                ],
            }
        )
        for call in calls:
            result = _run(tool, call)
            exchanges.append({"name": call["name"], "arguments": call["arguments"], "result": result})
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": json.dumps(result, ensure_ascii=False, default=str),
                }
            )
        last_round = round_ + 1 >= max_rounds
        request = dataclasses.replace(request, messages=list(messages), tools=None if last_round else request.tools)
    return response, exchanges


def _run(tool: Any, call: dict[str, Any]) -> dict[str, Any]:
    if call.get("name") != "recall":
        return {"error": f"unknown tool {call.get('name')!r}; the only tool is 'recall'"}
    try:
        arguments = json.loads(call.get("arguments") or "{}")
    except json.JSONDecodeError as error:
        return {"error": f"arguments are not valid JSON: {error}"}
    if not isinstance(arguments, dict):
        return {"error": "arguments must be a JSON object"}
    return tool.run(arguments)

"""The actor's recall-tool loop, and tool calls parsed from an OpenAI-shaped reply."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from omlab import ObservationalMemory
from omlab.bench.run.tool_loop import complete_with_tool
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.scheduler import VirtualScheduler
from omlab.llm.litellm_backend import build_litellm_kwargs, parse_completion
from omlab.llm.spec import ResolvedAttempt
from omlab.llm.types import ModelRequest, ModelResponse, Usage

START = datetime(2025, 4, 1, 9, tzinfo=UTC)


class ScriptedClient:
    """First asks for recall, then answers with what the tool returned."""

    def __init__(self, arguments: dict):
        self.arguments = arguments
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if len(self.requests) == 1:
            call = {"id": "call-1", "name": "recall", "arguments": json.dumps(self.arguments)}
            return ModelResponse("", Usage(10, 5), "test/actor", provider_metadata={"tool_calls": [call]})
        tool_reply = json.loads(request.messages[-1]["content"])
        return ModelResponse(f"seen {tool_reply['count']} messages", Usage(20, 5), "test/actor")


async def _memory_with_groups() -> ObservationalMemory:
    clock = VirtualClock(START)
    om = ObservationalMemory(
        {
            "retrieval": True,
            "observation": {"model": "omlab/observer", "messageTokens": 200, "bufferTokens": False},
            "reflection": {"model": "omlab/reflector", "observationTokens": 50_000},
        },
        scheduler=VirtualScheduler(clock),
    )
    for i in range(20):
        message = Message.of(
            "user" if i % 2 == 0 else "assistant",
            f"Message {i}: my cat Miso likes the balcony and tuna on Fridays.",
            START + timedelta(minutes=i),
            id=f"m{i:02d}",
        )
        clock.set(message.created_at)
        await om.add_messages("t", [message])
    return om


async def test_the_actor_can_call_recall_and_answer_from_its_result():
    om = await _memory_with_groups()
    tool = om.recall_tool("t")
    client = ScriptedClient({"cursor": "m00", "limit": 3})
    request = ModelRequest(model="test/actor", messages=[{"role": "user", "content": "What does Miso like?"}])
    response, exchanges = await complete_with_tool(client, request, tool)
    assert response.text == "seen 3 messages"
    assert exchanges[0]["result"]["count"] == 3 and "[m00]" in exchanges[0]["result"]["messages"]
    second = client.requests[1]
    assert second.messages[-2]["tool_calls"][0]["function"]["name"] == "recall"
    assert second.messages[-1]["role"] == "tool" and second.tools == [tool.schema]


async def test_bad_tool_arguments_come_back_as_errors_and_rounds_are_bounded():
    class Looping:
        calls = 0

        async def complete(self, request):
            Looping.calls += 1
            if request.tools:
                return ModelResponse(
                    "",
                    Usage(1, 1),
                    "t",
                    provider_metadata={
                        "tool_calls": [{"id": f"c{Looping.calls}", "name": "recall", "arguments": "{not json"}]
                    },
                )
            return ModelResponse("final", Usage(1, 1), "t")

    om = await _memory_with_groups()
    response, exchanges = await complete_with_tool(
        Looping(),
        ModelRequest(model="t", messages=[{"role": "user", "content": "q"}]),
        om.recall_tool("t"),
        max_rounds=2,
    )
    assert response.text == "final" and len(exchanges) == 2
    assert all("not valid JSON" in e["result"]["error"] for e in exchanges)


def test_tool_calls_are_parsed_and_tools_sent():
    reply = {
        "id": "r1",
        "model": "gpt-4o",
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call-9",
                            "type": "function",
                            "function": {"name": "recall", "arguments": '{"cursor": "m01"}'},
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3},
    }
    text, usage, finish, metadata = parse_completion("openai/gpt-4o", reply)
    assert text == "" and finish == "tool_calls" and usage.output_tokens == 3
    assert metadata["tool_calls"] == [{"id": "call-9", "name": "recall", "arguments": '{"cursor": "m01"}'}]
    request = ModelRequest(
        model="openai/gpt-4o", messages=[], tools=[{"type": "function", "function": {"name": "recall"}}]
    )
    kwargs = build_litellm_kwargs(ResolvedAttempt("openai/gpt-4o"), request, None)
    assert kwargs["tools"] == request.tools

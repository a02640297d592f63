"""The recorder's mock Observer and Reflector (scripts/mastra_recorder/record.mjs), in Python.

The same contract as ../shared/tools/mastra-replay's mock: the Observer writes one
``* 🔴 (HH:MM) User said: <first 60 UTF-16 units>`` line per message the engine handed it (text
parts joined with a space, whitespace collapsed), the Reflector keeps the non-blank lines whose
index is a multiple of ``max(2, level + 1)``. With these, omlab's reference mode and
``@mastra/memory`` 1.31.0 must write the same observation log.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from omlab.engine.memory import ObservationalMemory
from omlab.engine.messages import Message
from omlab.engine.prompts import COMPRESSION_GUIDANCE, REFLECTION_HEADER
from omlab.llm.offline import register_offline_model
from omlab.llm.offline.base import OfflineResult, message_text

OBSERVER = "recorder-mock-observer"
REFLECTOR = "recorder-mock-reflector"


@dataclass
class Batches:
    """The message lists the engine handed to the Observer, one per call."""

    calls: list[list[Message]] = field(default_factory=list)


def _first_60(text: str) -> str:
    collapsed = re.sub(r"\s+", " ", text).strip()
    return collapsed.encode("utf-16-le")[:120].decode("utf-16-le", errors="ignore")


def _usage(messages: list[dict[str, Any]], output: str) -> tuple[int, int]:
    return math.ceil(sum(len(message_text(m)) for m in messages) / 4), math.ceil(len(output) / 4)


def _observer(batches: Batches) -> type:
    class RecorderMockObserver:
        name = OBSERVER

        def generate(self, messages: list[dict[str, Any]], **_: Any) -> OfflineResult:
            lines = ["<observations>"]
            for message in batches.calls[-1]:
                text = _first_60(" ".join(p.text for p in message.parts if p.type == "text" and p.text))
                if text:
                    who = "User" if message.role == "user" else "Assistant"
                    lines.append(f"* 🔴 ({message.created_at:%H:%M}) {who} said: {text}")
            output = "\n".join([*lines, "</observations>"])
            return OfflineResult(output, *_usage(messages, output))

    return RecorderMockObserver


class RecorderMockReflector:
    name = REFLECTOR

    def generate(self, messages: list[dict[str, Any]], **_: Any) -> OfflineResult:
        prompt = message_text(messages[-1])
        body = prompt.split(f"{REFLECTION_HEADER}\n\n", 1)[1].split("\n\n---\n\n", 1)[0]
        level = max((lvl for lvl, text in COMPRESSION_GUIDANCE.items() if text and text in prompt), default=0)
        lines = [line for line in body.split("\n") if line.strip()]
        kept = [line for i, line in enumerate(lines) if i % max(2, level + 1) == 0]
        output = "<observations>\n" + "\n".join(kept) + "\n</observations>"
        return OfflineResult(output, *_usage(messages, output))


def mock_models(options: dict[str, Any]) -> tuple[dict[str, Any], Batches]:
    """``options`` with the mock models named, and the batch capture the Observer reads."""
    batches = Batches()
    register_offline_model(OBSERVER, _observer(batches))
    register_offline_model(REFLECTOR, RecorderMockReflector)
    options = {**options, "observation": {**options.get("observation", {}), "model": f"omlab/{OBSERVER}"}}
    options["reflection"] = {**options.get("reflection", {}), "model": f"omlab/{REFLECTOR}"}
    return options, batches


def capture_batches(memory: ObservationalMemory, batches: Batches) -> None:
    """Record every message list ``memory``'s Observer is given (the mock Observer writes from it)."""
    observe = memory.observer.observe

    async def capturing(messages, **kwargs):
        batches.calls.append(list(messages))
        return await observe(messages, **kwargs)

    memory.observer.observe = capturing  # type: ignore[method-assign]

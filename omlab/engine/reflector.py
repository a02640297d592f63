"""The Reflector: condenses the observation log, escalating a compression ladder.

Levels 0-4 ask for progressively stronger compression (om-reference.md §2.8 step 7). Attempts
start at level 2 for ``gemini-2.5-flash`` models (faithful transcribers that need pressure), at 1
otherwise, and at 0 for a manual ``reflect()``; they stop at ``min(4, start + 3)``. An attempt is
accepted when its output is non-empty, not degenerate and below the target, or at the last level
when it is at least smaller than the input. Empty or degenerate output is never accepted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from omlab.engine.observation_text import parse_observer_output, strip_observation_group_tags
from omlab.engine.prompts import reflector_system_prompt, reflector_user_prompt
from omlab.llm.types import ModelRequest, ModelResponse, Usage


class ReflectionError(RuntimeError):
    """The Reflector produced nothing usable; the memory is left as it was."""


def start_level(model_name: str | None, *, manual: bool = False) -> int:
    if manual:
        return 0
    return 2 if model_name and "gemini-2.5-flash" in model_name else 1


@dataclass(slots=True)
class ReflectionAttempt:
    level: int
    tokens: int | None
    outcome: str  # accepted | too-large | empty | degenerate


@dataclass(slots=True)
class ReflectionResult:
    observations: str
    tokens: int
    met_target: bool
    suggested_response: str | None
    attempts: list[ReflectionAttempt]
    responses: list[ModelResponse] = field(default_factory=list)
    output: Any = None  # the parsed output of the chosen attempt (for extractors)

    @property
    def usage(self) -> Usage:
        return Usage(
            sum(r.usage.input_tokens for r in self.responses),
            sum(r.usage.output_tokens for r in self.responses),
        )

    @property
    def cost_usd(self) -> float | None:
        costs = [r.cost_usd for r in self.responses]
        return None if any(c is None for c in costs) else sum(costs)  # type: ignore[arg-type]

    @property
    def latency_s(self) -> float:
        return sum(r.latency_s for r in self.responses)


RetryListener = Callable[[int, int, int, int], Any]
"""Called between attempts with (input_tokens, output_tokens, target, next_level)."""


class ReflectorRunner:
    def __init__(
        self,
        *,
        model: Any,
        settings: Any,
        provider_options: dict | None,
        instruction: str | None,
        client: Any,
        count: Callable[[str], int],
        multi_thread: bool = False,
        sort_lines: bool = True,
    ) -> None:
        self.model = model
        #: order each date group's bullets by time (``compat="reference"`` keeps them as written)
        self.sort_lines = sort_lines
        self.settings = settings
        self.provider_options = provider_options
        self.client = client
        self.count = count
        self.instruction = instruction
        self.multi_thread = multi_thread
        self._systems: dict[tuple[tuple[str, str], ...], str] = {}

    def system_prompt(self, inline_items: Sequence[tuple[str, str]] = ()) -> str:
        key = tuple(inline_items)
        prompt = self._systems.get(key)
        if prompt is None:
            prompt = self._systems[key] = reflector_system_prompt(
                instruction=self.instruction, multi_thread=self.multi_thread, inline_extractors=key
            )
        return prompt

    async def reflect(
        self,
        observations: str,
        *,
        target: int,
        first_level: int,
        guidance: str | None = None,
        metadata: dict[str, Any] | None = None,
        context: dict[str, Any] | None = None,
        on_retry: RetryListener | None = None,
        inline_items: Sequence[tuple[str, str]] = (),
        inline_slugs: Sequence[str] = (),
        observation_tokens: int | None = None,
    ) -> ReflectionResult:
        """Condense ``observations`` below ``target`` tokens, from compression ``first_level`` up.

        ``observation_tokens``, when the caller has counted ``observations`` with this runner's
        counter already, saves counting them again (a reflection's input is the whole log)."""
        text = strip_observation_group_tags(observations)
        input_tokens = (
            observation_tokens if observation_tokens is not None and text == observations else self.count(text)
        )
        last_level = min(4, first_level + 3)
        attempts: list[ReflectionAttempt] = []
        responses: list[ModelResponse] = []
        best: tuple[str, int, str | None, Any] | None = None
        for level in range(first_level, last_level + 1):
            user = reflector_user_prompt(
                observations=text, target_tokens=target, input_tokens=input_tokens, level=level, guidance=guidance
            )
            request = ModelRequest(
                model=self.model,
                messages=[
                    {"role": "system", "content": self.system_prompt(inline_items)},
                    {"role": "user", "content": user},
                ],
                role="reflector",
                temperature=getattr(self.settings, "temperature", None),
                max_output_tokens=getattr(self.settings, "max_output_tokens", None),
                provider_options=self.provider_options,
                input_tokens=input_tokens,
                metadata={**(metadata or {}), "compressionLevel": level, "target": target},
                context=context or {},
            )
            response = await self.client.complete(request)
            responses.append(response)
            parsed = parse_observer_output(response.text, inline_slugs=inline_slugs, sort_lines=self.sort_lines)
            body = parsed.observations.strip()
            if parsed.degenerate:
                attempts.append(ReflectionAttempt(level, None, "degenerate"))
            elif not body:
                attempts.append(ReflectionAttempt(level, 0, "empty"))
            else:
                tokens = self.count(body)
                if best is None or tokens < best[1]:
                    best = (body, tokens, parsed.suggested_response, parsed)
                if tokens < target:
                    attempts.append(ReflectionAttempt(level, tokens, "accepted"))
                    return ReflectionResult(body, tokens, True, parsed.suggested_response, attempts, responses, parsed)
                attempts.append(ReflectionAttempt(level, tokens, "too-large"))
            if level < last_level and on_retry is not None:
                await _maybe_await(on_retry(input_tokens, attempts[-1].tokens or 0, target, level + 1))
        if best is None:
            raise ReflectionError(
                f"the Reflector returned empty or degenerate output at every level ({first_level}..{last_level}); "
                "the observation log was kept unchanged"
            )
        body, tokens, suggestion, parsed = best
        return ReflectionResult(body, tokens, False, suggestion, attempts, responses, parsed)


async def _maybe_await(value: Any) -> None:
    import inspect

    if inspect.isawaitable(value):
        await value


__all__: Sequence[str] = ("ReflectionError", "ReflectionResult", "ReflectorRunner", "start_level")

"""The Observer: turns raw messages into observation lines through one model call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from omlab.engine.attachments import observer_user_content
from omlab.engine.errors import unusable_output_error
from omlab.engine.messages import Message
from omlab.engine.observation_text import (
    ObserverOutput,
    ThreadOutputs,
    parse_multi_thread_output,
    parse_observer_output,
)
from omlab.engine.observer_window import prepare_previous_observations
from omlab.engine.prompts import observer_system_prompt, observer_user_prompt
from omlab.engine.temporal_markers import observer_view
from omlab.engine.transcript import format_history
from omlab.llm.types import ModelRequest, ModelResponse, Usage


@dataclass(slots=True)
class ObserverResult:
    output: ObserverOutput
    responses: list[ModelResponse]
    previous_observations: str
    truncated: bool
    prompt: list[dict[str, Any]] = field(repr=False, default_factory=list)

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


class ObserverRunner:
    """Builds the Observer request, calls the model and parses the answer.

    A degenerate answer (a repetition loop) or one with no observation text (empty, whitespace
    only, or nothing parseable) is retried once; a second one raises :class:`ObserverError`, so
    the cycle fails and its messages stay unobserved instead of being committed as no memory.
    """

    def __init__(
        self,
        *,
        model: Any,
        settings: Any,
        provider_options: dict | None,
        instruction: str | None,
        thread_title: bool,
        previous_observer_tokens: int | None,
        client: Any,
        observe_attachments: Any = True,
        sort_lines: bool = True,
    ) -> None:
        self.model = model
        self.settings = settings
        self.provider_options = provider_options
        self.instruction = instruction
        self.thread_title = thread_title
        self.previous_observer_tokens = previous_observer_tokens
        self.client = client
        self.observe_attachments = observe_attachments
        #: order each date group's bullets by time (``compat="reference"`` keeps them as written)
        self.sort_lines = sort_lines
        self._systems: dict[tuple[tuple[str, str], ...], str] = {}

    def system_prompt(self, inline_items: Sequence[tuple[str, str]] = ()) -> str:
        """The system prompt for a set of inline extractors (memoised: it rarely changes)."""
        key = tuple(inline_items)
        prompt = self._systems.get(key)
        if prompt is None:
            prompt = self._systems[key] = observer_system_prompt(
                instruction=self.instruction, thread_title=self.thread_title, inline_extractors=key
            )
        return prompt

    def build_prompt(
        self,
        messages: Sequence[Message],
        *,
        active_observations: str,
        buffered_reflection: str | None = None,
        reflected_line_count: int = 0,
        prior_metadata: Sequence[tuple[str, str]] = (),
        timezone: str = "UTC",
        buffering: bool = False,
        inline_items: Sequence[tuple[str, str]] = (),
    ) -> tuple[list[dict[str, Any]], str, bool]:
        previous, truncated = prepare_previous_observations(
            active_observations,
            budget=self.previous_observer_tokens,
            buffered_reflection=buffered_reflection,
            reflected_line_count=reflected_line_count,
        )
        user = observer_user_prompt(
            history=format_history(observer_view(messages), timezone=timezone),
            previous_observations=previous or None,
            truncated=truncated,
            prior_metadata=prior_metadata,
            buffering=buffering,
        )
        content = observer_user_content(user, messages, self.observe_attachments, self.model)
        prompt = [{"role": "system", "content": self.system_prompt(inline_items)}, {"role": "user", "content": content}]
        return prompt, previous, truncated

    async def observe(
        self,
        messages: Sequence[Message],
        *,
        input_tokens: int,
        active_observations: str,
        buffered_reflection: str | None = None,
        reflected_line_count: int = 0,
        prior_metadata: Sequence[tuple[str, str]] = (),
        timezone: str = "UTC",
        buffering: bool = False,
        metadata: dict[str, Any] | None = None,
        context: dict[str, Any] | None = None,
        inline_items: Sequence[tuple[str, str]] = (),
        inline_slugs: Sequence[str] = (),
    ) -> ObserverResult:
        prompt, previous, truncated = self.build_prompt(
            messages,
            active_observations=active_observations,
            buffered_reflection=buffered_reflection,
            reflected_line_count=reflected_line_count,
            prior_metadata=prior_metadata,
            timezone=timezone,
            buffering=buffering,
            inline_items=inline_items,
        )
        responses: list[ModelResponse] = []
        for attempt in (1, 2):
            request = ModelRequest(
                model=self.model,
                messages=prompt,
                role="observer",
                temperature=getattr(self.settings, "temperature", None),
                max_output_tokens=getattr(self.settings, "max_output_tokens", None),
                provider_options=self.provider_options,
                input_tokens=input_tokens,
                metadata={**(metadata or {}), "attempt": attempt},
                context=context or {},
                cache_salt=None if attempt == 1 else f"retry-{attempt}",
            )
            response = await self.client.complete(request)
            responses.append(response)
            output = parse_observer_output(response.text, inline_slugs=inline_slugs, sort_lines=self.sort_lines)
            if not output.degenerate and output.observations.strip():
                return ObserverResult(output, responses, previous, truncated, prompt)
        raise unusable_output_error(
            output.degenerate,
            f"the Observer produced {_unusable(output.degenerate)} output twice; nothing was committed",
        )

    async def observe_threads(
        self,
        threads: Sequence[tuple[str, Sequence[Message]]],
        *,
        input_tokens: int,
        active_observations: str,
        prior_by_thread: Sequence[tuple[str, Sequence[tuple[str, str]]]] = (),
        timezone: str = "UTC",
        metadata: dict[str, Any] | None = None,
        inline_items: Sequence[tuple[str, str]] = (),
        inline_slugs: Sequence[str] = (),
    ) -> tuple[ThreadOutputs, ObserverResult]:
        """The multi-thread Observer (resource scope): ``threads`` are ``(shown id, messages)``;
        the reply has one ``<thread id>`` block per thread, each with its own inline extractor
        sections (``inline_items`` asks for them, ``inline_slugs`` collects them). Degenerate
        output, or a reply with no observation text for any thread, is retried once."""
        previous, truncated = prepare_previous_observations(active_observations, budget=self.previous_observer_tokens)
        history = "\n".join(
            f'<thread id="{shown}">\n{format_history(observer_view(list(msgs)), timezone=timezone)}\n</thread>'
            for shown, msgs in threads
        )
        user = observer_user_prompt(
            history=history,
            previous_observations=previous or None,
            truncated=truncated,
            prior_by_thread=prior_by_thread,
        )
        all_messages = [m for _, msgs in threads for m in msgs]
        content = observer_user_content(user, all_messages, self.observe_attachments, self.model)
        key = ("multi", *inline_items)
        system = self._systems.get(key)  # type: ignore[call-overload]
        if system is None:
            system = self._systems[key] = observer_system_prompt(  # type: ignore[index]
                multi_thread=True,
                instruction=self.instruction,
                thread_title=self.thread_title,
                inline_extractors=tuple(inline_items),
            )
        prompt = [{"role": "system", "content": system}, {"role": "user", "content": content}]
        responses: list[ModelResponse] = []
        for attempt in (1, 2):
            response = await self.client.complete(
                ModelRequest(
                    model=self.model,
                    messages=prompt,
                    role="observer",
                    temperature=getattr(self.settings, "temperature", None),
                    max_output_tokens=getattr(self.settings, "max_output_tokens", None),
                    provider_options=self.provider_options,
                    input_tokens=input_tokens,
                    metadata={**(metadata or {}), "attempt": attempt, "multiThread": True},
                    cache_salt=None if attempt == 1 else f"retry-{attempt}",
                )
            )
            responses.append(response)
            outputs = parse_multi_thread_output(response.text, inline_slugs=inline_slugs, sort_lines=self.sort_lines)
            if not outputs.degenerate and any(o.observations.strip() for o in outputs.values()):
                summary = ObserverResult(
                    ObserverOutput(
                        observations="",
                        current_task=None,
                        suggested_response=None,
                        thread_title=None,
                        raw=response.text,
                    ),
                    responses,
                    previous,
                    truncated,
                    prompt,
                )
                return outputs, summary
        raise unusable_output_error(
            outputs.degenerate, f"the multi-thread Observer produced {_unusable(outputs.degenerate)} output twice"
        )


def _unusable(degenerate: bool) -> str:
    return "degenerate (repetitive)" if degenerate else "empty (no observation text)"

"""Types shared by everything that calls a model: requests, responses and the call log."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ChatMessage = dict[str, Any]
"""An OpenAI-style chat message: ``{"role": ..., "content": str | list[content parts]}``."""


@dataclass(slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(slots=True)
class ModelRequest:
    """What a caller asks of the model layer.

    ``model`` is any model spec: a ``provider/model`` string (``omlab/...`` for the built-in
    offline models), a ``ModelByInputTokens``, a list of ``ModelWithRetries`` (fallbacks) or a
    callable ``(context) -> spec`` resolved per call. ``input_tokens`` is the count used for
    ``ModelByInputTokens`` routing (the engine's estimate of the input that matters).
    """

    model: Any
    messages: list[ChatMessage]
    role: str = "actor"  # observer | reflector | extractor | actor | judge
    temperature: float | None = None
    max_output_tokens: int | None = None
    provider_options: dict[str, Any] | None = None
    input_tokens: int | None = None
    response_format: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    #: OpenAI-style function tools the model may call (``{"type": "function", "function": {...}}``)
    tools: list[dict[str, Any]] | None = None
    #: part of the response-cache key: a deliberate retry of the same prompt (e.g. after a
    #: degenerate reply) sets it so it is not answered from the cache with the same reply
    cache_salt: str | None = None


@dataclass(slots=True)
class ModelResponse:
    text: str
    usage: Usage
    model: str  # the resolved provider/model string that answered
    cost_usd: float | None = None
    latency_s: float = 0.0
    tier: int | None = None  # the ModelByInputTokens threshold that was picked, if any
    finish_reason: str | None = None
    provider_metadata: dict[str, Any] = field(default_factory=dict)
    cached: bool = False
    attempts: int = 1

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """Tool calls the model asked for: ``[{"id", "name", "arguments" (JSON text)}]``."""
        return list(self.provider_metadata.get("tool_calls") or [])


@dataclass(slots=True)
class ModelCall:
    """One entry of the call log: every call, successful or not."""

    call_id: str
    role: str
    requested_model: str
    resolved_model: str | None
    tier: int | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    latency_s: float
    started_at: float  # unix seconds (wall clock)
    attempts: int
    cached: bool
    error: str | None
    metadata: dict[str, Any] = field(default_factory=dict)
    #: the call's tokens priced with this client's price map, whether or not it was paid for: equal
    #: to ``cost_usd`` for a call sent to a provider; for a response-cache hit (``cost_usd`` 0.0)
    #: what the call would cost under this run's prices (never the cached entry's stored cost)
    configured_cost_usd: float | None = None
    #: the token count a ``ModelByInputTokens`` router picked the tier with (the request's
    #: ``input_tokens``: the new messages' tokens for the Observer, the observations' for the
    #: Reflector), not the prompt size in ``input_tokens``; None when the model was not routed
    routing_tokens: int | None = None
    #: the messages the call sent (the request's, as given) and the text it got back (None when it
    #: failed): what a run browser shows for the call
    prompt: list[ChatMessage] = field(default_factory=list)
    response: str | None = None

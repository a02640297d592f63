"""The one module that imports litellm: one chat request to a real provider, no retries.

Retries, deadlines, fallbacks and cost belong to :mod:`omlab.llm.client`; this module maps a
:class:`ResolvedAttempt` plus a :class:`ModelRequest` to ``litellm.acompletion`` keyword arguments
and parses the reply. litellm is imported on first call (it takes seconds) after
:func:`omlab.llm.env.prepare_environment`, so importing omlab never reaches the network.

Headers and ``api_key`` are passed to litellm and nowhere else: they are never logged, returned or
stored.

Settings precedence: the request's ``temperature``/``max_output_tokens``/``provider_options`` are the
caller's defaults; a fallback entry's ``model_settings``/``provider_options`` override them (an
entry is tuned for its model, e.g. a reasoning model that only accepts temperature 1).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from types import ModuleType
from typing import Any

from omlab.llm.spec import ResolvedAttempt, litellm_model_name, merge_provider_options, split_model
from omlab.llm.types import ModelRequest, Usage

# Mastra/AI-SDK call settings (camelCase) and their litellm names.
_SETTING_NAMES = {
    "temperature": "temperature",
    "maxOutputTokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "maxTokens": "max_tokens",
    "max_tokens": "max_tokens",
    "topP": "top_p",
    "topK": "top_k",
    "stopSequences": "stop",
    "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty",
}

# The client owns retries and timeouts; an entry cannot override them through its settings.
_RESERVED_SETTINGS = {
    "maxRetries",
    "max_retries",
    "num_retries",
    "timeout",
    "abortSignal",
    "model",
    "messages",
    "stream",
}

_GOOGLE_NAMESPACES = {"google", "gemini", "vertex", "vertex_ai", "google-vertex", "googleVertex"}

# Keys of provider_options that hold one provider's options; only the model's own one applies.
_KNOWN_NAMESPACES = _GOOGLE_NAMESPACES | {
    "openai",
    "anthropic",
    "azure",
    "bedrock",
    "xai",
    "groq",
    "mistral",
    "deepseek",
    "openrouter",
    "cohere",
    "togetherai",
    "together_ai",
    "fireworks",
    "fireworks_ai",
    "perplexity",
    "cerebras",
    "ollama",
    "omlab",
}

_MALFORMED_MARKERS = ("no 'choices'", "expecting value", "jsondecodeerror", "invalid response object")


class MalformedResponseError(RuntimeError):
    """A provider reply without choices or without message content (worth one more try)."""

    is_retryable = True


@cache
def load_litellm() -> ModuleType:
    """Import and configure litellm once (seconds on first call; callers do it outside timeouts)."""
    from omlab.llm.env import prepare_environment

    prepare_environment()
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners in our logs
    return litellm


def build_litellm_kwargs(attempt: ResolvedAttempt, request: ModelRequest, timeout_s: float | None) -> dict[str, Any]:
    """The ``litellm.acompletion`` keyword arguments for one attempt (pure; no litellm import)."""
    kwargs: dict[str, Any] = {
        "model": litellm_model_name(attempt.model),
        "messages": request.messages,
        # Retries are ours: litellm's and the openai SDK's own retries would multiply them.
        "num_retries": 0,
        "max_retries": 0,
    }
    if timeout_s is not None:
        kwargs["timeout"] = timeout_s
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.max_output_tokens is not None:
        kwargs["max_tokens"] = request.max_output_tokens
    if request.response_format is not None:
        kwargs["response_format"] = request.response_format
    if request.tools:
        kwargs["tools"] = request.tools
    options = merge_provider_options(request.provider_options, attempt.provider_options)
    kwargs.update(provider_option_kwargs(attempt.model, options))
    kwargs.update(model_setting_kwargs(attempt.model_settings))
    if attempt.headers:
        kwargs["extra_headers"] = {**kwargs.get("extra_headers", {}), **attempt.headers}
    return kwargs


def model_setting_kwargs(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Map an entry's ``model_settings`` to litellm arguments.

    AI-SDK names (``maxOutputTokens``, ``topP``…) are translated; snake_case keys pass through
    verbatim, which is how ``api_base``, ``api_key``, ``api_version`` or litellm's ``mock_response``
    reach litellm.
    """
    kwargs: dict[str, Any] = {}
    for key, value in settings.items():
        if key in _RESERVED_SETTINGS:
            raise ValueError(
                f"model_settings key {key!r} is managed by omlab's client "
                "(set max_retries on ModelWithRetries, timeouts on RetryPolicy)"
            )
        if value is None:
            continue
        kwargs[_SETTING_NAMES.get(key, _snake_case(key))] = value
    return kwargs


def provider_option_kwargs(model: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Map AI-SDK style ``providerOptions`` to litellm arguments for ``model``.

    Namespaced options (``{"google": {"thinkingConfig": {...}}}``) apply only to their provider;
    top-level keys that are not a provider namespace pass through as litellm arguments.
    """
    provider, _ = split_model(model)
    own = _own_namespaces(provider)
    kwargs: dict[str, Any] = {}
    for key, value in options.items():
        if isinstance(value, Mapping) and key in _KNOWN_NAMESPACES | own:
            if key in own:
                kwargs.update(_namespace_kwargs(key, value))
            continue
        kwargs[key] = value
    return kwargs


def _own_namespaces(provider: str) -> set[str]:
    litellm_provider = litellm_model_name(f"{provider}/x").split("/", 1)[0]
    own = {provider, litellm_provider}
    if own & _GOOGLE_NAMESPACES:
        own |= _GOOGLE_NAMESPACES
    return own


def _namespace_kwargs(namespace: str, options: Mapping[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for key, value in options.items():
        if key == "thinkingConfig" and namespace in _GOOGLE_NAMESPACES and isinstance(value, Mapping):
            kwargs.update(_google_thinking(value))
        elif key == "thinking" and isinstance(value, Mapping):
            kwargs["thinking"] = {_snake_case(k): v for k, v in value.items()}
        else:
            kwargs[_snake_case(key)] = value
    return kwargs


def _google_thinking(config: Mapping[str, Any]) -> dict[str, Any]:
    """Google ``thinkingConfig`` → litellm's ``thinking`` (budget) or ``reasoning_effort`` (level)."""
    kwargs: dict[str, Any] = {}
    level = config.get("thinkingLevel", config.get("thinking_level"))
    budget = config.get("thinkingBudget", config.get("thinking_budget"))
    if level is not None:
        kwargs["reasoning_effort"] = level
    if budget is not None:
        # litellm sends budget_tokens as Gemini's thinkingBudget (0 disables, -1 is dynamic).
        kwargs["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return kwargs


def _snake_case(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


async def litellm_complete(
    attempt: ResolvedAttempt, request: ModelRequest, timeout_s: float | None
) -> tuple[str, Usage, str | None, dict[str, Any]]:
    """One request through litellm: ``(text, usage, finish_reason, provider_metadata)``.

    Provider errors propagate unchanged (the client classifies them); a reply without choices or
    content raises :class:`MalformedResponseError`.
    """
    litellm = load_litellm()
    kwargs = build_litellm_kwargs(attempt, request, timeout_s)
    try:
        response = await litellm.acompletion(**kwargs)
    except Exception as err:
        message = str(err).lower()
        if any(marker in message for marker in _MALFORMED_MARKERS):
            raise MalformedResponseError(f"{attempt.model} returned a malformed reply: {_first_line(err)}") from err
        raise
    return parse_completion(attempt.model, response)


def parse_completion(model: str, response: Any) -> tuple[str, Usage, str | None, dict[str, Any]]:
    """Text, usage, finish reason and secret-free metadata of an OpenAI-shaped completion."""
    choices = _field(response, "choices")
    if not choices:
        raise MalformedResponseError(f"{model} returned a reply without choices")
    choice = choices[0]
    message = _field(choice, "message")
    text = _field(message, "content") if message is not None else None
    if isinstance(text, list):  # some providers return content parts
        text = "".join(_field(part, "text") or "" for part in text)
    tool_calls = _tool_calls(message)
    if text is None and tool_calls:
        text = ""  # a reply made only of tool calls
    if not isinstance(text, str):
        finish = _field(choice, "finish_reason")
        raise MalformedResponseError(f"{model} returned a reply without message content (finish_reason={finish!r})")
    usage_raw = _field(response, "usage")
    usage = Usage(
        input_tokens=int(_field(usage_raw, "prompt_tokens") or 0) if usage_raw is not None else 0,
        output_tokens=int(_field(usage_raw, "completion_tokens") or 0) if usage_raw is not None else 0,
    )
    metadata: dict[str, Any] = {
        "response_id": _field(response, "id"),
        "provider_model": _field(response, "model"),
        "system_fingerprint": _field(response, "system_fingerprint"),
        "usage_reported": usage_raw is not None and _field(usage_raw, "prompt_tokens") is not None,
    }
    if usage_raw is not None:
        details = _field(usage_raw, "completion_tokens_details")
        metadata["reasoning_tokens"] = _field(details, "reasoning_tokens") if details is not None else None
        prompt_details = _field(usage_raw, "prompt_tokens_details")
        metadata["cached_input_tokens"] = (
            _field(prompt_details, "cached_tokens") if prompt_details is not None else None
        )
    if tool_calls:
        metadata["tool_calls"] = tool_calls
    return text, usage, _field(choice, "finish_reason"), {k: v for k, v in metadata.items() if v is not None}


def _tool_calls(message: Any) -> list[dict[str, Any]]:
    """``[{"id", "name", "arguments"}]`` of an OpenAI-shaped message's function tool calls."""
    if message is None:
        return []
    calls = []
    for call in _field(message, "tool_calls") or []:
        function = _field(call, "function")
        if function is None:
            continue
        arguments = _field(function, "arguments")
        calls.append(
            {
                "id": _field(call, "id"),
                "name": _field(function, "name"),
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments or {}),
            }
        )
    return calls


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else type(err).__name__


__all__ = [
    "MalformedResponseError",
    "build_litellm_kwargs",
    "litellm_complete",
    "load_litellm",
    "model_setting_kwargs",
    "parse_completion",
    "provider_option_kwargs",
]

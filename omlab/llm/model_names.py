"""Whether a model string names a model omlab can call: an offline ``omlab/<name>`` that exists,
or a provider litellm knows.

Only the provider of a provider model is checked: real model ids appear faster than any list of
them, and a model litellm has no price for is still callable (a suite warns that its cost is
unknown). :func:`check_known_models` walks a whole spec (router tiers, fallback entries); a
callable (DynamicModel) is resolved per call and cannot be checked ahead.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from functools import cache
from typing import Any

from omlab.llm.spec import (
    _LITELLM_PROVIDER_ALIASES,
    OFFLINE_PROVIDER,
    ModelByInputTokens,
    ModelSpecError,
    ModelWithRetries,
    coerce_model_spec,
    litellm_model_name,
    split_model,
)

_PROVIDER_EXAMPLES = "openai, anthropic, google, openrouter, ..."


class UnknownModelError(ModelSpecError):
    """A model string whose offline model or provider does not exist."""


def unknown_model_problem(model: str) -> str | None:
    """Why ``model`` (a ``provider/model`` string) names nothing callable, or None when it does."""
    provider, name = split_model(model)
    if provider == OFFLINE_PROVIDER:
        offline = offline_names()
        if name in offline:
            return None
        known = ", ".join(f"omlab/{n}" for n in offline)
        return f"unknown offline model {model!r}{_did_you_mean(name, offline, 'omlab/')}: use one of {known} (or a provider model)"
    if litellm_model_name(model).split("/", 1)[0] in litellm_providers():
        return None
    spelled = sorted(litellm_providers() | set(_LITELLM_PROVIDER_ALIASES))
    return (
        f"unknown provider {provider!r} in {model!r}{_did_you_mean(provider, spelled, '')}: write 'provider/model' "
        f"with a provider litellm knows ({_PROVIDER_EXAMPLES}) or an offline omlab/ model"
    )


def check_known_models(spec: Any) -> None:
    """Raise :class:`UnknownModelError` for the first model string of ``spec`` that names nothing
    callable (see :func:`unknown_model_problem`)."""
    for model in spec_model_strings(spec):
        problem = unknown_model_problem(model)
        if problem is not None:
            raise UnknownModelError(problem)


def spec_model_strings(spec: Any) -> list[str]:
    """Every model string ``spec`` can reach without calling it: the model itself, router tiers,
    fallback entries (disabled ones too); nothing for a callable."""
    if isinstance(spec, str):
        return [spec]
    if isinstance(spec, ModelByInputTokens):
        return [model for _, tier in spec.tiers() for model in spec_model_strings(tier)]
    if isinstance(spec, ModelWithRetries):
        return spec_model_strings(spec.model)
    if isinstance(spec, Mapping | list | tuple):
        coerced = coerce_model_spec(spec)
        if isinstance(coerced, list):
            return [model for entry in coerced for model in spec_model_strings(entry)]
        return spec_model_strings(coerced)
    return []


def offline_names() -> list[str]:
    """The offline models (without ``omlab/``)."""
    from omlab.llm.offline import offline_model_names

    return offline_model_names()


@cache
def litellm_providers() -> frozenset[str]:
    """The providers litellm routes to (``openai``, ``gemini``, ``anthropic``, …)."""
    from omlab.llm.env import prepare_environment

    prepare_environment()
    import litellm

    return frozenset(getattr(provider, "value", provider) for provider in litellm.provider_list)


def _did_you_mean(word: str, choices: list[str], prefix: str) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {prefix + close[0]!r}?)" if close else ""


__all__ = [
    "UnknownModelError",
    "check_known_models",
    "litellm_providers",
    "spec_model_strings",
    "unknown_model_problem",
]

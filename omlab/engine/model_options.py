"""The Observer's and Reflector's models: which model each runs (the fallback rules), its
generation settings (``modelSettings``) and provider options, and how a model is described."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omlab.engine.errors import ConfigError
from omlab.engine.option_checks import normalize, number, option_keys, positive_int

DEFAULT_MODEL = "google/gemini-2.5-flash"
DEFAULT_MAX_OUTPUT_TOKENS = 100_000
OBSERVER_TEMPERATURE = 0.3
REFLECTOR_TEMPERATURE = 0.0
OBSERVER_PROVIDER_OPTIONS: dict[str, Any] = {"google": {"thinkingConfig": {"thinkingBudget": 215}}}
REFLECTOR_PROVIDER_OPTIONS: dict[str, Any] = {"google": {"thinkingConfig": {"thinkingBudget": 1024}}}

MODEL_SETTINGS_KEYS = option_keys("temperature", "maxOutputTokens")


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Generation settings of the Observer or Reflector call (``None`` = provider default)."""

    temperature: float | None = None
    max_output_tokens: int | None = None


#: the settings of a default-selected Observer / Reflector
OBSERVER_MODEL_SETTINGS = ModelSettings(OBSERVER_TEMPERATURE, DEFAULT_MAX_OUTPUT_TOKENS)
REFLECTOR_MODEL_SETTINGS = ModelSettings(REFLECTOR_TEMPERATURE, DEFAULT_MAX_OUTPUT_TOKENS)


@dataclass(frozen=True, slots=True)
class SelectedModel:
    """The model an agent runs, and whether it is the default selection (a router counts as one)."""

    model: Any
    is_default: bool


def resolve_models(
    top: dict[str, Any], obs: dict[str, Any], refl: dict[str, Any]
) -> tuple[SelectedModel, SelectedModel, Any]:
    """Observer: top → observation → reflection → default; reflector symmetric (seed §model)."""
    top_model = _model(top["model"], "model") if "model" in top else None
    obs_model = _model(obs["model"], "observation.model") if "model" in obs else None
    refl_model = _model(refl["model"], "reflection.model") if "model" in refl else None
    if top_model is not None and (obs_model is not None or refl_model is not None):
        both = "observation.model" if obs_model is not None else "reflection.model"
        raise ConfigError(
            "model",
            f"cannot be combined with {both}; either set model once at the top "
            f"level (used by the Observer and the Reflector) or remove it and "
            f"set observation.model / reflection.model per agent",
        )
    for option, model in (("model", top_model), ("observation.model", obs_model), ("reflection.model", refl_model)):
        _check_known(model, option)

    def select(*candidates: Any) -> SelectedModel:
        chosen = next((c for c in candidates if c is not None), None)
        if chosen is None or chosen == "default":
            return SelectedModel(DEFAULT_MODEL, True)
        return SelectedModel(chosen, _is_router(chosen))

    return select(top_model, obs_model, refl_model), select(top_model, refl_model, obs_model), top_model


def _is_router(model: Any) -> bool:
    from omlab.llm.spec import ModelByInputTokens

    return isinstance(model, ModelByInputTokens)


def _model(value: Any, option: str) -> Any:
    if isinstance(value, str) and value.strip() == "default":
        return "default"
    if isinstance(value, int | float):  # bool included
        raise ConfigError(
            option,
            f"expected a 'provider/model' string, ModelByInputTokens, a list of "
            f"ModelWithRetries or a callable, got {value!r}",
        )
    from omlab.llm.spec import ModelSpecError, coerce_model_spec

    try:
        return coerce_model_spec(value)
    except ModelSpecError as err:
        raise ConfigError(option, str(err)) from None


def _check_known(model: Any, option: str) -> None:
    """Refuse an offline model or a provider that does not exist, naming the option."""
    if model is None or model == "default":
        return
    from omlab.llm.model_names import UnknownModelError, check_known_models

    try:
        check_known_models(model)
    except UnknownModelError as err:
        raise ConfigError(option, str(err)) from None


def model_settings(value: Any, option: str, temperature: float, default_selection: bool) -> ModelSettings:
    """``modelSettings``: the given temperature/maxOutputTokens over the agent's defaults."""
    given: dict[str, Any] = {}
    if value is not None:
        if isinstance(value, ModelSettings):
            value = {"temperature": value.temperature, "max_output_tokens": value.max_output_tokens}
        if not isinstance(value, Mapping):
            raise ConfigError(option, f"expected an object, got {type(value).__name__}")
        given = normalize(value, MODEL_SETTINGS_KEYS, f"{option}.")
    if "temperature" in given:
        temperature = number(given["temperature"], f"{option}.temperature", "a number >= 0")
        if temperature < 0:
            raise ConfigError(f"{option}.temperature", f"must be >= 0, got {temperature}")
    max_output = (
        positive_int(given["max_output_tokens"], f"{option}.maxOutputTokens")
        if "max_output_tokens" in given
        else DEFAULT_MAX_OUTPUT_TOKENS
        if default_selection
        else None
    )
    return ModelSettings(temperature=float(temperature), max_output_tokens=max_output)


def provider_options(value: Any, option: str, default: dict[str, Any]) -> dict[str, Any]:
    """``providerOptions``: replaces the agent's default, never merged into it."""
    if value is None:
        return copy.deepcopy(default)
    if not isinstance(value, Mapping):
        raise ConfigError(option, f"expected an object keyed by provider, got {type(value).__name__}")
    return copy.deepcopy(dict(value))


def settings_dict(settings: ModelSettings) -> dict[str, Any]:
    """The settings in a provenance snapshot (snake_case, ``None`` kept)."""
    return {"temperature": settings.temperature, "max_output_tokens": settings.max_output_tokens}


def settings_options(settings: ModelSettings) -> dict[str, Any]:
    """The settings as a camelCase ``modelSettings`` option that rebuilds them."""
    out: dict[str, Any] = {"temperature": settings.temperature}
    if settings.max_output_tokens is not None:
        out["maxOutputTokens"] = settings.max_output_tokens
    return out


def describe_model(model: Any) -> str:
    """A model as text for a snapshot: its spec description, or its type name."""
    from omlab.llm.spec import ModelSpecError
    from omlab.llm.spec import describe_model as describe_spec

    try:
        return describe_spec(model)
    except ModelSpecError:
        kind = type(model)
        return f"{kind.__module__}.{kind.__qualname__}"

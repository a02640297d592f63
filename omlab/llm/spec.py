"""Model specs: what a caller may pass as ``model``, and how it resolves to concrete attempts.

A model spec is one of

* a ``"provider/model"`` string (``"omlab/<name>"`` for the built-in offline models);
* a :class:`ModelByInputTokens` router that picks a tier by the input token count;
* a fallback list of :class:`ModelWithRetries` entries (plain strings and camelCase dicts are
  accepted as entries), tried in order, each with its own retries;
* a single :class:`ModelWithRetries`;
* a *DynamicModel*: any callable ``(context: dict) -> spec`` (sync or async), resolved per call;
* JSON-style data: ``{"upTo": {...}}`` for a router, ``{"model": ..., "maxRetries": ...}`` for an
  entry (see :func:`coerce_model_spec`).

Specs nest: a router tier may be a fallback list, a callable may return a router.
:func:`resolve_model` turns any spec into the ordered list of :class:`ResolvedAttempt` the client
walks.
"""

from __future__ import annotations

import bisect
import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

ModelSpec: TypeAlias = Any
"""str | ModelByInputTokens | ModelWithRetries | Sequence[ModelWithRetries | str | dict] |
Callable[[dict], ModelSpec | Awaitable[ModelSpec]] | dict (see :func:`coerce_model_spec`)."""

OFFLINE_PROVIDER = "omlab"

# Mastra's model-router provider names that litellm spells differently.
_LITELLM_PROVIDER_ALIASES = {
    "google": "gemini",
    "vertex": "vertex_ai",
    "togetherai": "together_ai",
    "together": "together_ai",
    "fireworks": "fireworks_ai",
}

_MAX_NESTING = 16


class ModelSpecError(ValueError):
    """A model spec that cannot be used (bad model string, bad router key, empty fallback list…)."""


class InputTooLargeError(ValueError):
    """The input token count is above the largest threshold of a :class:`ModelByInputTokens`."""

    def __init__(self, input_tokens: int, largest_threshold: int) -> None:
        self.input_tokens = input_tokens
        self.largest_threshold = largest_threshold
        super().__init__(
            f"input token count ({input_tokens}) exceeds the largest configured threshold "
            f"({largest_threshold}); configure a higher threshold or use a larger model"
        )


# --- model strings ----------------------------------------------------------------------------


def validate_model_string(model: object) -> str:
    """Return ``model`` if it is a ``"provider/model"`` string, else raise :class:`ModelSpecError`."""
    if not isinstance(model, str):
        raise ModelSpecError(f"model must be a 'provider/model' string, got {type(model).__name__}: {model!r}")
    provider, sep, name = model.partition("/")
    if not sep or not provider.strip() or not name.strip() or model != model.strip() or " " in provider:
        raise ModelSpecError(
            f"model {model!r} is not a 'provider/model' string "
            "(for example 'openai/gpt-4o-mini', 'google/gemini-2.5-flash' or 'omlab/observer')"
        )
    return model


def split_model(model: str) -> tuple[str, str]:
    """``"openai/gpt-4o-mini"`` → ``("openai", "gpt-4o-mini")`` (the name may contain more slashes)."""
    provider, _, name = validate_model_string(model).partition("/")
    return provider, name


def is_offline_model(model: str) -> bool:
    """True for the built-in offline models (``omlab/<name>``)."""
    return split_model(model)[0] == OFFLINE_PROVIDER


def litellm_model_name(model: str) -> str:
    """The litellm spelling of a model-router string (``google/x`` → ``gemini/x``)."""
    provider, name = split_model(model)
    return f"{_LITELLM_PROVIDER_ALIASES.get(provider, provider)}/{name}"


# --- ModelByInputTokens -----------------------------------------------------------------------


class ModelByInputTokens:
    """Pick a model by input size: the model of the smallest threshold ``>= input_tokens``.

    ``ModelByInputTokens({10_000: "google/gemini-2.5-flash", 40_000: "openai/gpt-5-mini"})``, or
    ``ModelByInputTokens(upTo={...})``, or ``ModelByInputTokens({"upTo": {...}})``. Keys are
    positive finite numbers (numeric strings such as ``"10_000"`` are accepted); the order of the
    mapping does not matter. Inputs above the largest threshold raise :class:`InputTooLargeError`.
    """

    def __init__(
        self,
        up_to: Mapping[int | float | str, ModelSpec] | None = None,
        *,
        upTo: Mapping[int | float | str, ModelSpec] | None = None,
    ) -> None:
        if up_to is not None and upTo is not None:
            raise ModelSpecError("ModelByInputTokens: give the table once (up_to or upTo), not both")
        table = up_to if up_to is not None else upTo
        if isinstance(table, Mapping) and len(table) == 1:
            (only_key,) = table.keys()
            if only_key in ("upTo", "up_to"):
                table = table[only_key]
        if table is None:
            raise ModelSpecError("ModelByInputTokens needs an upTo table of {threshold: model}")
        if not isinstance(table, Mapping):
            raise ModelSpecError(
                f"ModelByInputTokens upTo must be a mapping of {{threshold: model}}, got {type(table).__name__}"
            )
        if not table:
            raise ModelSpecError("ModelByInputTokens needs at least one threshold in upTo")
        tiers: dict[int, ModelSpec] = {}
        for key, model in table.items():
            threshold = _parse_threshold(key)
            if threshold in tiers:
                raise ModelSpecError(
                    f"ModelByInputTokens threshold {key!r} duplicates threshold {threshold} (token counts are integers)"
                )
            tiers[threshold] = _check_tier_model(model, key)
        self._thresholds: list[int] = sorted(tiers)
        self._models: list[ModelSpec] = [tiers[t] for t in self._thresholds]

    def resolve(self, input_tokens: int) -> ModelSpec:
        """The model of the smallest threshold ``>= input_tokens``."""
        return self._models[self.select_tier(input_tokens)[0]]

    def select_tier(self, input_tokens: int) -> tuple[int, int]:
        """``(index, threshold)`` of the tier that serves ``input_tokens``."""
        if isinstance(input_tokens, bool) or not isinstance(input_tokens, int) or input_tokens < 0:
            raise ModelSpecError(
                f"ModelByInputTokens.resolve needs a non-negative integer token count, got {input_tokens!r}"
            )
        index = bisect.bisect_left(self._thresholds, input_tokens)
        if index == len(self._thresholds):
            raise InputTooLargeError(input_tokens, self._thresholds[-1])
        return index, self._thresholds[index]

    def get_thresholds(self) -> list[int]:
        """The thresholds in ascending order."""
        return list(self._thresholds)

    getThresholds = get_thresholds

    def tiers(self) -> list[tuple[int, ModelSpec]]:
        """``[(threshold, model spec), ...]`` in ascending order."""
        return list(zip(self._thresholds, self._models, strict=True))

    def routing_table(self) -> list[dict[str, Any]]:
        """A JSON-ready description for provenance: ``[{"up_to": 10000, "model": "..."}, ...]``."""
        return [{"up_to": t, "model": describe_model(m)} for t, m in self.tiers()]

    def __repr__(self) -> str:
        rows = ", ".join(f"{t}: {describe_model(m)!r}" for t, m in self.tiers())
        return f"ModelByInputTokens(upTo={{{rows}}})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModelByInputTokens):
            return NotImplemented
        return self.tiers() == other.tiers()

    __hash__ = None  # type: ignore[assignment]  # mutable-looking value type; equality by table


def _parse_threshold(key: object) -> int:
    value: float
    if isinstance(key, bool):
        raise ModelSpecError(f"ModelByInputTokens threshold {key!r} is not a number")
    if isinstance(key, int | float):
        value = float(key)
    elif isinstance(key, str):
        try:
            value = float(key.strip().replace("_", ""))
        except ValueError:
            raise ModelSpecError(f"ModelByInputTokens threshold {key!r} is not a number") from None
    else:
        raise ModelSpecError(f"ModelByInputTokens threshold {key!r} is not a number")
    if not math.isfinite(value) or value <= 0:
        raise ModelSpecError(f"ModelByInputTokens threshold {key!r} must be a positive finite number")
    if value < 1:
        raise ModelSpecError(f"ModelByInputTokens threshold {key!r} is below one token")
    # Token counts are integers, so `n <= 10000.5` is exactly `n <= 10000`.
    return math.floor(value)


def _check_tier_model(model: object, key: object) -> ModelSpec:
    try:
        return _check_spec_shape(model)
    except ModelSpecError as err:
        raise ModelSpecError(f"ModelByInputTokens tier {key!r}: {err}") from None


# --- ModelWithRetries -------------------------------------------------------------------------

_ENTRY_KEYS = {
    "model": "model",
    "max_retries": "max_retries",
    "maxRetries": "max_retries",
    "enabled": "enabled",
    "id": "id",
    "model_settings": "model_settings",
    "modelSettings": "model_settings",
    "provider_options": "provider_options",
    "providerOptions": "provider_options",
    "headers": "headers",
}


@dataclass(slots=True)
class ModelWithRetries:
    """One entry of a fallback list: a model with its own retries, settings and headers.

    ``max_retries`` None means "use the client's retry policy". Disabled entries are skipped.
    ``headers`` and ``model_settings`` may hold secrets and are kept out of ``repr``.
    """

    model: ModelSpec
    max_retries: int | None = None
    enabled: bool = True
    id: str | None = None
    model_settings: dict[str, Any] | None = field(default=None, repr=False)
    provider_options: dict[str, Any] | None = None
    headers: dict[str, str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        label = f"ModelWithRetries(id={self.id!r})" if self.id else "ModelWithRetries"
        if isinstance(self.model, list | tuple):
            raise ModelSpecError(f"{label}.model cannot be a fallback list; nest entries in one list instead")
        try:
            self.model = _check_spec_shape(self.model)
        except ModelSpecError as err:
            raise ModelSpecError(f"{label}.model: {err}") from None
        if self.max_retries is not None and (
            isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0
        ):
            raise ModelSpecError(f"{label}.max_retries must be a non-negative integer, got {self.max_retries!r}")
        if not isinstance(self.enabled, bool):
            raise ModelSpecError(f"{label}.enabled must be a boolean, got {self.enabled!r}")
        for name in ("model_settings", "provider_options", "headers"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Mapping):
                raise ModelSpecError(f"{label}.{name} must be a mapping, got {type(value).__name__}")
        if self.headers and not all(isinstance(k, str) and isinstance(v, str) for k, v in self.headers.items()):
            raise ModelSpecError(f"{label}.headers must map strings to strings")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelWithRetries:
        """Build from a dict with camelCase (``maxRetries``, ``modelSettings``…) or snake_case keys."""
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key not in _ENTRY_KEYS:
                raise ModelSpecError(
                    f"ModelWithRetries: unknown key {key!r} (known: model, maxRetries, enabled, id, "
                    "modelSettings, providerOptions, headers, or their snake_case forms)"
                )
            kwargs[_ENTRY_KEYS[key]] = value
        if "model" not in kwargs:
            raise ModelSpecError("ModelWithRetries needs a 'model'")
        kwargs["model"] = coerce_model_spec(kwargs["model"])
        return cls(**kwargs)


# --- coercion and description -----------------------------------------------------------------


def coerce_model_spec(value: Any) -> ModelSpec:
    """Turn JSON-style data into a spec; values that already are specs pass through unchanged.

    ``{"upTo": {...}}`` → :class:`ModelByInputTokens`; ``{"model": ...}`` → :class:`ModelWithRetries`;
    a list → a fallback list of coerced entries. Strings are validated.
    """
    if isinstance(value, str):
        return validate_model_string(value)
    if isinstance(value, Mapping):
        if set(value) <= {"upTo", "up_to"} and value:
            return ModelByInputTokens(value)
        if "model" in value:
            return ModelWithRetries.from_dict(value)
        if "id" in value:
            return model_config_entry(value)
        raise ModelSpecError(
            f"cannot read a model spec from a mapping with keys {sorted(value)}; "
            "expected {'upTo': {...}}, {'model': ..., 'maxRetries': ...} or {'id': ..., 'apiKey': ..., 'url': ...}"
        )
    if isinstance(value, list | tuple):
        if not value:
            raise ModelSpecError("a fallback list needs at least one model")
        return [_coerce_entry(entry) for entry in value]
    return _check_spec_shape(value)


_CONFIG_KEYS = {"id": "id", "apiKey": "api_key", "api_key": "api_key", "url": "url", "headers": "headers"}


def model_config_entry(config: Mapping[str, Any]) -> ModelWithRetries:
    """A model config object as the docs allow for a model or a router tier:
    ``{"id": "provider/model", "apiKey": ..., "url": ..., "headers": {...}}``.

    The key and the URL travel as litellm settings (``api_key``, ``api_base``), which are kept out
    of every repr, description and cache key; ``headers`` as the entry's headers.
    """
    given: dict[str, Any] = {}
    for key, value in config.items():
        if key not in _CONFIG_KEYS:
            raise ModelSpecError(f"model config: unknown key {key!r} (known: id, apiKey, url, headers)")
        given[_CONFIG_KEYS[key]] = value
    settings: dict[str, Any] = {}
    if given.get("api_key") is not None:
        if not isinstance(given["api_key"], str):
            raise ModelSpecError("model config: apiKey must be a string")
        settings["api_key"] = given["api_key"]
    if given.get("url") is not None:
        if not isinstance(given["url"], str):
            raise ModelSpecError("model config: url must be a string")
        settings["api_base"] = given["url"]
    return ModelWithRetries(
        model=validate_model_string(given.get("id")),
        model_settings=settings or None,
        headers=given.get("headers"),
    )


def _coerce_entry(entry: Any) -> ModelWithRetries:
    if isinstance(entry, ModelWithRetries):
        return entry
    if isinstance(entry, Mapping) and "model" in entry:
        return ModelWithRetries.from_dict(entry)
    if isinstance(entry, list | tuple):
        raise ModelSpecError("a fallback list cannot contain another list")
    return ModelWithRetries(model=coerce_model_spec(entry))


def _check_spec_shape(value: Any) -> ModelSpec:
    """Validate what can be validated without resolving (strings, known types, callables)."""
    if isinstance(value, str):
        return validate_model_string(value)
    if isinstance(value, ModelByInputTokens | ModelWithRetries):
        return value
    if isinstance(value, Mapping | list | tuple):
        return coerce_model_spec(value)
    if callable(value):
        return value
    raise ModelSpecError(
        f"unsupported model spec of type {type(value).__name__}: expected a 'provider/model' string, "
        "ModelByInputTokens, a list of ModelWithRetries or a callable"
    )


def describe_model(spec: ModelSpec) -> str:
    """A stable, secret-free one-line description, for logs and hashes.

    ``"openai/gpt-4o-mini"``, ``"ModelByInputTokens(10000=a,40000=b)"``, ``"fallbacks[a|b]"``,
    ``"callable:<qualname>"``. Disabled fallback entries are shown as ``"<model>(disabled)"``.
    """
    if isinstance(spec, str):
        return spec
    if isinstance(spec, ModelByInputTokens):
        rows = ",".join(f"{t}={describe_model(m)}" for t, m in spec.tiers())
        return f"ModelByInputTokens({rows})"
    if isinstance(spec, ModelWithRetries):
        text = describe_model(spec.model)
        return text if spec.enabled else f"{text}(disabled)"
    if isinstance(spec, Mapping):
        return describe_model(coerce_model_spec(spec))
    if isinstance(spec, list | tuple):
        return "fallbacks[" + "|".join(describe_model(_coerce_entry(e)) for e in spec) + "]"
    if callable(spec):
        name = getattr(spec, "__qualname__", None) or type(spec).__qualname__
        return f"callable:{name}"
    raise ModelSpecError(f"unsupported model spec of type {type(spec).__name__}")


def primary_model_name(spec: ModelSpec) -> str | None:
    """The model string of the first enabled entry, as the reference uses for routing context.

    None when that cannot be known without resolving (a router or a callable).
    """
    if isinstance(spec, str):
        return spec
    if isinstance(spec, ModelWithRetries):
        return primary_model_name(spec.model)
    if isinstance(spec, Mapping):
        return primary_model_name(coerce_model_spec(spec))
    if isinstance(spec, list | tuple):
        for entry in spec:
            coerced = _coerce_entry(entry)
            if coerced.enabled:
                return primary_model_name(coerced.model)
        return None
    return None


# --- resolution -------------------------------------------------------------------------------


@dataclass(slots=True)
class ResolvedAttempt:
    """One concrete model to try, with the settings of the entry that named it."""

    model: str
    max_retries: int | None = None
    model_settings: dict[str, Any] = field(default_factory=dict, repr=False)
    provider_options: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def provider(self) -> str:
        return split_model(self.model)[0]

    @property
    def is_offline(self) -> bool:
        return is_offline_model(self.model)


@dataclass(slots=True)
class ResolvedModel:
    """The fallback chain to walk, and the ``ModelByInputTokens`` threshold picked (if any)."""

    attempts: list[ResolvedAttempt]
    tier: int | None = None
    routing_thresholds: list[int] | None = None


async def resolve_model(spec: ModelSpec, *, input_tokens: int | None, context: dict[str, Any]) -> ResolvedModel:
    """Resolve any spec to its attempts. Routers need ``input_tokens``; callables get ``context``."""
    return await _resolve(spec, input_tokens, context, depth=0)


async def _resolve(spec: ModelSpec, input_tokens: int | None, context: dict[str, Any], depth: int) -> ResolvedModel:
    if depth > _MAX_NESTING:
        raise ModelSpecError(f"model spec nests more than {_MAX_NESTING} levels (a callable returning itself?)")
    if isinstance(spec, str):
        return ResolvedModel([ResolvedAttempt(validate_model_string(spec))])
    if isinstance(spec, ModelByInputTokens):
        if input_tokens is None:
            raise ModelSpecError(f"{describe_model(spec)} routes by input size: the request needs input_tokens")
        index, threshold = spec.select_tier(input_tokens)
        inner = await _resolve(spec.tiers()[index][1], input_tokens, context, depth + 1)
        return ResolvedModel(inner.attempts, tier=threshold, routing_thresholds=spec.get_thresholds())
    if isinstance(spec, ModelWithRetries):
        return await _resolve([spec], input_tokens, context, depth + 1)
    if isinstance(spec, Mapping):
        return await _resolve(coerce_model_spec(spec), input_tokens, context, depth + 1)
    if isinstance(spec, list | tuple):
        return await _resolve_fallbacks(spec, input_tokens, context, depth)
    if callable(spec):
        produced = spec(context)
        if inspect.isawaitable(produced):
            produced = await produced
        if produced is None:
            raise ModelSpecError(f"{describe_model(spec)} returned no model")
        return await _resolve(produced, input_tokens, context, depth + 1)
    raise ModelSpecError(f"unsupported model spec of type {type(spec).__name__}")


async def _resolve_fallbacks(
    entries: Sequence[Any], input_tokens: int | None, context: dict[str, Any], depth: int
) -> ResolvedModel:
    if not entries:
        raise ModelSpecError("a fallback list needs at least one entry")
    attempts: list[ResolvedAttempt] = []
    tier: int | None = None
    thresholds: list[int] | None = None
    for raw in entries:
        entry = _coerce_entry(raw)
        if not entry.enabled:
            continue
        inner = await _resolve(entry.model, input_tokens, context, depth + 1)
        if tier is None and inner.tier is not None:
            tier, thresholds = inner.tier, inner.routing_thresholds
        for attempt in inner.attempts:
            attempts.append(
                ResolvedAttempt(
                    model=attempt.model,
                    max_retries=entry.max_retries if entry.max_retries is not None else attempt.max_retries,
                    model_settings={**attempt.model_settings, **(entry.model_settings or {})},
                    provider_options=merge_provider_options(attempt.provider_options, entry.provider_options),
                    headers={**attempt.headers, **(entry.headers or {})},
                )
            )
    if not attempts:
        raise ModelSpecError(f"every entry of {describe_model(list(entries))} is disabled")
    return ResolvedModel(attempts, tier=tier, routing_thresholds=thresholds)


def merge_provider_options(base: Mapping[str, Any] | None, override: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge per provider namespace: ``{"google": {...}}`` dicts merge key by key, other keys replace."""
    merged: dict[str, Any] = dict(base or {})
    for key, value in (override or {}).items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


__all__ = [
    "InputTooLargeError",
    "ModelByInputTokens",
    "ModelSpec",
    "ModelSpecError",
    "ModelWithRetries",
    "ResolvedAttempt",
    "ResolvedModel",
    "coerce_model_spec",
    "describe_model",
    "is_offline_model",
    "litellm_model_name",
    "merge_provider_options",
    "primary_model_name",
    "resolve_model",
    "split_model",
    "validate_model_string",
]

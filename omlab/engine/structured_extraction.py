"""Structured extraction: one follow-up structured-output request per schema extractor, its reply
parsed as JSON and validated against the schema (:func:`run_structured_extractors`).

Offline models (``omlab/...``) only speak the observation format, so a structured extractor on an
offline model fails with :data:`~omlab.engine.extractors.OFFLINE_STRUCTURED_ERROR` instead of
calling it.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from omlab.engine.degenerate import is_degenerate
from omlab.engine.extraction_plan import ResolvedExtractor, failure_record, plan_extraction
from omlab.engine.extractors import OFFLINE_STRUCTURED_ERROR, Extractor, ExtractorContext, compact_json
from omlab.llm.spec import is_offline_model, primary_model_name
from omlab.llm.types import ModelRequest
from omlab.tokens.tokenx import estimate_token_count

_STRUCTURED_SYSTEM = (
    "You extract one value from the memory of an AI assistant: observations it wrote about its "
    "conversation with a user. Answer with a single JSON value that matches the given JSON schema "
    "and nothing else: no prose, no code fences. Use only what the observations support; leave "
    "optional fields out when nothing supports them."
)
_WRAPPED_KEY = "value"


@dataclass(frozen=True, slots=True)
class _SchemaCheck:
    """A resolved schema as JSON schema, plus the validator that turns parsed JSON into the value."""

    json_schema: dict[str, Any]
    wrapped: bool  # a non-object schema is sent as {"value": schema} (providers want objects)
    validate: Callable[[Any], Any]


def _schema_check(schema: Any) -> _SchemaCheck:
    if isinstance(schema, dict):
        json_schema = schema

        def validate(value: Any) -> Any:
            try:
                import jsonschema  # optional: litellm brings it in
            except ImportError:  # pragma: no cover - depends on the environment
                return value
            try:
                jsonschema.validate(value, json_schema)
            except jsonschema.ValidationError as err:
                raise ValueError(f"does not match the schema: {err.message}") from None
            return value
    else:
        adapter = TypeAdapter(schema)
        json_schema = adapter.json_schema()

        def validate(value: Any) -> Any:
            try:
                parsed = adapter.validate_python(value)
            except ValidationError as err:
                raise ValueError(f"does not match the schema: {_validation_summary(err)}") from None
            return adapter.dump_python(parsed, mode="json")

    wrapped = json_schema.get("type") != "object"
    if wrapped:
        json_schema = {
            "type": "object",
            "properties": {_WRAPPED_KEY: json_schema},
            "required": [_WRAPPED_KEY],
        }
    return _SchemaCheck(json_schema, wrapped, validate)


def _validation_summary(err: ValidationError) -> str:
    problems = []
    for item in err.errors()[:3]:
        where = ".".join(str(p) for p in item["loc"]) or "(root)"
        problems.append(f"{where}: {item['msg']}")
    more = f" (+{err.error_count() - 3} more)" if err.error_count() > 3 else ""
    return "; ".join(problems) + more


def _json_name(slug: str) -> str:
    return slug.replace("-", "_")[:64]


def structured_request_messages(
    resolved: ResolvedExtractor, json_schema: dict[str, Any], observations_text: str, previous: Any
) -> list[dict[str, Any]]:
    """The chat messages of one structured extraction request."""
    user = [f"## What to extract: {resolved.extractor.name}\n\n{resolved.instructions}\n"]
    if previous is not None and resolved.extractor.include_previous_extraction:
        user.append(f"## Previous value\n\n{compact_json(previous)}\n\nUpdate it; keep what is still true.\n")
    user.append(f"## Observations\n\n{observations_text.strip() or '(none yet)'}\n")
    user.append(f"## JSON schema\n\n{json.dumps(json_schema, ensure_ascii=False)}")
    return [{"role": "system", "content": _STRUCTURED_SYSTEM}, {"role": "user", "content": "\n".join(user)}]


def parse_json_reply(text: str) -> Any:
    """The JSON value in a model reply, tolerating surrounding code fences and prose."""
    stripped = text.strip()
    fence = re.match(r"^```[a-zA-Z]*\s*\n(.*?)\n?```\s*$", stripped, re.DOTALL)
    if fence:
        stripped = fence.group(1).strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    start = min((i for i in (stripped.find("{"), stripped.find("[")) if i != -1), default=-1)
    end = max(stripped.rfind("}"), stripped.rfind("]"))
    if start != -1 and end > start:
        try:
            return json.loads(stripped[start : end + 1])
        except json.JSONDecodeError:
            pass
    raise ValueError(f"the reply is not valid JSON: {stripped[:80]!r}")


def _offline(model: Any) -> bool:
    name = primary_model_name(model)
    try:
        return name is not None and is_offline_model(name)
    except ValueError:
        return False


async def _run_one_structured(
    resolved: ResolvedExtractor,
    *,
    client: Any,
    model: Any,
    observations_text: str,
    context: ExtractorContext,
    previous: Any,
    temperature: float | None,
    max_output_tokens: int | None,
    provider_options: dict[str, Any] | None,
) -> Any:
    if _offline(model):
        raise ValueError(OFFLINE_STRUCTURED_ERROR)
    check = _schema_check(resolved.schema)
    messages = structured_request_messages(resolved, check.json_schema, observations_text, previous)
    request = ModelRequest(
        model=model,
        messages=messages,
        role="extractor",
        temperature=temperature,
        max_output_tokens=max_output_tokens,
        provider_options=provider_options,
        input_tokens=sum(estimate_token_count(m["content"]) for m in messages),
        response_format={
            "type": "json_schema",
            "json_schema": {"name": _json_name(resolved.slug), "schema": check.json_schema, "strict": False},
        },
        metadata={"extractor": resolved.slug, "source": context.get("source")},
        context=dict(context),
    )
    # an empty or looping reply is a failed attempt: retried once, then a failure (never a value)
    for attempt in (1, 2):
        response = await client.complete(
            request if attempt == 1 else dataclasses.replace(request, cache_salt=f"retry-{attempt}")
        )
        if isinstance(getattr(response, "model", None), str) and _offline(response.model):
            raise ValueError(OFFLINE_STRUCTURED_ERROR)  # a fallback chain ended on an offline model
        if response.text.strip() and not is_degenerate(response.text):
            break
    else:
        raise ValueError("the reply was empty or degenerate twice")
    value = parse_json_reply(response.text)
    if check.wrapped:
        if not isinstance(value, dict) or _WRAPPED_KEY not in value:
            raise ValueError(f"does not match the schema: expected an object with a {_WRAPPED_KEY!r} key")
        value = value[_WRAPPED_KEY]
    return check.validate(value)


async def run_structured_extractors(
    extractors: Sequence[Extractor | ResolvedExtractor],
    *,
    client: Any,
    model: Any,
    observations_text: str,
    context: ExtractorContext,
    previous: Mapping[str, Any] | None = None,
    temperature: float | None = 0.0,
    max_output_tokens: int | None = None,
    provider_options: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Run one structured-output request per schema extractor (inline ones are ignored).

    Each request goes through ``client.complete`` (a :class:`~omlab.llm.client.ModelClient`) with
    ``role="extractor"`` and ``response_format`` set to the extractor's JSON schema; the reply is
    parsed and validated. Values are JSON-safe (pydantic models are dumped).

    Args:
        previous: slug -> previous value (shown only to extractors with
            ``include_previous_extraction``).

    Returns:
        ``(values, failures)``: slug -> value, and ``[{"slug", "error"}]``. Nothing is raised.
    """
    values: dict[str, Any] = {}
    failures: list[dict[str, str]] = []
    for item in extractors:
        if isinstance(item, ResolvedExtractor):
            resolved = item
        else:
            plan = plan_extraction([item], context)
            failures.extend(plan.failures)
            if not plan.structured:
                continue
            resolved = plan.structured[0]
        if resolved.inline:
            continue
        try:
            values[resolved.slug] = await _run_one_structured(
                resolved,
                client=client,
                model=model,
                observations_text=observations_text,
                context=context,
                previous=(previous or {}).get(resolved.slug),
                temperature=temperature,
                max_output_tokens=max_output_tokens,
                provider_options=provider_options,
            )
        except Exception as err:  # noqa: BLE001 - every failure is reported, none raised
            failures.append(failure_record(resolved.slug, _describe(err)))
    return values, failures


def _describe(err: BaseException) -> str:
    text = str(err).strip()
    return text if isinstance(err, ValueError) and text else f"{type(err).__name__}: {text or '(no message)'}"

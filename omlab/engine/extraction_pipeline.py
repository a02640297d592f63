"""The extraction pipeline of one OM operation: inline values from the Observer's or Reflector's
reply, structured values from follow-up calls, each through ``on_extracted`` and persisted into
the thread's OM metadata (:func:`run_extractors`). A failing extractor is reported as
``{"slug", "error"}`` and never stops the others."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from omlab.engine.extraction_plan import (
    ExtractionPlan,
    ResolvedExtractor,
    describe_user_error,
    failure_record,
    plan_extraction,
)
from omlab.engine.extractors import Extractor, ExtractorContext
from omlab.engine.observation_text import ObserverOutput
from omlab.engine.structured_extraction import run_structured_extractors


class ExtractionFailed(Exception):
    """An ``on_extracted`` hook raised; ``failure`` is the ``{"slug", "error"}`` record."""

    def __init__(self, failure: dict[str, str]) -> None:
        super().__init__(failure["error"])
        self.failure = failure


async def apply_on_extracted(
    extractor: Extractor, value: Any, context: ExtractorContext, *, previous: Any = None
) -> Any:
    """Run the extractor's ``on_extracted`` hook on ``value`` and return the value to persist.

    The hook receives ``{**context, "slug", "value", "previous"}``; a returned value other than
    None replaces ``value``; a coroutine is awaited.

    Raises:
        ExtractionFailed: the hook raised (its ``failure`` is ready for ``extractionFailures``).
    """
    if extractor.on_extracted is None:
        return value
    payload = {**context, "slug": extractor.slug, "value": value, "previous": previous}
    try:
        replaced = extractor.on_extracted(payload)
        if inspect.isawaitable(replaced):
            replaced = await replaced
    except Exception as err:
        raise ExtractionFailed(
            failure_record(extractor.slug, f"onExtracted failed: {describe_user_error(err)}")
        ) from err
    return value if replaced is None else replaced


@dataclass(slots=True)
class ExtractionResult:
    """What one OM operation extracted: ``values`` by slug (for ``extractedValues``) and
    ``failures`` (``[{"slug", "error"}]``, for ``extractionFailures``)."""

    values: dict[str, Any] = field(default_factory=dict)
    failures: list[dict[str, str]] = field(default_factory=list)


def _inline_value(resolved: ResolvedExtractor, output: ObserverOutput | None) -> str | None:
    if output is None:
        return None
    builtin_field = {
        "current-task": output.current_task,
        "suggested-response": output.suggested_response,
        "thread-title": output.thread_title,
    }
    value = output.extracted.get(resolved.slug)
    if value is None and resolved.extractor.builtin:
        value = builtin_field.get(resolved.slug)
    if value is None or not value.strip():
        return None
    return value.strip()


async def run_extractors(
    extractors: Sequence[Extractor],
    *,
    output: ObserverOutput | None,
    context: ExtractorContext,
    thread_metadata: dict[str, Any] | None,
    client: Any = None,
    model: Any = None,
    observations_text: str = "",
    plan: ExtractionPlan | None = None,
    temperature: float | None = 0.0,
    max_output_tokens: int | None = None,
    provider_options: dict[str, Any] | None = None,
) -> ExtractionResult:
    """Collect, post-process and persist every extractor's value for one OM operation.

    Inline values come from ``output`` (``output.extracted``; built-ins from its
    ``current_task``/``suggested_response``/``thread_title``); structured values from one
    follow-up call each (skipped, with a failure, when ``client`` or ``model`` is missing). Each
    value then goes through ``on_extracted`` and is persisted into ``thread_metadata`` (the
    thread's ``metadata`` dict, mutated in place; save the thread afterwards). An empty inline
    value is no value: the previous one is kept (hints are carried forward).

    Pass the ``plan`` used to build the prompt so dynamic instructions are not resolved twice.
    """
    plan = plan or plan_extraction(extractors, context)
    result = ExtractionResult(failures=list(plan.failures))
    collected: dict[str, Any] = {}
    for resolved in plan.inline:
        value = _inline_value(resolved, output)
        if value is not None:
            collected[resolved.slug] = value
    if plan.structured:
        previous = {r.slug: r.extractor.previous_value(thread_metadata) for r in plan.structured}
        if client is None or model is None:
            result.failures.extend(
                failure_record(r.slug, "no model client for structured extraction") for r in plan.structured
            )
        else:
            values, failures = await run_structured_extractors(
                plan.structured,
                client=client,
                model=model,
                observations_text=observations_text,
                context=context,
                previous=previous,
                temperature=temperature,
                max_output_tokens=max_output_tokens,
                provider_options=provider_options,
            )
            collected.update(values)
            result.failures.extend(failures)
    by_slug = {r.slug: r.extractor for r in (*plan.inline, *plan.structured)}
    for slug, value in collected.items():
        extractor = by_slug[slug]
        previous_value = extractor.previous_value(thread_metadata)
        try:
            value = await apply_on_extracted(extractor, value, context, previous=previous_value)
            if isinstance(value, BaseModel):
                value = value.model_dump(mode="json")
            if thread_metadata is not None:
                extractor.persist(thread_metadata, value)
        except ExtractionFailed as failed:
            result.failures.append(failed.failure)
            continue
        except (ValueError, TypeError) as err:
            result.failures.append(failure_record(slug, f"cannot store the value: {err}"))
            continue
        result.values[slug] = value
    return result

"""Extractors around an Observer/Reflector call: what goes into the prompt, what comes out.

Built-ins (``current-task``, ``suggested-response``, ``thread-title`` when enabled) and the
user's ``observation.extract`` / ``reflection.extract`` go through one pipeline
(:mod:`omlab.engine.extractors`): inline extractors ask the model for ``<slug>…</slug>``
sections, schema extractors make a follow-up structured call; values land in the thread's OM
metadata and on the cycle's end event (``extractedValues`` / ``extractionFailures``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from omlab.engine.extraction_pipeline import ExtractionResult, run_extractors
from omlab.engine.extraction_plan import ExtractionPlan, plan_extraction, prior_extraction_items
from omlab.engine.extractors import Extractor, WorkingMemoryExtractor, builtin_extractors, validate_extractors
from omlab.engine.live import LiveMemory
from omlab.engine.observation_groups import new_group_id, wrap_observation_group
from omlab.engine.record import Thread

if TYPE_CHECKING:
    from omlab.engine.config import OMConfig
    from omlab.engine.cycle_context import CycleContext


def configured_extractors(config: OMConfig) -> tuple[list[Extractor], list[Extractor]]:
    """(observation extractors, reflection extractors), built-ins first; invalid lists raise
    :class:`~omlab.engine.errors.ConfigError` naming the option."""
    obs, refl = config.observation, config.reflection
    custom_obs = list(validate_extractors(list(obs.extract), "observation.extract"))
    if obs.manage_working_memory:
        custom_obs.append(WorkingMemoryExtractor())
    custom_refl = list(validate_extractors(list(refl.extract), "reflection.extract"))
    return (
        [*builtin_extractors("observation", thread_title=obs.thread_title), *custom_obs],
        [*builtin_extractors("reflection"), *custom_refl],
    )


@dataclass(slots=True)
class ExtractionSetup:
    extractors: list[Extractor]
    plan: ExtractionPlan
    context: dict[str, Any]
    prior: list[tuple[str, str]]

    @property
    def inline_items(self) -> list[tuple[str, str]]:
        return self.plan.inline_prompt_items()

    @property
    def inline_slugs(self) -> list[str]:
        return list(self.plan.inline_slugs)


def prepare(
    om: CycleContext, live: LiveMemory, thread: Thread | None, source: str, *, thread_id: str | None = None
) -> ExtractionSetup:
    """The extractors of one operation, their prompt plan and the thread's previous values;
    ``thread_id`` names a thread other than the live one (a resource-scope cycle's threads)."""
    extractors = om.observation_extractors if source == "observation" else om.reflection_extractors
    context = {"source": source, "threadId": thread_id or live.thread_id, "resourceId": live.resource_id}
    plan = plan_extraction(extractors, context)
    prior = [
        (slug, str(value)) for slug, value in prior_extraction_items(extractors, thread.metadata if thread else {})
    ]
    return ExtractionSetup(extractors, plan, context, prior)


async def finish(
    om: CycleContext, setup: ExtractionSetup, thread: Thread | None, output: Any, observations_text: str
) -> ExtractionResult:
    """Collect and persist the values (the caller saves the thread)."""
    model = om.config.observation.model if setup.context["source"] == "observation" else om.config.reflection.model
    return await run_extractors(
        setup.extractors,
        output=output,
        context=setup.context,
        thread_metadata=thread.metadata if thread is not None else None,
        client=om.client,
        model=model,
        observations_text=observations_text,
        plan=setup.plan,
    )


def event_fields(result: ExtractionResult) -> dict[str, Any]:
    """``extractedValues`` / ``extractionFailures`` for an end event (absent when empty)."""
    fields: dict[str, Any] = {}
    if result.values:
        fields["extractedValues"] = result.values
    if result.failures:
        fields["extractionFailures"] = result.failures
    return fields


def wrap_for_retrieval(om: CycleContext, text: str, messages: list[Any]) -> str:
    """With ``retrieval`` on, an observation group pointing at its source message range."""
    if om.config.retrieval is None or not text:
        return text
    visible = [m for m in messages if m.visible_parts()] or messages
    return wrap_observation_group(
        text, group_id=new_group_id(), start_message_id=visible[0].id, end_message_id=visible[-1].id
    )

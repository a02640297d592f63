"""Planning one OM operation's extraction: each extractor's instructions and schema resolved once,
so the prompt, the output parser and the structured calls agree (:class:`ExtractionPlan`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omlab.engine.extractors import Extractor, ExtractorContext, compact_json


@dataclass(frozen=True, slots=True)
class ResolvedExtractor:
    """An extractor with its instructions and schema resolved for one OM operation."""

    extractor: Extractor
    instructions: str
    schema: Any

    @property
    def slug(self) -> str:
        return self.extractor.slug

    @property
    def inline(self) -> bool:
        return self.schema is None


_PROMPT_NATIVE_SLUGS = frozenset({"current-task", "suggested-response", "thread-title"})


@dataclass(frozen=True, slots=True)
class ExtractionPlan:
    """The extractors of one OM operation, resolved once so that the prompt, the parser and the
    structured calls agree. ``failures`` lists extractors whose dynamic parts raised."""

    inline: list[ResolvedExtractor]
    structured: list[ResolvedExtractor]
    failures: list[dict[str, str]]

    def inline_prompt_items(self, *, include_builtins: bool = False) -> list[tuple[str, str]]:
        """``(slug, instructions)`` pairs for ``observer_system_prompt(inline_extractors=…)``."""
        # the three hint sections are part of the prompts' own output format; every other
        # extractor (the working-memory one included) must be asked for
        return [
            (r.slug, r.instructions)
            for r in self.inline
            if include_builtins or not r.extractor.builtin or r.slug not in _PROMPT_NATIVE_SLUGS
        ]

    @property
    def inline_slugs(self) -> list[str]:
        """Slugs to pass to ``parse_observer_output(inline_slugs=…)``."""
        return [r.slug for r in self.inline]


def plan_extraction(extractors: Sequence[Extractor], context: ExtractorContext) -> ExtractionPlan:
    """Resolve every extractor's instructions and schema against ``context``."""
    inline: list[ResolvedExtractor] = []
    structured: list[ResolvedExtractor] = []
    failures: list[dict[str, str]] = []
    for extractor in extractors:
        try:
            resolved = ResolvedExtractor(
                extractor, extractor.resolve_instructions(context), extractor.resolve_schema(context)
            )
        except Exception as err:  # noqa: BLE001 - user code; reported as a failure
            failures.append(failure_record(extractor.slug, f"cannot resolve the extractor: {describe_user_error(err)}"))
            continue
        (inline if resolved.inline else structured).append(resolved)
    return ExtractionPlan(inline, structured, failures)


def inline_extractor_prompt_items(
    extractors: Sequence[Extractor], context: ExtractorContext, *, include_builtins: bool = False
) -> list[tuple[str, str]]:
    """``(slug, instructions)`` of the inline extractors, for the Observer's or Reflector's system
    prompt. Built-ins are left out unless asked for (the output format already requests them);
    extractors whose dynamic parts fail are left out (see :func:`plan_extraction`)."""
    return plan_extraction(extractors, context).inline_prompt_items(include_builtins=include_builtins)


def prior_extraction_items(
    extractors: Sequence[Extractor], thread_metadata: Mapping[str, Any] | None
) -> list[tuple[str, str]]:
    """``(slug, value)`` of the previous values to show under "Prior Thread Metadata", for the
    extractors with ``include_previous_extraction``. ``thread_metadata`` is ``Thread.metadata``
    (OM values under ``["om"]``). Non-string values are shown as compact JSON; empty ones skipped."""
    items: list[tuple[str, str]] = []
    for extractor in extractors:
        if not extractor.include_previous_extraction:
            continue
        value = extractor.previous_value(thread_metadata)
        if value is None or value == "" or value == {} or value == []:
            continue
        items.append((extractor.slug, value if isinstance(value, str) else compact_json(value)))
    return items


def failure_record(slug: str, error: str) -> dict[str, str]:
    """An ``extractionFailures`` entry."""
    return {"slug": slug, "error": error}


def describe_user_error(err: BaseException) -> str:
    """An error raised by user code: always with its type, which the user will want to see."""
    return f"{type(err).__name__}: {str(err).strip() or '(no message)'}"

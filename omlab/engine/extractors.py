"""Extractors: values OM pulls out of a conversation besides the observation log (seed: Extractor API).

An :class:`Extractor` names a value (``name`` → ``slug``), says what to extract (``instructions``)
and, optionally, its shape (``schema``):

* **inline** (no schema): the Observer or Reflector writes the value in its own reply as a
  ``<slug>…</slug>`` section, parsed by :func:`omlab.engine.observation_text.parse_observer_output`
  (``inline_slugs``);
* **structured** (a schema): after the OM call, one follow-up structured-output request per
  extractor asks the model for JSON matching the schema (:func:`run_structured_extractors`).

The built-in values (:data:`CURRENT_TASK`, :data:`SUGGESTED_RESPONSE`, :data:`THREAD_TITLE`) are
Extractor instances that go through the same pipeline; their prompt text already lives in the
Observer's output format, so they are not repeated as inline instructions by default.

Values are persisted in the thread's OM metadata (``thread.metadata["om"]``) at
``metadata_key_path`` (default ``extracted.<slug>``); built-in values are mirrored into the
compatibility fields ``currentTask``, ``suggestedResponse`` and ``threadTitle``. A failing
extractor is reported as ``{"slug", "error"}`` and never stops the others.

Offline models (``omlab/...``) only speak the observation format, so a structured extractor on
an offline model fails with :data:`OFFLINE_STRUCTURED_ERROR` instead of calling it.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from omlab.engine.degenerate import is_degenerate
from omlab.engine.errors import ConfigError
from omlab.engine.observation_text import ObserverOutput
from omlab.llm.spec import is_offline_model, primary_model_name
from omlab.llm.types import ModelRequest
from omlab.tokens.tokenx import estimate_token_count

ExtractorContext = Mapping[str, Any]
"""What dynamic instructions, schemas and ``on_extracted`` receive: ``source`` (``observation`` or
``reflection``), ``threadId``, ``resourceId`` and whatever else the engine has (``requestContext``…)."""

BUILTIN_SLUGS = ("current-task", "suggested-response", "thread-title")
#: built-in slug -> the compatibility field of the thread's OM metadata it is mirrored into
BUILTIN_MIRRORS = {
    "current-task": "currentTask",
    "suggested-response": "suggestedResponse",
    "thread-title": "threadTitle",
}
WORKING_MEMORY_SLUG = "working-memory"
#: slugs a custom extractor may not take: the built-ins and every XML tag the engine reads or writes
RESERVED_SLUGS = frozenset(
    {
        *BUILTIN_SLUGS,
        WORKING_MEMORY_SLUG,
        "observations",
        "observation",
        "observation-group",
        "observational-memory-instruction",
        "thread",
        "threads",
        "system-reminder",
        "other-conversation",
        "other-conversations",
    }
)
DEFAULT_METADATA_KEY_PATH = "extracted."
OFFLINE_STRUCTURED_ERROR = "offline model cannot produce structured output"

_CAMEL_ALIASES = {
    "includePreviousExtraction": "include_previous_extraction",
    "metadataKeyPath": "metadata_key_path",
    "onExtracted": "on_extracted",
}
_NOT_GIVEN: Any = object()


def slugify(name: str) -> str:
    """``"User profile"`` → ``"user-profile"``: accents dropped, lower case, every run of other
    characters turned into one hyphen, hyphens trimmed. May return ``""``."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")


def _check_key_path(path: Any) -> str | bool:
    option = "Extractor.metadataKeyPath"
    if path is False:
        return False
    if not isinstance(path, str) or not path.strip():
        raise ConfigError(option, f"expected a dot-separated path or false, got {path!r}")
    segments = path[:-1].split(".") if path.endswith(".") else path.split(".")
    if any(not segment.strip() for segment in segments):
        raise ConfigError(option, f"{path!r} has an empty segment")
    return path


def _is_schema_type(schema: Any) -> bool:
    # Classes and typing constructs (list[str], Optional[...]) are schemas; plain functions are
    # factories. Generic aliases are callable, so test them before callable().
    return isinstance(schema, type) or type(schema).__module__ in ("typing", "types", "typing_extensions")


class Extractor:
    """A value to extract during observation or reflection.

    Args:
        name: readable name; its slug (``slug``) names the XML section and the stored value.
        instructions: what to extract and when to update it; a string or ``(context) -> str``.
        schema: ``None`` (an inline string extractor), a pydantic model class, any type pydantic
            can validate (``list[str]``, a ``TypedDict``…), a JSON-schema ``dict``, or
            ``(context) -> schema`` (which may return ``None`` for an inline run).
        include_previous_extraction: show the previous value to the next extraction.
        metadata_key_path: dot path in the thread's OM metadata; a trailing dot appends the slug
            (default ``"extracted."`` → ``extracted.<slug>``); ``False`` skips persistence.
        on_extracted: ``(context) -> value | None`` (or a coroutine), called with the context plus
            ``slug``, ``value`` and ``previous`` before persistence; a returned value replaces the
            extracted one, an exception records a failure.

    The camelCase spellings ``includePreviousExtraction``, ``metadataKeyPath`` and
    ``onExtracted`` are accepted too.

    Raises:
        ConfigError: an empty name or slug, a slug reserved by the engine, bad instructions,
            schema, path or hook.
    """

    __slots__ = (
        "_builtin",
        "include_previous_extraction",
        "instructions",
        "metadata_key_path",
        "name",
        "on_extracted",
        "schema",
        "slug",
    )

    def __init__(
        self,
        name: str | Mapping[str, Any],
        instructions: str | Callable[[ExtractorContext], str] = _NOT_GIVEN,  # type: ignore[assignment]
        schema: Any = None,
        *,
        include_previous_extraction: bool = _NOT_GIVEN,
        metadata_key_path: str | bool = _NOT_GIVEN,
        on_extracted: Callable[[dict[str, Any]], Any] | None = _NOT_GIVEN,
        **camel_case: Any,
    ) -> None:
        if isinstance(name, Mapping):
            # the documented form: Extractor({"name": ..., "instructions": ..., "schema": ...})
            if instructions is not _NOT_GIVEN or schema is not None:
                raise ConfigError("Extractor", "give the options either as one object or as arguments, not both")
            options = dict(name)
            unknown = set(options) - {"name", "instructions", "schema", *_CAMEL_ALIASES, *_CAMEL_ALIASES.values()}
            if unknown:
                raise ConfigError(f"Extractor.{min(unknown)}", "unknown option")
            Extractor.__init__(
                self,
                options.pop("name", None),
                options.pop("instructions", None),
                options.pop("schema", None),
                **options,
            )
            return
        if instructions is _NOT_GIVEN:
            raise ConfigError("Extractor.instructions", "is required")
        given = {
            "include_previous_extraction": include_previous_extraction,
            "metadata_key_path": metadata_key_path,
            "on_extracted": on_extracted,
        }
        for key, value in camel_case.items():
            if key not in _CAMEL_ALIASES:
                raise ConfigError(f"Extractor.{key}", "unknown option")
            snake = _CAMEL_ALIASES[key]
            if given[snake] is not _NOT_GIVEN:
                raise ConfigError(f"Extractor.{key}", f"given twice (as {key} and {snake})")
            given[snake] = value
        include = True if given["include_previous_extraction"] is _NOT_GIVEN else given["include_previous_extraction"]
        path = DEFAULT_METADATA_KEY_PATH if given["metadata_key_path"] is _NOT_GIVEN else given["metadata_key_path"]
        hook = None if given["on_extracted"] is _NOT_GIVEN else given["on_extracted"]

        if not isinstance(name, str) or not name.strip():
            raise ConfigError("Extractor.name", f"expected a non-empty string, got {name!r}")
        slug = slugify(name)
        if not slug:
            raise ConfigError("Extractor.name", f"{name!r} has no letters or digits to make a slug from")
        if isinstance(instructions, str):
            if not instructions.strip():
                raise ConfigError(f"Extractor({slug}).instructions", "must not be empty")
        elif not callable(instructions):
            raise ConfigError(
                f"Extractor({slug}).instructions",
                f"expected a string or a function of the context, got {type(instructions).__name__}",
            )
        if not (schema is None or isinstance(schema, dict) or _is_schema_type(schema) or callable(schema)):
            raise ConfigError(
                f"Extractor({slug}).schema",
                f"expected None, a pydantic model, a type, a JSON-schema dict or a function, "
                f"got {type(schema).__name__}",
            )
        if not isinstance(include, bool):
            raise ConfigError(f"Extractor({slug}).includePreviousExtraction", f"expected a boolean, got {include!r}")
        if hook is not None and not callable(hook):
            raise ConfigError(f"Extractor({slug}).onExtracted", f"expected a function, got {type(hook).__name__}")
        self.name = name
        self.slug = slug
        self.instructions = instructions
        self.schema = schema
        self.include_previous_extraction = include
        self.metadata_key_path = _check_key_path(path)
        self.on_extracted = hook
        self._builtin = False
        self._check_reserved()

    def _check_reserved(self) -> None:
        if self.slug in RESERVED_SLUGS:
            raise ConfigError(
                "Extractor.name",
                f"slug {self.slug!r} (from {self.name!r}) is reserved by the engine; choose another name",
            )

    @property
    def builtin(self) -> bool:
        """Whether this is one of the engine's own extractors."""
        return self._builtin

    @property
    def storage_path(self) -> str | None:
        """The dot path the value is stored at in the OM metadata (None when not stored)."""
        path = self.metadata_key_path
        if path is False:
            return None
        assert isinstance(path, str)
        return path + self.slug if path.endswith(".") else path

    def resolve_instructions(self, context: ExtractorContext) -> str:
        """The instructions for this run (calls a dynamic ``instructions`` with ``context``)."""
        text = self.instructions(context) if callable(self.instructions) else self.instructions
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"instructions returned {text!r}, expected a non-empty string")
        return text.strip()

    def resolve_schema(self, context: ExtractorContext) -> Any:
        """The schema for this run (``None`` = inline). A factory is called with ``context``."""
        schema = self.schema
        if schema is None or isinstance(schema, dict) or _is_schema_type(schema):
            return schema
        resolved = schema(context)
        if not (resolved is None or isinstance(resolved, dict) or _is_schema_type(resolved)):
            raise ValueError(f"schema function returned {type(resolved).__name__}, expected a schema or None")
        return resolved

    def previous_value(self, thread_metadata: Mapping[str, Any] | None) -> Any:
        """The value stored by an earlier run (None when absent or not stored). A built-in reads
        its compatibility field first (``currentTask``…), which older threads may hold alone."""
        if not thread_metadata:
            return None
        om = thread_metadata.get("om") or {}
        if self._builtin and om.get(BUILTIN_MIRRORS.get(self.slug, "")) is not None:
            return om[BUILTIN_MIRRORS[self.slug]]
        path = self.storage_path
        return None if path is None else read_path(om, path)

    def persist(self, thread_metadata: dict[str, Any], value: Any) -> None:
        """Store ``value`` in ``thread_metadata["om"]`` (and mirror a built-in value)."""
        store_extracted(thread_metadata.setdefault("om", {}), self.slug, value, self.metadata_key_path)

    def __repr__(self) -> str:
        kind = "inline" if self.schema is None else "structured"
        return f"{type(self).__name__}(slug={self.slug!r}, {kind})"


def _builtin(name: str, instructions: str) -> Extractor:
    extractor = Extractor.__new__(Extractor)
    extractor.name = name
    extractor.slug = slugify(name)
    extractor.instructions = instructions
    extractor.schema = None
    extractor.include_previous_extraction = True
    extractor.metadata_key_path = DEFAULT_METADATA_KEY_PATH
    extractor.on_extracted = None
    extractor._builtin = True
    return extractor


CURRENT_TASK = _builtin(
    "current-task",
    'What the assistant is working on right now ("Primary: …"), then other open tasks '
    '("Secondary: …", marking those waiting for the user).',
)
SUGGESTED_RESPONSE = _builtin(
    "suggested-response",
    "A short hint for the assistant's next message, e.g. \"Wait for the user's answer before going on.\"",
)
THREAD_TITLE = _builtin(
    "thread-title",
    "A short title (2-6 words) for the conversation, changed only when the topic clearly moved on.",
)


def builtin_extractors(source: str = "observation", *, thread_title: bool = False) -> list[Extractor]:
    """The built-ins that apply to one OM operation: the Observer gives the current task and the
    suggested response (and the thread title when ``observation.threadTitle`` is on); the
    Reflector only a suggested response (its current task is ignored, om-reference §4.5)."""
    if source == "reflection":
        return [SUGGESTED_RESPONSE]
    if source != "observation":
        raise ValueError(f"source must be 'observation' or 'reflection', got {source!r}")
    return [CURRENT_TASK, SUGGESTED_RESPONSE, *([THREAD_TITLE] if thread_title else [])]


# --- working memory ----------------------------------------------------------------------------

WORKING_MEMORY_KEY = "workingMemory"
DEFAULT_WORKING_MEMORY_TEMPLATE = """\
# About the user
- Name:
- Location and time zone:
- Work or studies:
- Preferences and dislikes:

# Ongoing
- Goals and projects:
- Open questions and promises to follow up:
"""


class WorkingMemoryExtractor(Extractor):
    """Keeps the thread's working-memory document up to date from the observations
    (``observation.manageWorkingMemory``).

    The document lives in ``thread.metadata["workingMemory"]`` (not in the OM metadata, so its
    payload is not stored twice). Without a schema it is a markdown document the Observer rewrites
    in full inside ``<working-memory>…</working-memory>``; with a ``schema`` (a JSON working
    memory) it is extracted by a structured call and stored as JSON.
    """

    __slots__ = ("template",)

    def __init__(self, template: str | None = None, *, schema: Any = None) -> None:
        self.template = template or DEFAULT_WORKING_MEMORY_TEMPLATE
        super().__init__("working memory", self._instructions, schema, metadata_key_path=False)
        self._builtin = True

    def _check_reserved(self) -> None:  # "working-memory" is this class's own slug
        return None

    def _instructions(self, context: ExtractorContext) -> str:
        if self.schema is not None:
            return (
                "The user's working memory: lasting facts about the user and their ongoing goals. "
                "Start from the previous value, change only what the conversation changed, and "
                "return the whole value."
            )
        return (
            "The user's working memory as a complete markdown document: lasting facts about the user "
            "and their ongoing goals. Start from the previous document (shown under Prior Thread "
            "Metadata, or else this template), keep every line that is still true, update what "
            "changed, add what is new, and write out the FULL updated document, not just the "
            f"changes. Template:\n{self.template}"
        )

    def previous_value(self, thread_metadata: Mapping[str, Any] | None) -> Any:
        """The current working-memory document (``thread.metadata["workingMemory"]``)."""
        return (thread_metadata or {}).get(WORKING_MEMORY_KEY)

    def persist(self, thread_metadata: dict[str, Any], value: Any) -> None:
        """Replace the working-memory document."""
        thread_metadata[WORKING_MEMORY_KEY] = value


# --- validation --------------------------------------------------------------------------------


def as_extractor(value: Any, option: str = "observation.extract") -> Extractor:
    """``value`` as an :class:`Extractor`: an instance is returned as is; a mapping
    (``{"name", "instructions", "schema"?, "includePreviousExtraction"?, "metadataKeyPath"?}``,
    e.g. from a JSON config) is built into one."""
    if isinstance(value, Extractor):
        return value
    if isinstance(value, Mapping):
        fields = dict(value)
        if "name" not in fields or "instructions" not in fields:
            raise ConfigError(option, f"an extractor needs 'name' and 'instructions', got keys {sorted(fields)}")
        try:
            return Extractor(**fields)
        except TypeError as err:
            raise ConfigError(option, str(err)) from None
    raise ConfigError(option, f"expected an Extractor or an object with name and instructions, got {value!r}")


def validate_extractors(extractors: Sequence[Any] | None, option: str = "observation.extract") -> tuple[Extractor, ...]:
    """Check a list of extractors and return them as :class:`Extractor` instances.

    Raises:
        ConfigError: (``option``) an entry is no extractor, two entries share a slug, or a custom
            extractor uses a reserved slug.
    """
    result: list[Extractor] = []
    seen: dict[str, str] = {}
    for index, value in enumerate(extractors or ()):
        try:
            extractor = as_extractor(value, f"{option}[{index}]")
        except ConfigError as err:
            raise ConfigError(option, f"entry {index}: {err.detail}") from None
        if not extractor.builtin and extractor.slug in RESERVED_SLUGS:
            raise ConfigError(option, f"entry {index}: slug {extractor.slug!r} is reserved by the engine")
        if extractor.slug in seen:
            raise ConfigError(
                option,
                f"extractors {seen[extractor.slug]!r} and {extractor.name!r} have the same "
                f"slug {extractor.slug!r}; names must be unique after slugging",
            )
        seen[extractor.slug] = extractor.name
        result.append(extractor)
    return tuple(result)


# --- planning ----------------------------------------------------------------------------------


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
            failures.append(_failure(extractor.slug, f"cannot resolve the extractor: {_describe_user(err)}"))
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
        items.append((extractor.slug, value if isinstance(value, str) else _compact_json(value)))
    return items


# --- structured extraction ---------------------------------------------------------------------

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
        user.append(f"## Previous value\n\n{_compact_json(previous)}\n\nUpdate it; keep what is still true.\n")
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
            failures.append(_failure(resolved.slug, _describe(err)))
    return values, failures


# --- hooks and persistence ---------------------------------------------------------------------


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
        raise ExtractionFailed(_failure(extractor.slug, f"onExtracted failed: {_describe_user(err)}")) from err
    return value if replaced is None else replaced


def read_path(root: Mapping[str, Any], path: str) -> Any:
    """The value at dot path ``path`` in nested mappings (None when any step is missing)."""
    node: Any = root
    for key in path.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def store_extracted(
    thread_om: dict[str, Any],
    slug: str,
    value: Any,
    metadata_key_path: str | bool = DEFAULT_METADATA_KEY_PATH,
) -> str | None:
    """Store ``value`` in the thread's OM metadata and return the dot path used.

    ``metadata_key_path`` ending in ``.`` gets the slug appended (default ``extracted.<slug>``);
    ``False`` stores nothing (returns None). Built-in slugs are also mirrored into
    ``currentTask``/``suggestedResponse``/``threadTitle``.

    Raises:
        ValueError: the value is not JSON-serialisable, or a step of the path holds a non-object.
    """
    if slug in BUILTIN_MIRRORS:
        thread_om[BUILTIN_MIRRORS[slug]] = value
    if metadata_key_path is False:
        return None
    path = _check_key_path(metadata_key_path)
    assert isinstance(path, str)
    full = path + slug if path.endswith(".") else path
    _compact_json(value)  # fail here, not in the storage layer
    keys = full.split(".")
    node = thread_om
    for depth, key in enumerate(keys[:-1]):
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        elif not isinstance(child, dict):
            raise ValueError(
                f"cannot store at {full!r}: {'.'.join(keys[: depth + 1])!r} holds a "
                f"{type(child).__name__}, not an object"
            )
        node = child
    node[keys[-1]] = value
    return full


# --- the whole pipeline ------------------------------------------------------------------------


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
                _failure(r.slug, "no model client for structured extraction") for r in plan.structured
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
            result.failures.append(_failure(slug, f"cannot store the value: {err}"))
            continue
        result.values[slug] = value
    return result


# --- small helpers -----------------------------------------------------------------------------


def _failure(slug: str, error: str) -> dict[str, str]:
    return {"slug": slug, "error": error}


def _describe(err: BaseException) -> str:
    text = str(err).strip()
    return text if isinstance(err, ValueError) and text else f"{type(err).__name__}: {text or '(no message)'}"


def _describe_user(err: BaseException) -> str:
    """An error raised by user code: always with its type, which the user will want to see."""
    return f"{type(err).__name__}: {str(err).strip() or '(no message)'}"


def _compact_json(value: Any) -> str:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError) as err:
        raise ValueError(f"value is not JSON-serialisable: {err}") from None


__all__ = [
    "BUILTIN_MIRRORS",
    "BUILTIN_SLUGS",
    "CURRENT_TASK",
    "DEFAULT_METADATA_KEY_PATH",
    "DEFAULT_WORKING_MEMORY_TEMPLATE",
    "OFFLINE_STRUCTURED_ERROR",
    "RESERVED_SLUGS",
    "SUGGESTED_RESPONSE",
    "THREAD_TITLE",
    "WORKING_MEMORY_KEY",
    "ExtractionFailed",
    "ExtractionPlan",
    "ExtractionResult",
    "Extractor",
    "ExtractorContext",
    "ResolvedExtractor",
    "WorkingMemoryExtractor",
    "apply_on_extracted",
    "as_extractor",
    "builtin_extractors",
    "inline_extractor_prompt_items",
    "parse_json_reply",
    "plan_extraction",
    "prior_extraction_items",
    "read_path",
    "run_extractors",
    "run_structured_extractors",
    "slugify",
    "store_extracted",
    "structured_request_messages",
    "validate_extractors",
]

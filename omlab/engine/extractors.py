"""Extractors: values OM pulls out of a conversation besides the observation log (seed: Extractor API).

An :class:`Extractor` names a value (``name`` → ``slug``), says what to extract (``instructions``)
and, optionally, its shape (``schema``):

* **inline** (no schema): the Observer or Reflector writes the value in its own reply as a
  ``<slug>…</slug>`` section, parsed by :func:`omlab.engine.observation_text.parse_observer_output`
  (``inline_slugs``);
* **structured** (a schema): after the OM call, one follow-up structured-output request per
  extractor asks the model for JSON matching the schema (:mod:`omlab.engine.structured_extraction`).

The built-in values (:data:`CURRENT_TASK`, :data:`SUGGESTED_RESPONSE`, :data:`THREAD_TITLE`) are
Extractor instances that go through the same pipeline; their prompt text already lives in the
Observer's output format, so they are not repeated as inline instructions by default.

Values are persisted in the thread's OM metadata (``thread.metadata["om"]``) at
``metadata_key_path`` (default ``extracted.<slug>``); built-in values are mirrored into the
compatibility fields ``currentTask``, ``suggestedResponse`` and ``threadTitle``. This module holds
the extractors themselves and where their values are stored; an operation's plan is
:mod:`omlab.engine.extraction_plan`, its run :mod:`omlab.engine.extraction_pipeline`.

Offline models (``omlab/...``) only speak the observation format, so a structured extractor on
an offline model fails with :data:`OFFLINE_STRUCTURED_ERROR` instead of calling it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from omlab.engine.errors import ConfigError

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


# --- persistence -------------------------------------------------------------------------------


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
    compact_json(value)  # fail here, not in the storage layer
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


def compact_json(value: Any) -> str:
    """A value as compact, key-sorted JSON (pydantic models dumped); ``ValueError`` when it is not JSON."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError) as err:
        raise ValueError(f"value is not JSON-serialisable: {err}") from None

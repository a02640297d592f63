"""Extractors: slugs, validation, inline and structured extraction, hooks and persistence."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from omlab.engine.errors import ConfigError
from omlab.engine.extraction_pipeline import ExtractionFailed, apply_on_extracted, run_extractors
from omlab.engine.extraction_plan import inline_extractor_prompt_items, plan_extraction, prior_extraction_items
from omlab.engine.extractors import (
    CURRENT_TASK,
    OFFLINE_STRUCTURED_ERROR,
    SUGGESTED_RESPONSE,
    THREAD_TITLE,
    Extractor,
    WorkingMemoryExtractor,
    builtin_extractors,
    slugify,
    store_extracted,
    validate_extractors,
)
from omlab.engine.observation_text import parse_observer_output
from omlab.engine.prompts import observer_system_prompt
from omlab.engine.structured_extraction import parse_json_reply, run_structured_extractors
from omlab.llm.client import ModelClient
from omlab.llm.pricing import Price
from omlab.llm.types import ModelRequest, ModelResponse, Usage

CONTEXT = {"source": "observation", "threadId": "t1", "resourceId": "u1"}


class Profile(BaseModel):
    name: str | None = None
    timezone: str | None = None


class FakeClient:
    """Answers ``complete`` from a queue of texts (or raises queued exceptions)."""

    def __init__(self, *replies: Any, model: str = "openai/gpt-4o-mini") -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []
        self.model = model

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return ModelResponse(text=reply, usage=Usage(10, 5), model=self.model)


# --- slugs and validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("User profile", "user-profile"),
        ("  Préférences d'été!! ", "preferences-d-ete"),
        ("A__B--c", "a-b-c"),
        ("Top 10 Films", "top-10-films"),
    ],
)
def test_slug_is_derived_from_the_name(name, slug):
    assert slugify(name) == slug
    assert Extractor(name, "extract it").slug == slug


@pytest.mark.parametrize("name", ["", "   ", "!!!", "日本語"])
def test_names_without_a_slug_are_rejected(name):
    with pytest.raises(ConfigError) as info:
        Extractor(name, "extract it")
    assert info.value.option == "Extractor.name"


@pytest.mark.parametrize(
    "name",
    [
        "Current task",
        "suggested response",
        "Thread title",
        "observations",
        "Thread",
        "observation group",
        "System reminder",
        "Working memory",
    ],
)
def test_custom_extractors_cannot_take_reserved_slugs(name):
    with pytest.raises(ConfigError, match="reserved"):
        Extractor(name, "extract it")


def test_duplicate_slugs_in_one_list_are_rejected():
    first, second = Extractor("User profile", "a"), Extractor("user  PROFILE", "b")
    with pytest.raises(ConfigError) as info:
        validate_extractors([first, second], option="reflection.extract")
    assert info.value.option == "reflection.extract"
    assert "user-profile" in str(info.value)


def test_validate_extractors_accepts_builtins_mappings_and_rejects_junk():
    validated = validate_extractors(
        [
            CURRENT_TASK,
            WorkingMemoryExtractor(),
            {"name": "Mood", "instructions": "the user's mood", "includePreviousExtraction": False},
        ]
    )
    assert [e.slug for e in validated] == ["current-task", "working-memory", "mood"]
    assert validated[2].include_previous_extraction is False
    with pytest.raises(ConfigError, match="entry 0"):
        validate_extractors([42])
    with pytest.raises(ConfigError, match="name"):
        validate_extractors([{"instructions": "x"}])
    assert validate_extractors(None) == ()


def test_camel_case_options_and_conflicts():
    def hook(ctx):
        return None

    extractor = Extractor(
        "Plan", "the plan", includePreviousExtraction=False, metadataKeyPath="profile.plan", onExtracted=hook
    )
    assert (extractor.include_previous_extraction, extractor.metadata_key_path, extractor.on_extracted) == (
        False,
        "profile.plan",
        hook,
    )
    with pytest.raises(ConfigError, match="given twice"):
        Extractor("Plan", "x", metadata_key_path="a.", metadataKeyPath="b.")
    with pytest.raises(ConfigError) as info:
        Extractor("Plan", "x", colour="red")
    assert info.value.option == "Extractor.colour"


@pytest.mark.parametrize("path", ["a..b", ".a", "", "  ", 3, True])
def test_bad_metadata_paths_are_rejected(path):
    with pytest.raises(ConfigError, match="metadataKeyPath"):
        Extractor("Plan", "x", metadata_key_path=path)


def test_bad_instructions_schema_and_hook_are_rejected():
    with pytest.raises(ConfigError, match="instructions"):
        Extractor("Plan", "   ")
    with pytest.raises(ConfigError, match="instructions"):
        Extractor("Plan", 12)
    with pytest.raises(ConfigError, match="schema"):
        Extractor("Plan", "x", schema=42)
    with pytest.raises(ConfigError, match="onExtracted"):
        Extractor("Plan", "x", on_extracted="nope")


def test_storage_paths():
    assert Extractor("User profile", "x").storage_path == "extracted.user-profile"
    assert Extractor("User profile", "x", metadata_key_path="profile.").storage_path == "profile.user-profile"
    assert Extractor("User profile", "x", metadata_key_path="profile.data").storage_path == "profile.data"
    assert Extractor("User profile", "x", metadata_key_path=False).storage_path is None


def test_builtins_are_extractors_in_the_same_pipeline():
    assert [e.slug for e in builtin_extractors("observation")] == ["current-task", "suggested-response"]
    assert builtin_extractors("observation", thread_title=True)[-1] is THREAD_TITLE
    assert builtin_extractors("reflection") == [SUGGESTED_RESPONSE]
    assert all(isinstance(e, Extractor) and e.builtin for e in (CURRENT_TASK, SUGGESTED_RESPONSE, THREAD_TITLE))


# --- prompts and inline values -------------------------------------------------------------------


def test_inline_prompt_items_resolve_dynamic_instructions_and_skip_builtins():
    mood = Extractor("Mood", lambda ctx: f"the mood of the user in thread {ctx['threadId']}")
    profile = Extractor("Profile", "profile facts", schema=Profile)
    items = inline_extractor_prompt_items([CURRENT_TASK, mood, profile], CONTEXT)
    assert items == [("mood", "the mood of the user in thread t1")]
    with_builtins = inline_extractor_prompt_items([CURRENT_TASK, mood], CONTEXT, include_builtins=True)
    assert [slug for slug, _ in with_builtins] == ["current-task", "mood"]


def test_a_schema_function_decides_inline_or_structured_per_run():
    extractor = Extractor("Notes", "notes", schema=lambda ctx: Profile if ctx["source"] == "reflection" else None)
    assert [r.slug for r in plan_extraction([extractor], CONTEXT).inline] == ["notes"]
    plan = plan_extraction([extractor], {**CONTEXT, "source": "reflection"})
    assert [r.slug for r in plan.structured] == ["notes"] and plan.inline == []


def test_failing_dynamic_parts_are_failures_not_crashes():
    def broken(ctx):
        raise RuntimeError("boom")

    plan = plan_extraction([Extractor("Mood", broken), Extractor("Ok", "fine")], CONTEXT)
    assert plan.failures == [{"slug": "mood", "error": "cannot resolve the extractor: RuntimeError: boom"}]
    assert plan.inline_slugs == ["ok"]


def test_inline_sections_round_trip_through_prompt_and_parser():
    mood = Extractor("Mood", "the user's mood in one word")
    plan = plan_extraction([CURRENT_TASK, mood], CONTEXT)
    prompt = observer_system_prompt(inline_extractors=plan.inline_prompt_items())
    assert "Also output <mood>…</mood>: the user's mood in one word" in prompt
    reply = (
        "<observations>\nDate: Mar 4, 2025\n* 🔴 (10:00) User stated they feel great\n</observations>\n"
        "<current-task>\nPrimary: plan the trip\n</current-task>\n<mood>\ncheerful\n</mood>\n"
    )
    output = parse_observer_output(reply, inline_slugs=plan.inline_slugs)
    assert output.extracted["mood"] == "cheerful"
    assert "<mood>" not in output.observations


# --- persistence ---------------------------------------------------------------------------------


def test_store_extracted_paths_and_mirrors():
    om: dict[str, Any] = {}
    assert store_extracted(om, "mood", "calm") == "extracted.mood"
    assert store_extracted(om, "plan", {"a": 1}, "profile.data") == "profile.data"
    assert store_extracted(om, "plan", "x", "profile.") == "profile.plan"
    assert store_extracted(om, "skip", "x", False) is None
    assert store_extracted(om, "current-task", "Primary: fix bug") == "extracted.current-task"
    assert om == {
        "extracted": {"mood": "calm", "current-task": "Primary: fix bug"},
        "profile": {"data": {"a": 1}, "plan": "x"},
        "currentTask": "Primary: fix bug",
    }


def test_store_extracted_refuses_to_clobber_a_non_object_or_store_non_json():
    om = {"profile": "a string"}
    with pytest.raises(ValueError, match="'profile' holds a str"):
        store_extracted(om, "plan", "x", "profile.")
    with pytest.raises(ValueError, match="JSON"):
        store_extracted({}, "plan", object())


def test_prior_extraction_items_respect_include_previous():
    metadata = {
        "om": {"extracted": {"mood": "calm", "profile": {"name": "Ana"}, "secret": "x"}},
        "workingMemory": "# About the user\n- Name: Ana",
    }
    extractors = [
        Extractor("Mood", "m"),
        Extractor("Profile", "p", schema=Profile),
        Extractor("Secret", "s", include_previous_extraction=False),
        Extractor("Missing", "nothing stored yet"),
        WorkingMemoryExtractor(),
    ]
    assert prior_extraction_items(extractors, metadata) == [
        ("mood", "calm"),
        ("profile", '{"name":"Ana"}'),
        ("working-memory", "# About the user\n- Name: Ana"),
    ]


# --- structured extraction -----------------------------------------------------------------------


async def test_structured_extraction_sends_a_json_schema_and_validates_the_reply():
    client = FakeClient('{"name": "Ana", "timezone": "Europe/Lisbon"}')
    profile = Extractor("User profile", "stable profile facts", schema=Profile)
    values, failures = await run_structured_extractors(
        [profile],
        client=client,
        model="openai/gpt-4o-mini",
        observations_text="* 🔴 User is Ana",
        context=CONTEXT,
        previous={"user-profile": {"name": "Anna"}},
    )
    assert failures == []
    assert values == {"user-profile": {"name": "Ana", "timezone": "Europe/Lisbon"}}
    request = client.requests[0]
    assert request.role == "extractor"
    assert request.response_format["type"] == "json_schema"
    schema = request.response_format["json_schema"]["schema"]
    assert request.response_format["json_schema"]["name"] == "user_profile"
    assert set(schema["properties"]) == {"name", "timezone"}
    user = request.messages[1]["content"]
    assert "* 🔴 User is Ana" in user and '{"name":"Anna"}' in user and "stable profile facts" in user


async def test_structured_extraction_goes_through_the_model_client():
    seen: list[ModelRequest] = []

    async def backend(attempt, request, timeout):
        seen.append(request)
        return '```json\n{"name": "Ana"}\n```', Usage(20, 4), "stop", {}

    # an explicit price keeps litellm's price map (a slow import) out of the test
    client = ModelClient(remote=backend, prices={"openai/gpt-4o-mini": Price(0.15, 0.6)})
    values, failures = await run_structured_extractors(
        [Extractor("Profile", "facts", schema=Profile)],
        client=client,
        model="openai/gpt-4o-mini",
        observations_text="obs",
        context=CONTEXT,
    )
    assert (values, failures) == ({"profile": {"name": "Ana", "timezone": None}}, [])
    assert seen[0].response_format["json_schema"]["schema"]["type"] == "object"
    assert client.calls[0].role == "extractor" and client.calls[0].error is None


async def test_invalid_json_and_schema_mismatch_are_failures():
    client = FakeClient("I think the name is Ana.", '{"name": 42}', RuntimeError("rate limited"))
    extractors = [Extractor(n, "facts", schema=Profile) for n in ("First", "Second", "Third")]
    values, failures = await run_structured_extractors(
        extractors,
        client=client,
        model="openai/gpt-4o-mini",
        observations_text="",
        context=CONTEXT,
    )
    assert values == {}
    assert [f["slug"] for f in failures] == ["first", "second", "third"]
    assert failures[0]["error"].startswith("the reply is not valid JSON")
    assert failures[1]["error"].startswith("does not match the schema: name:")
    assert failures[2]["error"] == "RuntimeError: rate limited"


async def test_non_object_schemas_are_wrapped_and_unwrapped():
    client = FakeClient('{"value": ["Lisbon", "Porto"]}')
    values, failures = await run_structured_extractors(
        [Extractor("Cities", "cities mentioned", schema=list[str])],
        client=client,
        model="openai/gpt-4o-mini",
        observations_text="",
        context=CONTEXT,
    )
    assert failures == [] and values == {"cities": ["Lisbon", "Porto"]}
    schema = client.requests[0].response_format["json_schema"]["schema"]
    assert schema["required"] == ["value"] and schema["properties"]["value"]["type"] == "array"


async def test_dict_json_schemas_are_validated():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    client = FakeClient('{"n": 3}', '{"n": "three"}')
    extractors = [Extractor("Count", "a count", schema=schema), Extractor("Other", "a count", schema=schema)]
    values, failures = await run_structured_extractors(
        extractors,
        client=client,
        model="openai/gpt-4o-mini",
        observations_text="",
        context=CONTEXT,
    )
    assert values == {"count": {"n": 3}}
    assert failures[0]["slug"] == "other" and "does not match the schema" in failures[0]["error"]


async def test_offline_models_cannot_do_structured_output():
    client = FakeClient()
    values, failures = await run_structured_extractors(
        [Extractor("Profile", "facts", schema=Profile)],
        client=client,
        model="omlab/observer",
        observations_text="",
        context=CONTEXT,
    )
    assert values == {} and failures == [{"slug": "profile", "error": OFFLINE_STRUCTURED_ERROR}]
    assert client.requests == []
    # a fallback chain that ends on an offline model is caught after the call
    fallback = FakeClient('{"name": "x"}', model="omlab/observer")
    _, failures = await run_structured_extractors(
        [Extractor("Profile", "facts", schema=Profile)],
        client=fallback,
        model=[{"model": "openai/gpt-4o-mini"}, {"model": "omlab/observer"}],
        observations_text="",
        context=CONTEXT,
    )
    assert failures == [{"slug": "profile", "error": OFFLINE_STRUCTURED_ERROR}]


def test_parse_json_reply_tolerates_fences_and_prose():
    assert parse_json_reply('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_reply('Here you go: {"a": [1, 2]} hope it helps') == {"a": [1, 2]}
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_json_reply("no json here")


# --- hooks and the whole pipeline ----------------------------------------------------------------


async def test_on_extracted_replaces_keeps_or_fails():
    upper = Extractor("Mood", "m", on_extracted=lambda ctx: ctx["value"].upper())
    assert await apply_on_extracted(upper, "calm", CONTEXT) == "CALM"
    keep = Extractor("Mood", "m", on_extracted=lambda ctx: None)
    assert await apply_on_extracted(keep, "calm", CONTEXT) == "calm"

    async def add_previous(ctx):
        return f"{ctx['previous']} -> {ctx['value']} ({ctx['threadId']})"

    chained = Extractor("Mood", "m", on_extracted=add_previous)
    assert await apply_on_extracted(chained, "calm", CONTEXT, previous="tense") == "tense -> calm (t1)"

    def broken(ctx):
        raise KeyError("nope")

    with pytest.raises(ExtractionFailed) as info:
        await apply_on_extracted(Extractor("Mood", "m", on_extracted=broken), "calm", CONTEXT)
    assert info.value.failure == {"slug": "mood", "error": "onExtracted failed: KeyError: 'nope'"}


async def test_run_extractors_collects_hooks_and_persists():
    reply = (
        "<observations>\n* 🔴 (10:00) User stated they are Ana\n</observations>\n"
        "<current-task>\nPrimary: book flights\n</current-task>\n"
        "<mood>\ncheerful\n</mood>\n<topic>\ntravel\n</topic>\n"
    )
    mood = Extractor("Mood", "mood", on_extracted=lambda ctx: ctx["value"].upper())

    def refuse(ctx):
        raise ValueError("topic rejected")

    topic = Extractor("Topic", "topic", on_extracted=refuse)
    profile = Extractor("Profile", "facts", schema=Profile, metadata_key_path="profile.")
    extractors = [*builtin_extractors("observation"), mood, topic, profile]
    plan = plan_extraction(extractors, CONTEXT)
    output = parse_observer_output(reply, inline_slugs=plan.inline_slugs)
    metadata: dict[str, Any] = {"om": {"suggestedResponse": "old hint"}}
    result = await run_extractors(
        extractors,
        output=output,
        context=CONTEXT,
        thread_metadata=metadata,
        plan=plan,
        client=FakeClient('{"name": "Ana"}'),
        model="openai/gpt-4o-mini",
        observations_text=output.observations,
    )
    assert result.values == {
        "current-task": "Primary: book flights",
        "mood": "CHEERFUL",
        "profile": {"name": "Ana", "timezone": None},
    }
    assert result.failures == [{"slug": "topic", "error": "onExtracted failed: ValueError: topic rejected"}]
    assert metadata == {
        "om": {
            "suggestedResponse": "old hint",  # no new hint: the previous one is carried forward
            "currentTask": "Primary: book flights",
            "extracted": {"current-task": "Primary: book flights", "mood": "CHEERFUL"},
            "profile": {"profile": {"name": "Ana", "timezone": None}},
        }
    }


async def test_structured_extractors_without_a_client_fail_cleanly():
    result = await run_extractors(
        [Extractor("Profile", "facts", schema=Profile)],
        output=None,
        context=CONTEXT,
        thread_metadata={},
    )
    assert result.values == {} and result.failures == [
        {"slug": "profile", "error": "no model client for structured extraction"}
    ]


async def test_working_memory_is_kept_in_thread_metadata_not_om_metadata():
    extractor = WorkingMemoryExtractor()
    plan = plan_extraction([extractor], CONTEXT)
    ((slug, instructions),) = plan.inline_prompt_items(include_builtins=True)
    assert slug == "working-memory" and "FULL updated document" in instructions
    # a built-in, but the prompts have no native section for it: it is always asked for
    assert [slug for slug, _ in plan.inline_prompt_items()] == ["working-memory"]
    document = "# About the user\n- Name: Ana\n- Location and time zone: Lisbon"
    output = parse_observer_output(
        f"<observations>\n* 🔴 (10:00) x\n</observations>\n<working-memory>\n{document}\n</working-memory>\n",
        inline_slugs=plan.inline_slugs,
    )
    metadata: dict[str, Any] = {"workingMemory": "# old"}
    result = await run_extractors([extractor], output=output, context=CONTEXT, thread_metadata=metadata)
    assert result.values == {"working-memory": document}
    assert metadata == {"workingMemory": document}


async def test_json_working_memory_uses_structured_extraction():
    class Memory(BaseModel):
        name: str
        goals: list[str] = []

    extractor = WorkingMemoryExtractor(schema=Memory)
    metadata: dict[str, Any] = {"workingMemory": {"name": "Ana", "goals": []}}
    client = FakeClient(json.dumps({"name": "Ana", "goals": ["run a marathon"]}))
    result = await run_extractors(
        [extractor],
        output=None,
        context=CONTEXT,
        thread_metadata=metadata,
        client=client,
        model="openai/gpt-4o-mini",
    )
    assert result.failures == []
    assert metadata == {"workingMemory": {"name": "Ana", "goals": ["run a marathon"]}}
    assert '"name":"Ana"' in client.requests[0].messages[1]["content"]  # the previous value is shown


def test_builtin_priors_read_the_compatibility_fields():
    metadata = {
        "om": {
            "currentTask": "Primary: pack",
            "threadTitle": "Trip",
            "extracted": {"suggested-response": "Ask"},
        }
    }
    builtins = builtin_extractors("observation", thread_title=True)
    assert prior_extraction_items(builtins, metadata) == [
        ("current-task", "Primary: pack"),
        ("suggested-response", "Ask"),
        ("thread-title", "Trip"),
    ]


async def test_an_empty_or_looping_structured_reply_is_retried_once_then_a_failure():
    loop = '{"name": "Ana"}\n' + "the same line again and again, forever and ever\n" * 300
    client = FakeClient("", '{"name": "Ana"}', "  \n", loop, "")
    extractors = [Extractor(n, "facts", schema=Profile) for n in ("First", "Second")]
    values, failures = await run_structured_extractors(
        extractors, client=client, model="openai/gpt-4o-mini", observations_text="", context=CONTEXT
    )
    assert values == {"first": {"name": "Ana", "timezone": None}}
    assert failures == [{"slug": "second", "error": "the reply was empty or degenerate twice"}]
    assert [r.cache_salt for r in client.requests] == [None, "retry-2", None, "retry-2"]

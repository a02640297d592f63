"""The recall tool: paging, detail levels, filters, caps, thread listing and search."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.engine.messages import Message, Part
from omlab.engine.observation_groups import parse_observation_groups, wrap_observation_group
from omlab.engine.recall import OUTPUT_TOKEN_CAP, RecallTool
from omlab.engine.recall_schema import retrieval_instructions, tool_schema
from omlab.engine.recall_search import EmbeddingSearchIndex, KeywordSearchIndex, searchable_text
from omlab.engine.record import Thread
from omlab.storage import InMemoryStorage
from omlab.tokens.tokenx import estimate_token_count

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
LONG_TEXT = "The quick brown fox jumps over the lazy dog near the river bank in Lisbon, " * 3


def _id(i: int) -> str:
    return f"m{i:02d}"


def _thread_one() -> list[Message]:
    """30 messages, one a minute; m07 is long, m10 has a tool call, m11 is data-only, m12 has
    three parts."""
    messages = []
    for i in range(30):
        role = "user" if i % 2 == 0 else "assistant"
        text = LONG_TEXT if i == 7 else f"message number {i}"
        parts = [Part(type="text", text=text)]
        if i == 10:
            parts = [
                Part(type="text", text="Let me search."),
                Part(
                    type="tool-invocation",
                    tool_call_id="c1",
                    tool_name="web_search",
                    args={"query": "dentist lisbon", "limit": 3},
                    state="result",
                    result={"items": [f"Clinic {n} on Rua Augusta, open weekdays" for n in range(20)]},
                ),
            ]
        if i == 11:
            parts = [Part(type="data-om-status", metadata={"x": 1})]
        if i == 12:
            parts = [
                Part(type="reasoning", text="thinking about maps"),
                Part(
                    type="tool-invocation",
                    tool_call_id="c2",
                    tool_name="get_map",
                    args={"city": "Lisbon"},
                    state="result",
                    result="map.png",
                ),
                Part(type="text", text="Here is the map of Lisbon."),
            ]
        messages.append(Message(_id(i), role, parts, T0 + timedelta(minutes=i), thread_id="t1", resource_id="u1"))
    return messages


@pytest.fixture()
def storage() -> InMemoryStorage:
    store = InMemoryStorage()
    store.save_thread(Thread("t1", "u1", T0, T0 + timedelta(days=1), title="Trip planning"))
    store.save_thread(Thread("t2", "u1", T0 + timedelta(days=9), T0 + timedelta(days=9), title="Cooking"))
    store.save_thread(Thread("t3", "u2", T0, T0, title="Someone else"))
    store.save_messages(_thread_one())
    store.save_messages(
        [
            Message.of(
                "user",
                "How long should risotto rest?",
                T0 + timedelta(days=9),
                id="c00",
                thread_id="t2",
                resource_id="u1",
            ),
            Message.of(
                "assistant",
                "Rest the risotto two minutes.",
                T0 + timedelta(days=9, minutes=1),
                id="c01",
                thread_id="t2",
                resource_id="u1",
            ),
            Message.of("user", "My secret risotto", T0, id="x00", thread_id="t3", resource_id="u2"),
        ]
    )
    return store


def _tool(storage, scope="resource", **kw) -> RecallTool:
    return RecallTool(storage, scope=scope, current_thread_id="t1", resource_id="u1", **kw)


def _ids(reply) -> list[str]:
    return re.findall(r"\*\* \[([^\]]+)\]:", reply["messages"])


# --- paging --------------------------------------------------------------------------------------


def test_paging_forward_from_a_group_range_start(storage):
    log = wrap_observation_group("* obs", group_id="g1", start_message_id="m05", end_message_id="m09")
    start = parse_observation_groups(log)[0].start_message_id
    tool = _tool(storage)
    first = tool.run({"cursor": start, "limit": 5})
    assert _ids(first) == ["m05", "m06", "m07", "m08", "m09"]
    assert (first["count"], first["page"], first["limit"], first["detail"], first["cursor"]) == (
        5,
        1,
        5,
        "low",
        "m05",
    )
    assert first["hasNextPage"] and first["hasPrevPage"]
    second = tool.run({"cursor": start, "limit": 5, "page": 2})
    assert _ids(second) == ["m10", "m12", "m13", "m14", "m15"]  # m11 is data-only: skipped
    assert tool.run({"cursor": start, "limit": 5, "page": 0}) == first


def test_paging_backward_from_a_group_range_end(storage):
    tool = _tool(storage)
    back = tool.run({"cursor": "m20", "limit": 5, "page": -1})
    assert _ids(back) == ["m16", "m17", "m18", "m19", "m20"]
    assert _ids(tool.run({"cursor": "m20", "limit": 5, "page": -2})) == ["m10", "m12", "m13", "m14", "m15"]
    start = tool.run({"cursor": "m02", "limit": 5, "page": -1})
    assert _ids(start) == ["m00", "m01", "m02"] and not start["hasPrevPage"] and start["hasNextPage"]
    beyond = tool.run({"cursor": "m02", "limit": 5, "page": -2})
    assert beyond["count"] == 0 and beyond["messages"] == "No messages on this page."
    assert not beyond["hasPrevPage"] and beyond["hasNextPage"]


def test_paging_reaches_the_end(storage):
    end = _tool(storage).run({"cursor": "m27", "limit": 5})
    assert _ids(end) == ["m27", "m28", "m29"] and not end["hasNextPage"] and end["hasPrevPage"]


def test_anchors_and_thread_ids_without_cursor(storage):
    tool = _tool(storage)
    assert _ids(tool.run({"limit": 3})) == ["m00", "m01", "m02"]
    newest = tool.run({"anchor": "end", "limit": 3})
    assert _ids(newest) == ["m27", "m28", "m29"] and newest["cursor"] == "m29"
    assert _ids(tool.run({"anchor": "end", "limit": 3, "page": 2})) == ["m24", "m25", "m26"]
    assert _ids(tool.run({"threadId": "current", "limit": 2})) == ["m00", "m01"]
    other = tool.run({"threadId": "t2"})
    assert _ids(other) == ["c00", "c01"] and other["threadId"] == "t2" and other["count"] == 2
    assert tool.run({})["count"] == 20  # the default limit


def test_a_range_passed_as_cursor_returns_a_hint(storage):
    reply = _tool(storage).run({"cursor": "m05:m09"})
    assert reply["startId"] == "m05" and reply["endId"] == "m09"
    assert "'m05'" in reply["error"] and "'m09'" in reply["error"] and "ONE message id" in reply["error"]
    assert _tool(storage).run({"cursor": "m01:m02,m05:m09"})["endId"] == "m09"
    assert _tool(storage).run({"cursor": "nope"})["error"].startswith("no message with id 'nope'")


def test_thread_scope_confines_the_cursor_and_thread(storage):
    scoped = _tool(storage, scope="thread")
    assert "limited to the current thread" in scoped.run({"cursor": "c00"})["error"]
    assert "limited to the current thread" in scoped.run({"threadId": "t2"})["error"]
    assert scoped.run({"cursor": "m03", "limit": 1})["count"] == 1
    resource = _tool(storage)
    assert _ids(resource.run({"cursor": "c00"})) == ["c00", "c01"]
    assert "unknown thread 't3'" in resource.run({"cursor": "x00"})["error"]  # another user's thread
    assert "unknown thread" in resource.run({"threadId": "t404"})["error"]
    assert "drop one of" in resource.run({"cursor": "m03", "threadId": "t2"})["error"]


# --- detail --------------------------------------------------------------------------------------


def test_low_detail_format(storage):
    text = _tool(storage).run({"cursor": "m06", "limit": 2})["messages"]
    long = " ".join(LONG_TEXT.split())
    assert text == (
        "**user (2026-03-01 10:06:00Z)** [m06]:\n[p0] message number 6\n\n"
        f"**assistant (2026-03-01 10:07:00Z)** [m07]:\n[p0] {long[:120].rstrip()}…"
    )
    tool_message = _tool(storage).run({"cursor": "m10", "limit": 1})["messages"].split("\n")
    assert tool_message[0] == "**user (2026-03-01 10:10:00Z)** [m10]:"
    assert tool_message[1] == "[p0] Let me search."
    assert tool_message[2].startswith('[p1] [Tool Call: web_search] → {"items": ["Clinic 0 on Rua Augusta')
    result = tool_message[2].split(" → ", 1)[1]
    assert result.endswith("…") and len(result) == 121


def test_high_detail_shows_one_part_with_continuation_hints(storage):
    tool = _tool(storage)
    reply = tool.run({"cursor": "m12", "detail": "high"})
    assert reply["messages"].split("\n") == [
        "**user (2026-03-01 10:12:00Z)** [m12]: part 1 of 3",
        "[p0] [Reasoning]",
        "thinking about maps",
        "next part: partIndex=1 (cursor=m12)",
        "next message: cursor=m13",
    ]
    assert reply["count"] == 1 and reply["hasPrevPage"] and reply["hasNextPage"]
    call = tool.run({"cursor": "m10", "detail": "high", "partType": "tool-call"})["messages"]
    assert '[Tool Call: web_search]\n{\n  "query": "dentist lisbon",\n  "limit": 3\n}' in call
    assert "Tool Result" not in call
    backward = tool.run({"cursor": "m20", "detail": "high", "page": -1})["messages"]
    assert backward.startswith("**user (2026-03-01 10:20:00Z)** [m20]") and backward.endswith(
        "next message: cursor=m19, page=-1"
    )


def test_part_index_shows_one_part_in_full(storage):
    tool = _tool(storage)
    reply = tool.run({"cursor": "m12", "partIndex": 1})
    assert reply["messages"].split("\n") == [
        "**user (2026-03-01 10:12:00Z)** [m12]: part 2 of 3",
        "[p1] [Tool Call: get_map]",
        "{",
        '  "city": "Lisbon"',
        "}",
        "[Tool Result: get_map]",
        "map.png",
        "next part: partIndex=2 (cursor=m12)",
        "next message: cursor=m13",
    ]
    last = tool.run({"cursor": "m12", "partIndex": 2})["messages"]
    assert last.split("\n")[1] == "[p2] Here is the map of Lisbon." and "next part" not in last
    assert tool.run({"cursor": "m12", "partIndex": 3})["error"] == "message 'm12' has 3 part(s): partIndex 0 to 2"
    assert "partIndex needs cursor" in tool.run({"partIndex": 0})["error"]


def test_part_type_and_tool_name_filters(storage):
    tool = _tool(storage)
    calls = tool.run({"partType": "tool-call"})
    assert _ids(calls) == ["m10", "m12"]
    assert "[p1] [Tool Call: web_search]\n" in calls["messages"] + "\n" and "Let me search" not in calls["messages"]
    results = tool.run({"partType": "tool-result", "toolName": "get_map"})
    assert results["messages"] == "**user (2026-03-01 10:12:00Z)** [m12]:\n[p1] [Tool Result: get_map] map.png"
    assert _ids(tool.run({"partType": "reasoning"})) == ["m12"]
    assert tool.run({"toolName": "nothing"})["messages"] == "No messages match partType/toolName."


def test_the_whole_output_is_capped(storage):
    huge = " ".join(f"word{n}" for n in range(40_000))
    storage.save_messages(
        [Message.of("user", huge, T0 + timedelta(hours=2), id="big", thread_id="t1", resource_id="u1")]
    )
    reply = _tool(storage).run({"cursor": "big", "detail": "high"})
    assert reply["truncated"] is True
    full = estimate_token_count("**user (2026-03-01 12:00:00Z)** [big]: part 1 of 1\n[p0] " + huge)
    kept = reply["messages"].rsplit("\n", 1)[0]
    assert estimate_token_count(kept) <= OUTPUT_TOKEN_CAP
    assert reply["tokenOffset"] == full - estimate_token_count(kept)
    assert reply["tokenOffset"] > 10_000
    small = _tool(storage).run({"cursor": "m00", "limit": 2})
    assert "truncated" not in small and "tokenOffset" not in small


def test_parameter_errors_and_aliases(storage):
    tool = _tool(storage)
    assert "unknown parameter 'colour'" in tool.run({"colour": "red"})["error"]
    assert tool.run({"limit": 0})["error"] == "limit must be >= 1; got 0"
    assert "detail must be one of" in tool.run({"detail": "medium"})["error"]
    assert "mode must be one of" in tool.run({"mode": "graph"})["error"]
    assert _ids(tool.run({"thread_id": "t2", "page": "1", "limit": 1.0, "query": None})) == ["c00"]


async def test_the_tool_is_awaitable(storage):
    reply = await _tool(storage)(cursor="m01", limit=1)
    assert _ids(reply) == ["m01"]


# --- threads -------------------------------------------------------------------------------------


def test_threads_listing(storage):
    tool = _tool(storage)
    reply = tool.run({"mode": "threads"})
    assert reply == {
        "threads": (
            "- **Cooking** — id: `t2` · created 2026-03-10 10:00Z · updated 2026-03-10 10:00Z\n"
            "- **Trip planning** — id: `t1` · created 2026-03-01 10:00Z · updated 2026-03-02 10:00Z ← current"
        ),
        "count": 2,
        "page": 0,
        "hasMore": False,
    }
    assert tool.run({"mode": "threads", "before": "2026-03-05"})["threads"].count("\n") == 0
    assert "`t1`" in tool.run({"mode": "threads", "before": "2026-03-05"})["threads"]
    assert "`t2`" in tool.run({"mode": "threads", "after": "2026-03-05T00:00:00Z"})["threads"]
    paged = tool.run({"mode": "threads", "limit": 1})
    assert paged["count"] == 1 and paged["hasMore"] and "`t2`" in paged["threads"]
    assert "`t1`" in tool.run({"mode": "threads", "limit": 1, "page": 1})["threads"]
    assert "ISO 8601" in tool.run({"mode": "threads", "before": "last week"})["error"]
    scoped = _tool(storage, scope="thread").run({"mode": "threads"})
    assert scoped["count"] == 1 and "← current" in scoped["threads"]


# --- search --------------------------------------------------------------------------------------


def test_keyword_search(storage):
    index = KeywordSearchIndex()
    for thread in ("t1", "t2", "t3"):
        index.index(storage.get_messages(thread))
    tool = _tool(storage, search_index=index)
    reply = tool.run({"mode": "search", "query": "risotto rest"})
    assert reply["count"] == 2
    assert reply["results"].startswith("### Cooking — thread id: `t2`\n- score ")
    assert "cursor: `c00`" in reply["results"] and "x00" not in reply["results"]  # other users never show
    scoped = _tool(storage, scope="thread", search_index=index).run({"mode": "search", "query": "risotto"})
    assert scoped == {"results": "No matching messages.", "count": 0}
    lisbon = _tool(storage, scope="thread", search_index=index).run({"mode": "search", "query": "Lisbon map"})
    assert lisbon["results"].split("\n")[2] == "  cursor: `m12`"  # the best hit comes first
    assert "needs a query" in tool.run({"mode": "search"})["error"]
    assert "not available" in _tool(storage).run({"mode": "search", "query": "x"})["error"]


def test_bm25_scores_by_hand():
    docs = [
        Message.of("user", "apple banana", T0, id="a", thread_id="t", resource_id="u"),
        Message.of("user", "apple apple cherry", T0, id="b", thread_id="t", resource_id="u"),
        Message.of("user", "durian", T0, id="c", thread_id="t", resource_id="v"),
    ]
    index = KeywordSearchIndex()
    index.index(docs)
    # N = 3, average length 2; "cherry" is in 1 doc: idf = ln(1 + (3 - 1 + 0.5) / 1.5) = ln(8/3)
    # doc b (length 3, tf 1): 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 3 / 2)) = 2.2 / 2.65
    (hit,) = index.search("cherry", 5)
    assert hit[:2] == ("b", "t") and hit[2] == pytest.approx(math.log(8 / 3) * 2.2 / 2.65)
    # "apple": df 2, idf = ln(1 + 1.5 / 2.5) = ln 1.6; doc a: tf 1, length 2 -> 2.2 / 2.2 = 1;
    # doc b: tf 2, length 3 -> 2 * 2.2 / (2 + 1.2 * 1.375) = 4.4 / 3.65
    hits = index.search("apple", 5)
    assert [h[0] for h in hits] == ["b", "a"]
    assert hits[0][2] == pytest.approx(math.log(1.6) * 4.4 / 3.65) and hits[1][2] == pytest.approx(math.log(1.6))
    assert index.search("durian", 5, resource_id="u") == []
    index.remove(["b"])
    assert index.search("cherry", 5) == []
    index.index([Message.of("user", "cherry pie", T0, id="a", thread_id="t", resource_id="u")])  # replaces a
    assert [h[0] for h in index.search("cherry", 5)] == ["a"] and len(index) == 2


VOCABULARY = ("cat", "dog", "car")


def fake_embed(texts: list[str]) -> list[list[float]]:
    """Counts of three keywords: deterministic and easy to compute cosines by hand."""
    return [[float(text.lower().split().count(word)) for word in VOCABULARY] for text in texts]


def test_embedding_search():
    messages = [
        Message.of("user", "cat", T0, id="1", thread_id="t", resource_id="u"),
        Message.of("user", "cat dog", T0, id="2", thread_id="t", resource_id="u"),
        Message.of("user", "car car", T0, id="3", thread_id="t2", resource_id="u"),
        Message.of("user", "cat", T0, id="4", thread_id="t9", resource_id="other"),
    ]
    index = EmbeddingSearchIndex(fake_embed, batch_size=2)
    index.index(messages)
    hits = index.search("cat", 3, resource_id="u")
    assert [(h[0], h[1]) for h in hits] == [("1", "t"), ("2", "t"), ("3", "t2")]
    assert [h[2] for h in hits] == pytest.approx([1.0, 1 / math.sqrt(2), 0.0])
    assert index.search("dog car", 1)[0][0] in {"2", "3"}
    assert index.search("dog car", 2, resource_id="u")[0][2] == pytest.approx(1 / math.sqrt(2))


def test_embedding_search_through_the_tool(storage):
    index = EmbeddingSearchIndex(lambda texts: [[float("risotto" in t.lower()), 1.0] for t in texts])
    index.index(storage.get_messages("t2") + storage.get_messages("t1"))
    reply = _tool(storage, search_index=index).run({"mode": "search", "query": "risotto", "limit": 2})
    assert reply["count"] == 2 and "`t2`" in reply["results"] and "score 1.000" in reply["results"]


def test_searchable_text_skips_data_parts_and_markers():
    message = _thread_one()[10]
    assert "dentist lisbon" in searchable_text(message) and "web_search" in searchable_text(message)
    assert searchable_text(_thread_one()[11]) == ""
    marker = Message.of("user", "<system-reminder>[2 hours later]</system-reminder>", T0, id="__temporal_x")
    assert searchable_text(marker) == ""


# --- schema and instructions ---------------------------------------------------------------------


def test_tool_schema_follows_scope_and_vector():
    resource = tool_schema("resource", vector=True)["function"]
    assert resource["name"] == "recall"
    properties = resource["parameters"]["properties"]
    assert properties["mode"]["enum"] == ["messages", "threads", "search"]
    assert {"query", "threadId", "before", "after", "partIndex", "partType", "toolName"} <= set(properties)
    assert properties["partType"]["enum"] == [
        "text",
        "tool-call",
        "tool-result",
        "reasoning",
        "image",
        "file",
    ]
    thread = tool_schema("thread", vector=False)["function"]["parameters"]["properties"]
    assert thread["mode"]["enum"] == ["messages", "threads"]
    assert not {"query", "threadId", "before", "after"} & set(thread)
    assert (
        RecallTool(InMemoryStorage(), scope="thread", current_thread_id="t")
        .schema["function"]["parameters"]["properties"]
        .keys()
        == thread.keys()
    )


def test_retrieval_instructions_follow_scope_vector_and_custom():
    with_search = retrieval_instructions("resource", vector=True)
    assert 'mode="search"' in with_search and 'mode="threads"' in with_search
    without = retrieval_instructions("resource", vector=False)
    assert "search" not in without.replace("research", "") and 'mode="threads"' in without
    thread = retrieval_instructions("thread", vector=False)
    assert "threadId" not in thread and "only reads this conversation" in thread
    custom = retrieval_instructions("thread", custom="  Always recall invoices.  ")
    assert custom.endswith("\n\nAlways recall invoices.")


# --- invariants ----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=35), st.integers(min_value=1, max_value=8), st.data())
def test_pages_tile_the_thread_in_both_directions(count, limit, data):
    store = InMemoryStorage()
    store.save_messages(
        [Message.of("user", f"m {i}", T0 + timedelta(seconds=i), id=_id(i), thread_id="t1") for i in range(count)]
    )
    tool = RecallTool(store, scope="thread", current_thread_id="t1")
    ids = [_id(i) for i in range(count)]
    pages = max(1, math.ceil(count / limit))
    forward = [i for page in range(1, pages + 1) for i in _ids(tool.run({"limit": limit, "page": page}))]
    assert forward == ids
    backward = [_ids(tool.run({"anchor": "end", "limit": limit, "page": page})) for page in range(1, pages + 1)]
    assert [i for page in reversed(backward) for i in page] == ids
    if count:
        cursor = data.draw(st.integers(min_value=0, max_value=count - 1))
        ahead = tool.run({"cursor": _id(cursor), "limit": limit})
        behind = tool.run({"cursor": _id(cursor), "limit": limit, "page": -1})
        assert _ids(ahead) == ids[cursor : cursor + limit]  # the cursor message comes first
        assert _ids(behind) == ids[max(0, cursor + 1 - limit) : cursor + 1]  # …and last going back
        assert ahead["hasNextPage"] == (cursor + limit < count) and ahead["hasPrevPage"] == (cursor > 0)

"""Message token counts with hand-computed values per part kind (om-reference.md §5)."""

from __future__ import annotations

import base64
import gc
import math
import struct
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import omlab.engine.token_counter as token_counter_module
from omlab.engine.messages import Message, Part
from omlab.engine.token_counter import CACHE_VERSION, TokenCounter
from omlab.tokens.tokenx import estimate_token_count

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ENGLISH = "Hello, world! This is a short sentence."  # tokenx 11, o200k 10


def png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">II", width, height) + b"\x08\x06\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\x00" * 4


def message(role: str, *parts: Part) -> Message:
    return Message(id=f"m-{role}", role=role, parts=list(parts), created_at=T0)  # type: ignore[arg-type]


def call(state: str = "call", args=None, **fields) -> Part:
    return Part(type="tool-invocation", tool_call_id="c1", tool_name="get_weather", args=args, state=state, **fields)


PARIS = {"city": "Paris"}  # {"city":"Paris"} -> { "city" : "Paris" } = 1+1+1+2+1 = 6
# get_weather -> get _ weather = 1+1+2 = 4


@pytest.fixture
def counter() -> TokenCounter:
    return TokenCounter()


# --- strings and messages -----------------------------------------------------------------------


def test_count_string(counter):
    assert counter.count_string(ENGLISH) == 11
    assert counter.count_string("") == 0
    assert counter.count_string(None) == 0


def test_text_message_and_lists(counter):
    user = Message.of("user", ENGLISH, T0)
    assert counter.count_message(user) == 16  # user 1 + 3.8 + 11 = 15.8
    assert counter.count_message(message("assistant", Part(type="text", text="Hi"))) == 7  # 2+3.8+1
    assert counter.count_messages([user]) == 24 + 16
    assert counter.count_messages([user, Message.of("user", ENGLISH, T0)]) == 24 + 16 + 16
    assert counter.count_messages([]) == 0
    assert counter.count_messages(iter([user])) == 40


def test_empty_text_and_message_without_parts(counter):
    assert counter.count_part(Part(type="text", text="")) == 0
    assert counter.count_part(Part(type="text")) == 0
    assert counter.count_message(message("user")) == 5  # 1 + 3.8


def test_rounding_is_javascript_half_up(counter):
    part = Part(type="text", text="x", metadata={"tokenEstimate": {"source": "client", "tokens": 1.7}})
    assert counter.count_message(message("user", part)) == 7  # 1 + 1.7 + 3.8 = 6.5 -> 7 (Python: 6)


# --- tool invocations ----------------------------------------------------------------------------


@pytest.mark.parametrize("state", ["call", "partial-call", "approval-requested"])
def test_tool_call_signature(counter, state):
    assert counter.count_part(call(state, PARIS)) == 4 + 6 - 12
    assert counter.count_part(call(state, '{"city":"Paris"}')) == 4 + 6  # string args: no JSON delta
    assert counter.count_part(call(state, None)) == 4
    assert counter.count_part(call(state, {})) == 4 + 1 - 12  # "{}" is one punctuation run


def test_tool_call_message_total(counter):
    assert counter.count_message(message("assistant", call("call", PARIS))) == 4  # 2 + 3.8 + 10 - 12


def test_approval_responded(counter):
    part = call("approval-responded", PARIS, metadata={"approval": {"approved": True, "reason": "Looks safe to run"}})
    assert counter.count_part(part) == pytest.approx(4 + 6 + 4 + 3.8 - 12)
    assert counter.count_part(call("approval-responded", PARIS)) == pytest.approx(4 + 6 + 3.8 - 12)


def test_result_json(counter):
    # {\n  "temp": 21.5,\n  "unit": "C"\n}  ->  { "temp" : 21 . 5 , "unit" : "C" } = 11
    part = call("result", PARIS, result={"temp": 21.5, "unit": "C"})
    assert counter.count_part(part) == pytest.approx(11 + 3.8 - 12)


def test_result_string(counter):
    assert counter.count_part(call("result", PARIS, result="It is sunny")) == pytest.approx(3 + 3.8)


def test_result_integral_float_serializes_like_javascript(counter):
    # {"n": 2.0} -> JSON.stringify gives 2, not 2.0:  { "n" : 2 } = 5
    assert counter.count_part(call("result", result={"n": 2.0})) == pytest.approx(5 + 3.8 - 12)


def test_result_counts_in_full(counter):
    big = {"rows": ["alpha beta gamma delta"] * 5000}
    tokens = counter.count_part(call("result", result=big))
    assert tokens > 20_000  # no 10k observer cap when counting


def test_result_encrypted_content_is_stubbed(counter):
    # {\n  "encryptedContent": "[stripped encryptedContent: 300 characters]"\n}
    # { "encryptedContent"(3) : "(1) [ stripped(2) encryptedContent(3) : 300 characters(2) ] " } = 19
    part = call("result", result={"encryptedContent": "x" * 300})
    assert counter.count_part(part) == pytest.approx(19 + 3.8 - 12)


def test_stored_model_output_replaces_the_result(counter):
    part = call("result", result={"huge": "payload " * 1000}, metadata={"modelOutput": "short"})
    assert counter.count_part(part) == pytest.approx(1 + 3.8)
    assert any(key.partition("|")[2].startswith("tool-result-model-output-json:") for key in part.token_cache)


def test_result_without_value_costs_one_message(counter):
    assert counter.count_part(call("result")) == pytest.approx(3.8)


def test_denied_and_error(counter):
    # "Tool call was not approved by the user" = 1+1+1+1+2+1+1+1 = 9
    assert counter.count_part(call("output-denied")) == pytest.approx(9 + 3.8)
    denied = call("output-denied", metadata={"approval": {"approved": False, "reason": "No"}})
    assert counter.count_part(denied) == pytest.approx(1 + 3.8)
    assert counter.count_part(call("output-error", error_text="boom")) == pytest.approx(1 + 3.8)
    # "Tool execution failed" = 1 + 2 + 1
    assert counter.count_part(call("output-error")) == pytest.approx(4 + 3.8)


def test_multimodal_result_is_priced_per_block(counter, monkeypatch):
    encoded = base64.b64encode(png(1024, 1024)).decode()
    result = {
        "type": "content",
        "value": [
            {"type": "text", "text": "Here is the chart"},  # 4
            {"type": "image-data", "data": encoded, "mediaType": "image/png"},  # 85 + 4*170
        ],
    }
    part = call("result", result=result)
    assert counter.count_part(part) == pytest.approx(4 + 765 + 3.8 - 12)
    assert counter.count_part(part, model="anthropic/claude") == pytest.approx(4 + 1399 + 3.8 - 12)


# --- other parts ---------------------------------------------------------------------------------


def test_reasoning_and_data_parts_cost_nothing(counter):
    assert counter.count_part(Part(type="reasoning", text="long thoughts " * 100)) == 0
    assert counter.count_part(Part(type="data-om-observation-start", metadata={"cycleId": "x"})) == 0


def test_other_parts_cost_their_json(counter):
    # {"type":"source-url","text":"https://a.io"}
    # { "type" : "source - url" , "text" : "https :// a . io" } = 1+1+1+2+1+1+1+1+1+1+1+1+1+1+1
    part = Part(type="source-url", text="https://a.io", metadata={"tokenEstimate": {"source": "other"}})
    assert counter.count_part(part) == 16


def test_tool_invocation_without_state_costs_its_json(counter):
    part = Part(type="tool-invocation", tool_name="x")
    # {"type":"tool-invocation","toolName":"x"} -> { "type" : "tool - invocation" , "toolName" : "x" }
    assert counter.count_part(part) == 1 + 1 + 1 + 1 + 1 + 2 + 1 + 2 + 1 + 1 + 1


# --- attachments and models ----------------------------------------------------------------------


def test_image_part_uses_the_model(counter):
    msg = message("user", Part(type="image", data=png(1024, 1024), mime_type="image/png"))
    assert counter.count_message(msg) == 770  # 1 + 3.8 + 765
    assert counter.count_message(msg, model="anthropic/claude-sonnet-4") == 1404  # ceil(1398.1)=1399
    assert TokenCounter("google/gemini-2.5-flash").count_message(msg) == 1037  # 1 + 3.8 + 4*258


def test_decoded_dimensions_are_kept_on_the_part(counter):
    part = Part(type="image", data=base64.b64encode(png(800, 600)).decode())
    counter.count_part(part)
    assert (part.width, part.height) == (800, 600)


def test_file_parts(counter):
    pdf = Part(type="file", data=b"x" * 100_000, mime_type="application/pdf")
    assert counter.count_part(pdf) == 25_000
    assert counter.count_part(pdf, model="google/gemini-2.5-flash") == 5000
    url_only = Part(type="file", data="https://example.com/a/notes.bin")
    assert counter.count_part(url_only) == 17  # descriptor, see test_attachment_tokens


# --- client estimates and caching --------------------------------------------------------------------


def test_client_estimate_always_wins(counter):
    for part in (
        Part(type="text", text=ENGLISH),
        Part(type="image", data="https://e.com/x.png"),
        call("result", result={"a": 1}),
    ):
        part.metadata["tokenEstimate"] = {"source": "client", "tokens": 500}
        assert counter.count_part(part) == 500
    bad = Part(type="text", text=ENGLISH, metadata={"tokenEstimate": {"source": "client", "tokens": -1}})
    assert counter.count_part(bad) == 11


def test_cache_entry_shape(counter):
    part = Part(type="text", text=ENGLISH)
    counter.count_part(part)
    [(key, tokens)] = part.token_cache.items()
    source, _, kind_hash = key.partition("|")
    assert source == f"v{CACHE_VERSION}:tokenx"
    assert kind_hash.startswith("text:") and len(kind_hash) == len("text:") + 32
    assert tokens == 11


def test_cache_is_invisible_to_the_garbage_collector(counter):
    """A cache the collector tracks is one more long-lived object per message; at a million
    tokens those alone set off a full collection (benchmarks/bench_engine.py)."""
    parts = [Part(type="text", text=ENGLISH), Part(type="tool-invocation", tool_name="f", args={"a": 1}, state="call")]
    for part in parts:
        counter.count_part(part)
        assert part.token_cache and not gc.is_tracked(part.token_cache)


def test_cache_is_used_and_invalidated(counter):
    part = Part(type="text", text=ENGLISH)
    counter.count_part(part)
    [key] = part.token_cache
    part.token_cache[key] = 999  # a valid entry is trusted
    assert counter.count_part(part) == 999
    part.token_cache[key] = float("nan")  # not a count: recomputed
    assert counter.count_part(part) == 11
    older = key.replace(f"v{CACHE_VERSION}:", f"v{CACHE_VERSION - 1}:", 1)
    part.token_cache = {older: 999}  # another version: recomputed, and the old entry dropped
    assert counter.count_part(part) == 11 and list(part.token_cache) == [key]
    part.token_cache = {key.partition("|")[2]: {"v": CACHE_VERSION, "tokens": 999}}  # the old record shape
    assert counter.count_part(part) == 11 and list(part.token_cache) == [key]
    part.text = "Hi"  # edited: a new key, and the outdated entry is dropped
    assert counter.count_part(part) == 1
    assert len(part.token_cache) == 1 and next(iter(part.token_cache)) != key


def test_switching_estimator_invalidates(counter):
    part = Part(type="text", text=ENGLISH)
    assert counter.count_part(part) == 11
    exact = TokenCounter(estimator="tiktoken")
    assert exact.source == f"v{CACHE_VERSION}:tiktoken-o200k_base"
    assert exact.count_part(part) == 10
    assert counter.count_part(part) == 11


def test_tiktoken_estimator():
    exact = TokenCounter(estimator="tiktoken", encoding="cl100k_base")
    assert exact.count_string('{"id":"usr_29f84h","plan":"pro","seats":12}') > 0
    assert exact.source == f"v{CACHE_VERSION}:tiktoken-cl100k_base"


def test_bad_estimator_is_rejected():
    with pytest.raises(ValueError, match="estimator must be"):
        TokenCounter(estimator="words")  # type: ignore[arg-type]


def _conversation(n: int) -> list[Message]:
    encoded_png = base64.b64encode(png(640, 480)).decode()
    messages = []
    for i in range(n):
        if i % 4 == 0:
            messages.append(Message.of("user", f"Question {i}: what about the {i % 37}th item? " * (1 + i % 5), T0))
        elif i % 4 == 1:
            messages.append(message("assistant", Part(type="reasoning", text="hmm"), call("call", {"q": i})))
        elif i % 4 == 2:
            messages.append(message("assistant", call("result", result={"rows": list(range(i % 50))})))
        else:
            messages.append(
                message(
                    "user",
                    Part(type="text", text=f"Look at picture {i}"),
                    Part(type="image", data=encoded_png),
                    Part(type="file", data=f"https://e.com/doc{i}.pdf", mime_type="application/pdf"),
                )
            )
    return messages


def test_second_pass_over_10k_messages_does_not_call_the_estimator(monkeypatch):
    calls = 0
    real = token_counter_module.estimate_token_count

    def counting(text, **kwargs):
        nonlocal calls
        calls += 1
        return real(text, **kwargs)

    monkeypatch.setattr(token_counter_module, "estimate_token_count", counting)
    messages = _conversation(10_000)
    counter = TokenCounter("openai/gpt-4o")
    first = counter.count_messages(messages)
    assert calls > 10_000
    calls = 0
    assert counter.count_messages(messages) == first
    assert calls == 0
    # The cache lives on the parts: a new counter only prices the role names again.
    assert TokenCounter("openai/gpt-4o").count_messages(messages) == first
    assert calls == 2


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=4), st.sampled_from(["user", "assistant", "system", "tool"]))
def test_text_message_is_role_plus_overhead_plus_texts(texts, role):
    counter = TokenCounter()
    msg = message(role, *(Part(type="text", text=t) for t in texts))
    expected = estimate_token_count(role) + 3.8 + sum(estimate_token_count(t) for t in texts)
    assert counter.count_message(msg) == math.floor(expected + 0.5)
    assert counter.count_message(msg) == counter.count_message(msg)  # cached pass agrees

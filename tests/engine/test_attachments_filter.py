"""observation.observeAttachments: which attachments reach the Observer model."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import pytest

from omlab.engine.attachments import (
    attachment_allowed,
    attachment_content_parts,
    attachment_mime_type,
    filter_parts_for_observer,
    filter_tool_result,
    mime_allowed,
    model_accepts_attachments,
    observer_user_content,
)
from omlab.engine.messages import Message, Part
from omlab.engine.transcript import format_history

T0 = datetime(2025, 3, 4, 10, 0, tzinfo=UTC)
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 24
PNG_B64 = base64.b64encode(PNG).decode()


def _image(**kw) -> Part:
    return Part(type="image", **{"data": PNG, "mime_type": "image/png", "filename": "shot.png", **kw})


def _pdf(**kw) -> Part:
    return Part(type="file", **{"data": b"%PDF-1.7 ...", "mime_type": "application/pdf", "filename": "doc.pdf", **kw})


TEXT = Part(type="text", text="hello")


def test_true_and_false():
    assert attachment_allowed(_image(), True) and attachment_allowed(_pdf(), True)
    assert not attachment_allowed(_image(), False) and not attachment_allowed(_pdf(), False)
    assert attachment_allowed(TEXT, False)  # the rule only concerns attachments


@pytest.mark.parametrize(
    ("model", "accepts"),
    [
        ("omlab/observer", False),
        ("deepseek/deepseek-chat", False),
        ("openrouter/deepseek/deepseek-chat", False),
        ("openai/gpt-3.5-turbo", False),
        ("openai/gpt-4", False),
        ("openai/gpt-4o-mini", True),
        ("openai/gpt-5-mini", True),
        ("google/gemini-2.5-flash", True),
        ("anthropic/claude-sonnet-4-5", True),
        ("acme/mystery-model", None),
        (None, None),
    ],
)
def test_capability_table(model, accepts):
    assert model_accepts_attachments(model) is accepts


def test_auto_strips_for_text_only_models_and_passes_otherwise():
    assert not attachment_allowed(_image(), "auto", observer_model="deepseek/deepseek-chat")
    assert not attachment_allowed(_pdf(), "auto", observer_model="omlab/observer")
    assert attachment_allowed(_image(), "auto", observer_model="google/gemini-2.5-flash")
    assert attachment_allowed(_image(), "auto", observer_model="acme/mystery-model")  # unknown: pass
    assert attachment_allowed(_image(), "auto", observer_model=[{"model": "deepseek/deepseek-chat"}]) is False


def test_mime_allow_lists():
    assert attachment_allowed(_image(), ["image/*"])
    assert not attachment_allowed(_pdf(), ["image/*"])
    assert attachment_allowed(_pdf(), ["APPLICATION/PDF"])
    assert attachment_allowed(_pdf(mime_type="Application/Pdf; charset=binary"), ["application/pdf"])
    assert attachment_allowed(_pdf(), ["*"]) and attachment_allowed(_image(), ["*"])
    assert not attachment_allowed(_image(), [])
    assert not attachment_allowed(_image(mime_type="image/jpeg"), ["image/png"])
    assert mime_allowed("IMAGE/WEBP", ["Image/*"]) and not mime_allowed("imagex/png", ["image/*"])


def test_bad_rules_are_rejected():
    for rule in ("yes", 3, ["image/*", 4]):
        with pytest.raises(ValueError, match="observeAttachments"):
            attachment_allowed(_image(), rule)


def test_mime_type_inference():
    assert attachment_mime_type(_image(mime_type=None)) == "image/png"  # from the file name
    assert attachment_mime_type(Part(type="image", data=JPEG)) == "image/jpeg"  # magic bytes
    assert attachment_mime_type(Part(type="image", data=PNG_B64)) == "image/png"  # base64 magic bytes
    assert attachment_mime_type(Part(type="file", data="data:application/pdf;base64,JVBERi0=")) == "application/pdf"
    assert attachment_mime_type(Part(type="file", data="https://x.test/a/report.csv")) == "text/csv"
    unknown = Part(type="image", data="https://x.test/pic")
    assert attachment_mime_type(unknown) == "image/unknown"
    assert attachment_allowed(unknown, ["image/*"]) and not attachment_allowed(unknown, ["image/png"])
    assert attachment_mime_type(Part(type="file", data=b"\x00\x01")) == "application/octet-stream"


def _tool_part(blocks_key: str = "value") -> Part:
    blocks = [
        {"type": "text", "text": "two files"},
        {"type": "image-data", "data": PNG_B64, "mediaType": "image/png"},
        {"type": "file-data", "data": "JVBERi0=", "mediaType": "application/pdf", "filename": "r.pdf"},
    ]
    result = {"type": "content", "value": blocks} if blocks_key == "value" else {"content": blocks}
    return Part(
        type="tool-invocation",
        tool_call_id="c1",
        tool_name="screenshot",
        args={},
        state="result",
        result=result,
    )


@pytest.mark.parametrize("blocks_key", ["value", "content"])
def test_tool_result_attachments_follow_the_same_rule(blocks_key):
    part = _tool_part(blocks_key)
    original = repr(part.result)
    key = "value" if blocks_key == "value" else "content"
    images_only = filter_tool_result(part.result, ["image/*"])
    assert [b["type"] for b in images_only[key]] == ["text", "image-data", "text"]
    assert images_only[key][2] == {"type": "text", "text": "[File: r.pdf — not sent to the observer]"}
    nothing = filter_tool_result(part.result, False)
    assert [b.get("text") for b in nothing[key]][1:] == [
        "[Image: image/png — not sent to the observer]",
        "[File: r.pdf — not sent to the observer]",
    ]
    assert filter_tool_result(part.result, True) is part.result
    assert repr(part.result) == original  # never mutated
    assert filter_tool_result("plain text result", False) == "plain text result"


def test_filter_parts_for_observer_drops_refused_attachments_without_mutating():
    tool = _tool_part()
    message = Message("m1", "user", [TEXT, _image(), _pdf(), tool, Part(type="data-om-status")], T0)
    kept = filter_parts_for_observer(message, ["image/*"])
    assert [p.type for p in kept] == ["text", "image", "tool-invocation", "data-om-status"]
    assert kept[2] is not tool and len(kept[2].result["value"]) == 3
    assert kept[2].result["value"][2]["type"] == "text"
    assert tool.result["value"][2]["type"] == "file-data"
    assert filter_parts_for_observer(message, True)[3] is tool


def _messages() -> list[Message]:
    return [
        Message("m1", "user", [TEXT, _image(filename="a.png")], T0),
        Message(
            "m2",
            "user",
            [
                _pdf(filename="doc.pdf"),
                Part(
                    type="image",
                    data="https://x.test/b.jpg",
                    mime_type="image/jpeg",
                    filename="b.jpg",
                    detail="low",
                ),
            ],
            T0,
        ),
        Message("m3", "assistant", [_tool_part()], T0),
    ]


def test_content_parts_follow_the_transcript_numbering():
    messages = _messages()
    transcript = format_history(messages)
    assert (
        "[Image #1: a.png]" in transcript and "[File #1: doc.pdf]" in transcript and "[Image #2: b.jpg]" in transcript
    )
    parts = attachment_content_parts(messages, True)
    assert parts == [
        {"type": "text", "text": "[Image #1: a.png]"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
        {"type": "text", "text": "[Image #2: b.jpg]"},
        {"type": "image_url", "image_url": {"url": "https://x.test/b.jpg", "detail": "low"}},
        {"type": "text", "text": "[Image from tool result screenshot]"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
    ]
    only_png = attachment_content_parts(messages, ["image/png"])
    assert [p["text"] for p in only_png if p["type"] == "text"] == [
        "[Image #1: a.png]",
        "[Image from tool result screenshot]",
    ]
    assert attachment_content_parts(messages, False) == []
    assert attachment_content_parts(messages, "auto", "omlab/observer") == []


def test_observer_user_content_is_plain_text_without_attachments():
    messages = _messages()
    assert observer_user_content("PROMPT", messages, False) == "PROMPT"
    content = observer_user_content("PROMPT", messages, ["image/jpeg"])
    assert content[0] == {"type": "text", "text": "PROMPT"}
    assert [p["type"] for p in content[1:]] == ["text", "image_url"]
    # the transcript keeps every placeholder whatever the rule
    assert format_history(messages).count("[Image #") == 2

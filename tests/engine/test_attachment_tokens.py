"""Image and file token estimates per provider, with hand-computed values (om-reference.md §5)."""

from __future__ import annotations

import base64
import json
import struct

import pytest

from omlab.engine.attachment_tokens import (
    describe_attachment,
    estimate_file_tokens,
    estimate_image_tokens,
    image_dimensions,
    is_image_part,
    parse_model,
    read_image_size,
)
from omlab.engine.messages import Part

KB = 1024
MB = 1024 * 1024


# --- tiny image headers -------------------------------------------------------------------------


def png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">II", width, height) + b"\x08\x06\x00\x00\x00"
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\x00" * 4


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00" * 3


def jpeg(width: int, height: int, exif_bytes: int = 0) -> bytes:
    out = b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
    while exif_bytes > 0:  # APP1 blocks of at most 65533 payload bytes each
        chunk = min(exif_bytes, 65533)
        out += b"\xff\xe1" + struct.pack(">H", chunk + 2) + b"\x00" * chunk
        exif_bytes -= chunk
    sof = struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    return out + b"\xff\xc0" + sof + b"\xff\xd9"


def webp_lossy(width: int, height: int) -> bytes:
    body = b"\x00\x00\x00" + b"\x9d\x01\x2a" + struct.pack("<HH", width, height)
    return b"RIFF" + struct.pack("<I", 4 + 8 + len(body)) + b"WEBP" + b"VP8 " + struct.pack("<I", len(body)) + body


def webp_lossless(width: int, height: int) -> bytes:
    body = b"\x2f" + struct.pack("<I", (width - 1) | (height - 1) << 14)
    return b"RIFF" + struct.pack("<I", 4 + 8 + len(body)) + b"WEBP" + b"VP8L" + struct.pack("<I", len(body)) + body


def webp_extended(width: int, height: int) -> bytes:
    body = b"\x00" * 4 + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + 8 + len(body)) + b"WEBP" + b"VP8X" + struct.pack("<I", len(body)) + body


def image(width: int | None = None, height: int | None = None, **fields) -> Part:
    return Part(type="image", width=width, height=height, **fields)


# --- header reader ------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [png, gif, jpeg, webp_lossy, webp_lossless, webp_extended], ids=lambda f: f.__name__)
def test_read_image_size(make):
    assert read_image_size(make(1234, 567)) == (1234, 567)


@pytest.mark.parametrize("data", [b"", b"hello world, not an image", png(10, 10)[:20], jpeg(9, 9)[:20]])
def test_unreadable_headers_give_none(data):
    assert read_image_size(data) is None


def test_dimensions_from_bytes_base64_and_data_uri():
    raw = png(800, 600)
    encoded = base64.b64encode(raw).decode()
    assert image_dimensions(image(data=raw)) == (800, 600)
    assert image_dimensions(image(data=encoded)) == (800, 600)
    assert image_dimensions(image(data=f"data:image/png;base64,{encoded}")) == (800, 600)


def test_jpeg_frame_header_after_large_exif_block_in_base64():
    encoded = base64.b64encode(jpeg(4000, 3000, exif_bytes=200 * KB)).decode()
    assert image_dimensions(image(data=encoded)) == (4000, 3000)


def test_part_fields_win_and_urls_are_never_probed():
    assert image_dimensions(image(10, 20, data=png(800, 600))) == (10, 20)
    assert image_dimensions(image(10, None, data=png(800, 600))) == (10, 600)
    assert image_dimensions(image(data="https://example.com/cat.png")) == (None, None)
    assert image_dimensions(image(data="not/base64/../path.png")) == (None, None)


# --- OpenAI and unknown providers ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "width", "height", "detail", "expected"),
    [
        (None, 1024, 1024, None, 85 + 4 * 170),  # auto -> high (1024 > 768); 768x768 -> 2x2 tiles
        (None, 2048, 4096, "high", 85 + 6 * 170),  # -> 1024x2048 -> 768x1536 -> 2x3 tiles
        (None, 4096, 8192, "auto", 1105),
        (None, 1024, 1024, "low", 85),
        (None, 512, 512, None, 85),  # auto -> low (long side 512)
        (None, 700, 300, "high", 85 + 2 * 170),  # no scaling: 2x1 tiles
        ("openai/gpt-5-mini", 1024, 1024, None, 70 + 4 * 140),
        ("openai/gpt-4o-mini", 1024, 1024, None, 2833 + 4 * 5667),
        ("openai/o3", 1024, 1024, None, 75 + 4 * 150),
        ("openai/o1-preview", 1024, 1024, "low", 75),
        ("openai/computer-use-preview", 1024, 1024, None, 65 + 4 * 129),
        ("openai/gpt-4o", 1024, 1024, None, 765),
        ("gemini-2.5-flash", 1024, 1024, None, 765),  # no provider prefix -> OpenAI rules
    ],
)
def test_openai_image_tokens(model, width, height, detail, expected):
    assert estimate_image_tokens(image(width, height, detail=detail), model) == expected


@pytest.mark.parametrize(
    ("size_bytes", "detail", "expected"),
    [
        (600 * KB, None, 85),  # auto, <= 1 MB -> low
        (600 * KB, "high", 85 + 4 * 170),  # <= 2 MB -> 4 tiles
        (3 * MB, None, 85 + 6 * 170),  # auto, > 1 MB -> high; <= 4 MB -> 6 tiles
        (5 * MB, "high", 85 + 8 * 170),
        (512 * KB, "high", 85 + 170),
    ],
)
def test_openai_size_buckets_without_dimensions(size_bytes, detail, expected):
    part = image(data="https://example.com/photo", size_bytes=size_bytes, detail=detail)
    assert estimate_image_tokens(part, "openai/gpt-4o") == expected


def test_openai_fallback_tiles_without_dimensions_or_size():
    url_only = "https://example.com/photo"
    assert estimate_image_tokens(image(data=url_only, detail="high"), None) == 85 + 4 * 170
    assert estimate_image_tokens(image(data=url_only, detail="high"), "openai/gpt-4o-mini") == 2833 + 5667
    assert estimate_image_tokens(image(data=url_only), None) == 85  # auto without size -> low


def test_base64_payload_size_decides_detail():
    # A non-image base64 string of 2 MB decoded bytes: no dimensions, > 1 MB -> high, 4 tiles.
    encoded = "QUJD" * (2 * MB // 3)  # 2 MB of "ABC" minus a byte or two
    assert estimate_image_tokens(image(data=encoded), None) == 85 + 4 * 170


def test_dimensions_decoded_from_the_payload():
    assert estimate_image_tokens(image(data=png(1024, 1024)), None) == 765
    assert estimate_image_tokens(Part(type="file", data=jpeg(2048, 4096), mime_type="image/jpeg"), None) == 1105


# --- Google ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "part", "expected"),
    [
        ("google/gemini-2.5-flash", image(1024, 1024), 258 * 4),  # 2x2 tiles of 768
        ("google/gemini-2.5-flash", image(768, 768), 258),
        ("google/gemini-2.5-flash", image(1600, 700), 258 * 3),
        ("google/gemini-2.5-flash", image(data="https://example.com/x"), 258),
        ("gemini/gemini-2.0-flash", image(1024, 1024), 258 * 4),  # litellm prefix
        ("vertex_ai/gemini-1.5-pro", image(2000, 10), 258 * 3),
        ("google/gemini-3-pro-preview", image(4000, 4000), 1120),
        ("google/gemini-3-flash", image(10, 10, metadata={"mediaResolution": "low"}), 280),
        ("google/gemini-3-flash", image(10, 10, metadata={"mediaResolution": "medium"}), 560),
        ("google/gemini-3-flash", image(10, 10, metadata={"mediaResolution": "ultra_high"}), 2240),
        ("google/gemini-3-flash", image(10, 10, metadata={"mediaResolution": "huge"}), 1120),
    ],
)
def test_google_image_tokens(model, part, expected):
    assert estimate_image_tokens(part, model) == expected


# --- Anthropic -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (image(1000, 1000), 1334),  # ceil(1_000_000 / 750)
        (image(1092, 1092), 1590),  # ceil(1589.95)
        (image(3000, 2000), 2185),  # -> 1568 x round(1045.33) = 1568 x 1045 -> ceil(2184.75)
        (image(600, 1125), 900),  # exactly 900
        (image(1, 1), 1),
        (image(data="https://e.com/x", size_bytes=100 * KB), 341),
        (image(data="https://e.com/x", size_bytes=1 * MB), 1366),
        (image(data="https://e.com/x", size_bytes=3 * MB), 2048),
        (image(data="https://e.com/x", size_bytes=5 * MB), 2731),
        (image(data="https://e.com/x"), 1600),
    ],
)
def test_anthropic_image_tokens(part, expected):
    assert estimate_image_tokens(part, "anthropic/claude-sonnet-4-5") == expected


# --- files -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "size", "expected"),
    [
        ("google/gemini-2.5-flash", 100_000, 5000),
        ("google/gemini-2.5-flash", 1000, 258),
        ("anthropic/claude-opus-4", 100_000, 33334),
        ("anthropic/claude-opus-4", 1000, 1500),
        ("openai/gpt-4o", 100_000, 25000),
        (None, 1000, 500),
    ],
)
def test_pdf_tokens_by_bytes(model, size, expected):
    part = Part(type="file", data=b"%PDF" + b"\x00" * (size - 4), mime_type="application/pdf")
    assert estimate_file_tokens(part, model) == expected


def test_other_files_by_bytes():
    assert estimate_file_tokens(Part(type="file", data=b"0123456789", mime_type="text/plain"), None) == 3
    json_part = Part(type="file", data=b"x" * 4001, mime_type="application/json; charset=utf-8")
    assert estimate_file_tokens(json_part, "anthropic/claude") == 1001
    pdf_upper = Part(type="file", data=b"x" * 8000, mime_type="APPLICATION/PDF; charset=binary")
    assert estimate_file_tokens(pdf_upper, "anthropic/claude") == 2667
    unknown = Part(type="file", data=base64.b64encode(b"y" * 40).decode())
    assert estimate_file_tokens(unknown, None) == 10
    text_uri = Part(type="file", data="data:text/plain,hello%20world")  # 11 bytes, type from the URI
    assert estimate_file_tokens(text_uri, "google/gemini-2.5-flash") == 3


def test_explicit_size_wins_for_url_files():
    part = Part(type="file", data="https://e.com/report.pdf", mime_type="application/pdf", size_bytes=40_000)
    assert estimate_file_tokens(part, "openai/gpt-4o") == 10_000


def test_url_only_file_costs_its_descriptor():
    part = Part(type="file", data="https://example.com/a/notes.bin")
    estimate = describe_attachment(part, None)
    assert estimate.kind == "file-descriptor" and estimate.tokens is None
    assert json.loads(estimate.payload) == {"type": "file", "mimeType": None, "filename": "notes.bin"}
    # { "type" : "file" , "mimeType" : null , "filename" : "notes . bin" }
    assert estimate_file_tokens(part, None) == 1 + 1 + 1 + 1 + 1 + 2 + 1 + 1 + 1 + 2 + 1 + 1 + 1 + 1 + 1


def test_descriptor_filename_is_decoded_from_the_url_path():
    part = Part(type="file", data="https://example.com/docs/report%20final.docx?dl=1")
    assert json.loads(describe_attachment(part, None).payload)["filename"] == "report final.docx"
    named = Part(type="file", data="https://example.com/x", filename="  spec.md ")
    assert json.loads(describe_attachment(named, None).payload)["filename"] == "spec.md"


# --- classification and errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (Part(type="image"), True),
        (Part(type="file", mime_type="IMAGE/PNG"), True),
        (Part(type="file", data="data:image/gif;base64,R0lG"), True),
        (Part(type="file", data="https://e.com/pic.WEBP?size=2#top"), True),
        (Part(type="file", filename="photo.JPG"), True),
        (Part(type="file", filename="photo.pdf", data="https://e.com/pic"), False),
        (Part(type="file", mime_type="application/pdf"), False),
        (Part(type="text", text="a.png"), False),
    ],
)
def test_is_image_part(part, expected):
    assert is_image_part(part) is expected


def test_image_like_file_is_priced_as_an_image():
    part = Part(type="file", filename="scan.png", data=png(1024, 1024))
    assert describe_attachment(part, None).kind == "image-like-file"
    assert estimate_file_tokens(part, None) == 765


def test_wrong_part_types_are_rejected():
    with pytest.raises(ValueError, match="image part"):
        estimate_image_tokens(Part(type="file", mime_type="application/pdf"), None)
    with pytest.raises(ValueError, match="'file' part"):
        estimate_file_tokens(Part(type="text", text="x"), None)
    with pytest.raises(ValueError, match="'image' or 'file'"):
        describe_attachment(Part(type="text", text="x"), None)


def test_parse_model():
    assert parse_model("Google/Gemini-2.5-Flash") == parse_model("google/gemini-2.5-flash")
    assert parse_model("gemini/gemini-3-pro").provider == "google"
    assert parse_model("openrouter/anthropic/claude").model_id == "anthropic/claude"
    assert parse_model("gpt-5").provider is None
    assert parse_model(None).model_id == ""


def test_payload_changes_with_every_input():
    base = describe_attachment(image(1024, 1024), "openai/gpt-4o").payload
    assert describe_attachment(image(1024, 1024), "openai/gpt-5").payload != base
    assert describe_attachment(image(1024, 1024, detail="low"), "openai/gpt-4o").payload != base
    assert describe_attachment(image(1024, 1023), "openai/gpt-4o").payload != base
    assert describe_attachment(image(1024, 1024), "openai/gpt-4o").payload == base


@pytest.mark.parametrize("encoding", ["bytes", "base64", "data-uri"])
def test_a_pdf_message_is_priced_by_its_bytes_as_the_reference_counts_a_file_with_data(encoding):
    # issue 20 item 7: @mastra/memory 1.31.0's TokenCounter.countMessage gives 30,005 for this
    # message (openai/gpt-4o, a 120,000-byte PDF in the part's data); its descriptor (22 tokens)
    # prices only a PDF it cannot measure (a URL, or bytes in a UI message's `url` field)
    from datetime import UTC, datetime

    from omlab.engine.messages import Message
    from omlab.engine.token_counter import TokenCounter

    raw = b"A" * 120_000
    data = {
        "bytes": raw,
        "base64": base64.b64encode(raw).decode(),
        "data-uri": "data:application/pdf;base64," + base64.b64encode(raw).decode(),
    }[encoding]
    part = Part(type="file", data=data, mime_type="application/pdf", filename="r.pdf")
    message = Message(id="m1", role="user", parts=[part], created_at=datetime(2025, 3, 3, tzinfo=UTC))
    assert TokenCounter(model="openai/gpt-4o").count_message(message) == 30_005
    url = Part(type="file", data="https://example.com/r.pdf", mime_type="application/pdf")
    assert (
        TokenCounter(model="openai/gpt-4o").count_message(
            Message(id="m2", role="user", parts=[url], created_at=datetime(2025, 3, 3, tzinfo=UTC))
        )
        == 25
    )

"""Token estimates for image and file parts, by provider and model (spec: om-reference.md §5).

Text estimators would price a base64 image as megabytes of text; providers bill images by pixel
tiles and documents by pages. These are the reference engine's local heuristics:

* OpenAI and unknown providers: ``base + tiles × tile``. Tiles are counted only at high detail;
  ``auto`` means high when the long side exceeds 768 px (or, without dimensions, the payload
  exceeds 1 MB). High-detail tiles: fit into 2048×2048, shrink the short side to ≤ 768, then
  ⌈w/512⌉·⌈h/512⌉; without dimensions, by payload size (≤ 512 KB: 1, ≤ 2 MB: 4, ≤ 4 MB: 6, else 8);
  without either, the model's fallback tile count. base/tile: 85/170 by default, gpt-5*: 70/140,
  gpt-4o-mini*: 2833/5667 (fallback 1 tile), o1*/o3*: 75/150, *computer-use*: 65/129.
* Google: gemini-3* models cost a fixed amount per media resolution; older models
  258 × ⌈w/768⌉·⌈h/768⌉ (one tile when the size is unknown).
* Anthropic: fit the long edge into 1568 px, then ⌈w·h/750⌉; by payload size 341 / 1366 / 2048 /
  2731; 1600 when nothing is known.
* Other files, by payload bytes B: PDFs cost max(258, ⌈B/20⌉) on Google, max(1500, ⌈B/3⌉) on
  Anthropic and max(500, ⌈B/4⌉) elsewhere; any other type ⌈B/4⌉. A file with no measurable
  payload (a URL) costs the text tokens of a small ``{type, mimeType, filename}`` descriptor.

Image dimensions come from ``part.width``/``part.height`` or from the image header inside the
payload (PNG, JPEG, GIF, WebP; raw bytes, base64 or a data: URI). Counting never touches the
network; ``ObservationalMemory(..., probe_image_urls=True)`` sizes URL images before they are
counted (:mod:`omlab.engine.image_probe`).

Model strings are ``provider/model-id``; litellm's ``gemini``/``vertex_ai`` prefixes count as
Google. A model without a provider prefix uses the OpenAI rules for its model id.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, unquote_to_bytes, urlsplit

from omlab.engine.messages import Part
from omlab.tokens.tokenx import estimate_token_count

__all__ = [
    "AttachmentEstimate",
    "ModelRef",
    "describe_attachment",
    "estimate_file_tokens",
    "estimate_image_tokens",
    "image_dimensions",
    "is_image_part",
    "parse_model",
    "read_image_size",
]

_IMAGE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "webp", "gif", "bmp", "tiff", "tif", "heic", "heif", "avif"})
_PROVIDER_ALIASES = {"gemini": "google", "vertex_ai": "google", "vertex_ai_beta": "google"}
_GEMINI_3_TOKENS = {"low": 280, "medium": 560, "high": 1120, "ultra_high": 2240, "unspecified": 1120}
_GOOGLE_TILE_TOKENS = 258
_ANTHROPIC_MAX_LONG_EDGE = 1568
_HTTP_URL = re.compile(r"^https?://", re.IGNORECASE)
_BASE64_BODY = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]")
_KB = 1024
_MB = 1024 * 1024


# --- model -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A model string split into a lower-case provider (``None`` when absent) and model id."""

    provider: str | None
    model_id: str


def parse_model(model: str | None) -> ModelRef:
    """Split ``"provider/model-id"``; a string without ``/`` is a bare model id."""
    if not model:
        return ModelRef(None, "")
    provider, slash, model_id = model.partition("/")
    if not slash:
        return ModelRef(None, model.lower())
    provider = provider.lower()
    return ModelRef(_PROVIDER_ALIASES.get(provider, provider), model_id.lower())


@dataclass(frozen=True, slots=True)
class _OpenAIImagePricing:
    base_tokens: int
    tile_tokens: int
    fallback_tiles: int


def _openai_pricing(model_id: str) -> _OpenAIImagePricing:
    if model_id.startswith("gpt-5"):
        return _OpenAIImagePricing(70, 140, 4)
    if model_id.startswith("gpt-4o-mini"):
        return _OpenAIImagePricing(2833, 5667, 1)
    if model_id.startswith(("o1", "o3")):
        return _OpenAIImagePricing(75, 150, 4)
    if "computer-use" in model_id:
        return _OpenAIImagePricing(65, 129, 4)
    return _OpenAIImagePricing(85, 170, 4)


# --- payload -----------------------------------------------------------------------------------


def _js_round(value: float) -> int:
    """JavaScript ``Math.round`` (halves round up), unlike Python's banker's rounding."""
    return math.floor(value + 0.5)


def _is_http_url(value: object) -> bool:
    return isinstance(value, str) and _HTTP_URL.match(value) is not None


def _base64_size(encoded: str) -> int:
    if re.search(r"\s", encoded):
        encoded = re.sub(r"\s+", "", encoded)
    padding = 2 if encoded.endswith("==") else 1 if encoded.endswith("=") else 0
    return max(0, len(encoded) * 3 // 4 - padding)


def _split_data_uri(uri: str) -> tuple[str, str] | None:
    comma = uri.find(",")
    if comma == -1:
        return None
    return uri[:comma], uri[comma + 1 :]


@dataclass(frozen=True, slots=True)
class _SourceStats:
    source: str  # "url", "data-uri" or "binary"
    size_bytes: int | None


def _source_stats(part: Part) -> _SourceStats:
    data = part.data
    if isinstance(data, (bytes, bytearray, memoryview)):
        stats = _SourceStats("binary", len(data))
    elif isinstance(data, str):
        if _is_http_url(data):
            stats = _SourceStats("url", None)
        elif data.startswith("data:"):
            pieces = _split_data_uri(data)
            if pieces is None:
                stats = _SourceStats("data-uri", 0)
            elif re.search(";base64", pieces[0], re.IGNORECASE):
                stats = _SourceStats("data-uri", _base64_size(pieces[1]))
            else:
                stats = _SourceStats("data-uri", len(unquote_to_bytes(pieces[1])))
        else:
            stats = _SourceStats("binary", _base64_size(data))
    else:
        stats = _SourceStats("binary", None)
    if part.size_bytes is not None:
        # An explicit size wins: pipelines that strip the payload keep it here.
        stats = _SourceStats(stats.source, part.size_bytes)
    return stats


def _looks_like_base64(value: str) -> bool:
    if len(value) < 16 or len(value) % 4 or re.search(r"\s", value):
        return False
    # Paths are not payloads; but base64 JPEG always starts with "/9j/", which is no path.
    looks_like_path = value.startswith(("/", "./", "../", "~/")) and not value.startswith("/9j/")
    if looks_like_path or _WINDOWS_PATH.match(value) or "\\" in value:
        return False
    return _BASE64_BODY.match(value) is not None


def _decode_base64(encoded: str, max_bytes: int | None) -> bytes | None:
    if max_bytes is not None:
        encoded = re.sub(r"\s+", "", encoded[: (max_bytes // 3 + 1) * 4 + 64])
        encoded = encoded[: len(encoded) // 4 * 4]
    try:
        return base64.b64decode(encoded)
    except (binascii.Error, ValueError):
        return None


# --- image headers -----------------------------------------------------------------------------


def _png_size(head: bytes) -> tuple[int, int] | None:
    if len(head) >= 40 and head[12:16] == b"CgBI":  # Apple's "crushed" PNG
        return struct.unpack(">II", head[32:40])
    if len(head) >= 24 and head[12:16] == b"IHDR":
        return struct.unpack(">II", head[16:24])
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25:
        b = head[21:25]
        return 1 + (b[0] | (b[1] & 0x3F) << 8), 1 + (b[1] >> 6 | b[2] << 2 | (b[3] & 0x0F) << 10)
    if chunk == b"VP8X" and len(head) >= 30:
        return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
    return None


_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    n = len(data)
    while i + 3 < n:
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image / start of scan: no frame header ahead
            return None
        if i + 9 > n:
            return None
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        i += 2 + length
    return None


def read_image_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from a PNG, JPEG, GIF or WebP header, or ``None`` if unrecognised or
    truncated before the size."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        size = _png_size(data)
    elif data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        size = struct.unpack("<HH", data[6:10])
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        size = _webp_size(data)
    elif data[:2] == b"\xff\xd8":
        size = _jpeg_size(data)
    else:
        size = None
    if size is None or size[0] <= 0 or size[1] <= 0:
        return None
    return int(size[0]), int(size[1])


_HEADER_PREFIX_BYTES = 64 * _KB


def _payload_image_size(data: Any) -> tuple[int, int] | None:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return read_image_size(bytes(data))
    if not isinstance(data, str) or _is_http_url(data):
        return None
    if data.startswith("data:"):
        pieces = _split_data_uri(data)
        if pieces is None:
            return None
        header, body = pieces
        if not re.search(";base64", header, re.IGNORECASE):
            return read_image_size(unquote(body).encode("utf-8"))
        encoded = body
    elif _looks_like_base64(data):
        encoded = data
    else:
        return None
    # Most headers sit in the first bytes; a JPEG frame header can follow large EXIF blocks.
    head = _decode_base64(encoded, _HEADER_PREFIX_BYTES)
    size = read_image_size(head) if head else None
    if size is None and head and head[:2] == b"\xff\xd8" and len(encoded) > len(head) * 4 // 3:
        whole = _decode_base64(encoded, None)
        size = read_image_size(whole) if whole else None
    return size


def image_dimensions(part: Part) -> tuple[int | None, int | None]:
    """Width and height of an image part: its fields first, then the payload's header."""
    width = part.width if part.width and part.width > 0 else None
    height = part.height if part.height and part.height > 0 else None
    if width and height:
        return width, height
    measured = _payload_image_size(part.data)
    if measured is None:
        return width, height
    return width or measured[0], height or measured[1]


# --- classification ----------------------------------------------------------------------------


def _path_extension(path: str) -> str | None:
    path = path.split("#", 1)[0].split("?", 1)[0]
    match = re.search(r"\.([a-z0-9]+)$", path, re.IGNORECASE)
    return match.group(1).lower() if match else None


def _has_image_extension(path: str | None) -> bool:
    return isinstance(path, str) and _path_extension(path) in _IMAGE_EXTENSIONS


def is_image_part(part: Part) -> bool:
    """An ``image`` part, or a ``file`` part that holds an image (by MIME type, data: URI, URL
    extension or filename extension)."""
    if part.type == "image":
        return True
    if part.type != "file":
        return False
    if isinstance(part.mime_type, str) and part.mime_type.lower().startswith("image/"):
        return True
    data = part.data
    if isinstance(data, str):
        if data.startswith("data:image/"):
            return True
        if _is_http_url(data) and _has_image_extension(urlsplit(data).path):
            return True
    return _has_image_extension(part.filename)


def _attachment_mime_type(part: Part, fallback: str) -> str:
    if isinstance(part.mime_type, str) and part.mime_type.strip():
        return part.mime_type.strip()
    data = part.data
    if isinstance(data, str) and data.startswith("data:"):
        ends = [i for i in (data.find(";"), data.find(",")) if i != -1]
        if ends and min(ends) > 5:
            return data[5 : min(ends)]
    return fallback


def _attachment_filename(part: Part) -> str | None:
    if isinstance(part.filename, str) and part.filename.strip():
        return part.filename.strip()
    if _is_http_url(part.data):
        segments = [s for s in urlsplit(part.data).path.split("/") if s]
        if segments:
            return unquote(segments[-1])
    return None


# --- estimates ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AttachmentEstimate:
    """An attachment's estimate and the description it was computed from.

    ``kind`` is ``image``, ``image-like-file``, ``non-image-file`` or ``file-descriptor``. For a
    ``file-descriptor`` the tokens are those of ``payload`` under the caller's text estimator, so
    ``tokens`` is ``None`` here. ``payload`` (JSON) changes whenever an input of the estimate does,
    which makes it a cache key.
    """

    kind: str
    tokens: int | None
    payload: str


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _openai_high_detail_tiles(
    width: int | None, height: int | None, size_bytes: int | None, pricing: _OpenAIImagePricing
) -> int:
    if width and height:
        w, h = float(width), float(height)
        if max(w, h) > 2048:
            ratio = 2048 / max(w, h)
            w, h = w * ratio, h * ratio
        if min(w, h) > 768:
            ratio = 768 / min(w, h)
            w, h = w * ratio, h * ratio
        w_px, h_px = max(1, _js_round(w)), max(1, _js_round(h))
        return max(1, math.ceil(w_px / 512) * math.ceil(h_px / 512))
    if size_bytes is not None:
        if size_bytes <= 512 * _KB:
            return 1
        if size_bytes <= 2 * _MB:
            return 4
        if size_bytes <= 4 * _MB:
            return 6
        return 8
    return pricing.fallback_tiles


def _anthropic_image_tokens(width: int | None, height: int | None, size_bytes: int | None) -> int:
    if width and height:
        long_edge = max(width, height)
        if long_edge > _ANTHROPIC_MAX_LONG_EDGE:
            ratio = _ANTHROPIC_MAX_LONG_EDGE / long_edge
            width, height = max(1, _js_round(width * ratio)), max(1, _js_round(height * ratio))
        return max(1, math.ceil(width * height * (1 / 750)))
    if size_bytes is not None:
        if size_bytes <= 512 * _KB:
            return 341
        if size_bytes <= 2 * _MB:
            return 1366
        if size_bytes <= 4 * _MB:
            return 2048
        return 2731
    return 1600


def _google_media_resolution(part: Part) -> str:
    value = part.metadata.get("mediaResolution")
    return value if value in _GEMINI_3_TOKENS else "unspecified"


def _image_estimate(part: Part, model: ModelRef) -> AttachmentEstimate:
    kind = "image" if part.type == "image" else "image-like-file"
    width, height = image_dimensions(part)
    stats = _source_stats(part)
    described: dict[str, Any] = {
        "kind": kind,
        "provider": model.provider,
        "modelId": model.model_id or None,
    }
    if model.provider == "google":
        if model.model_id.startswith("gemini-3"):
            resolution = _google_media_resolution(part)
            tokens = _GEMINI_3_TOKENS[resolution]
            described |= {"estimator": "google-gemini-3", "mediaResolution": resolution}
        else:
            tiles = max(1, math.ceil(width / 768) * math.ceil(height / 768)) if width and height else 1
            tokens = tiles * _GOOGLE_TILE_TOKENS
            described |= {"estimator": "google-legacy"}
    elif model.provider == "anthropic":
        tokens = _anthropic_image_tokens(width, height, stats.size_bytes)
        described |= {"estimator": "anthropic"}
    else:
        pricing = _openai_pricing(model.model_id)
        detail = part.detail if part.detail in ("low", "high") else "auto"
        effective = detail
        if detail == "auto":
            if width and height:
                effective = "high" if max(width, height) > 768 else "low"
            elif stats.size_bytes is not None:
                effective = "high" if stats.size_bytes > _MB else "low"
            else:
                effective = "low"
        tiles = _openai_high_detail_tiles(width, height, stats.size_bytes, pricing) if effective == "high" else 0
        tokens = pricing.base_tokens + tiles * pricing.tile_tokens
        described |= {
            "estimator": "openai" if model.provider == "openai" else "fallback",
            "detail": detail,
            "effectiveDetail": effective,
        }
    described |= {
        "width": width,
        "height": height,
        "source": stats.source,
        "sizeBytes": stats.size_bytes,
        "mimeType": part.mime_type,
        "filename": part.filename,
    }
    return AttachmentEstimate(kind, tokens, _dumps(described))


def _file_tokens_from_bytes(provider: str | None, mime_type: str, size_bytes: int) -> int:
    mime = mime_type.lower().split(";", 1)[0].strip()
    if mime == "application/pdf":
        if provider == "google":
            return max(258, math.ceil(size_bytes / 20))
        if provider == "anthropic":
            return max(1500, math.ceil(size_bytes / 3))
        return max(500, math.ceil(size_bytes / 4))
    # Text-like and unknown binary files share one rate; unknown stays conservative-upward.
    return max(1, math.ceil(size_bytes / 4))


def _file_descriptor(part: Part) -> str:
    return _dumps({"type": "file", "mimeType": part.mime_type, "filename": _attachment_filename(part)})


def describe_attachment(part: Part, model: str | None) -> AttachmentEstimate:
    """The estimate of an ``image`` or ``file`` part for ``model`` (see the module docstring)."""
    if part.type not in ("image", "file"):
        raise ValueError(f"describe_attachment expects an 'image' or 'file' part, got type {part.type!r}")
    ref = parse_model(model)
    if is_image_part(part):
        return _image_estimate(part, ref)
    stats = _source_stats(part)
    if stats.size_bytes is None:
        return AttachmentEstimate("file-descriptor", None, _file_descriptor(part))
    mime_type = _attachment_mime_type(part, "application/octet-stream")
    tokens = _file_tokens_from_bytes(ref.provider, mime_type, stats.size_bytes)
    payload = _dumps(
        {
            "kind": "non-image-file",
            "provider": ref.provider or "fallback",
            "modelId": ref.model_id or None,
            "estimator": "bytes",
            "source": stats.source,
            "sizeBytes": stats.size_bytes,
            "mimeType": mime_type,
            "filename": _attachment_filename(part),
        }
    )
    return AttachmentEstimate("non-image-file", tokens, payload)


def estimate_image_tokens(part: Part, model: str | None) -> int:
    """Estimated input tokens of an image part (``type="image"`` or an image-like file)."""
    if not is_image_part(part):
        raise ValueError(f"estimate_image_tokens expects an image part, got type {part.type!r}")
    estimate = _image_estimate(part, parse_model(model))
    assert estimate.tokens is not None
    return estimate.tokens


def estimate_file_tokens(part: Part, model: str | None) -> int:
    """Estimated input tokens of a ``file`` part. Image-like files are priced as images; a file
    without a measurable payload costs the tokenx estimate of its descriptor."""
    if part.type != "file":
        raise ValueError(f"estimate_file_tokens expects a 'file' part, got type {part.type!r}")
    estimate = describe_attachment(part, model)
    if estimate.tokens is None:
        return estimate_token_count(estimate.payload)
    return estimate.tokens

"""Which image/file attachments reach the Observer model (``observation.observeAttachments``).

The Observer's transcript always keeps its placeholder lines (``[Image #1: photo.png]``); this
module decides which attachments are *also* sent as real multimodal content next to them:

* ``True`` (the default): all of them;
* ``False``: none;
* ``"auto"``: all when the Observer model accepts images, none when it is known to be text-only,
  all when the model is unknown (:func:`model_accepts_attachments`, a small built-in table);
* a list of MIME patterns: exact types (``"application/pdf"``), subtype wildcards (``"image/*"``)
  and ``"*"`` for everything, compared case-insensitively.

The same rule applies to attachments inside tool results (content blocks of type ``image``,
``image-data``, ``file``, ``file-data``, ``media`` or ``audio``). Only images are sent as content
parts (OpenAI style ``image_url``); other files stay placeholders, as in the reference.
"""

from __future__ import annotations

import base64
import dataclasses
import mimetypes
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit

from omlab.engine.attachment_tokens import is_image_part, parse_model
from omlab.engine.messages import Message, Part
from omlab.llm.spec import primary_model_name

AttachmentRule = bool | Literal["auto"] | Sequence[str]

ATTACHMENT_PART_TYPES = frozenset({"image", "file"})
TOOL_RESULT_ATTACHMENT_BLOCKS = frozenset({"image", "image-data", "file", "file-data", "media", "audio"})
UNKNOWN_IMAGE_MIME = "image/unknown"
UNKNOWN_FILE_MIME = "application/octet-stream"

# --- the Observer model's capabilities ---------------------------------------------------------

#: (provider or None for any, model-id regex, accepts images). First match wins.
_CAPABILITIES: tuple[tuple[str | None, re.Pattern[str], bool], ...] = tuple(
    (provider, re.compile(pattern), accepts)
    for provider, pattern, accepts in (
        ("omlab", r".*", False),  # the built-in offline models read text only
        ("deepseek", r".*", False),
        (None, r"^deepseek-(chat|reasoner|coder|v[0-9])", False),
        (None, r"^(gpt-3\.5|text-|davinci|babbage)", False),
        (None, r"^gpt-4(-0314|-0613|-32k.*)?$", False),
        (None, r"^(o1-mini|o3-mini)", False),
        (None, r"^claude-(2|instant)", False),
        (None, r"^(llama-?3\.[0-3]|llama3-|mixtral|gemma2?-|qwen-?2\.5-coder)", False),
        (
            None,
            r"^(gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-4\.5|gpt-5|chatgpt-4o|o1$|o1-20|o3$|o3-20|o3-pro|o4-mini)",
            True,
        ),
        (None, r"^gemini", True),
        (None, r"^claude-(3|sonnet|opus|haiku)", True),
        (None, r"^(grok-.*vision|grok-4|pixtral|llama-4|llava)", True),
    )
)


def model_accepts_attachments(model: Any) -> bool | None:
    """Whether the model takes image input: True, False, or None when the table does not know.

    ``model`` is a model spec (``"provider/model"``, a fallback list…); routers and callables
    cannot be known without resolving them and give None."""
    name = model if isinstance(model, str) else _primary_name(model)
    if not name:
        return None
    ref = parse_model(name)
    model_id = ref.model_id.rsplit("/", 1)[-1]  # "openrouter/openai/gpt-4o" → "gpt-4o"
    for provider, pattern, accepts in _CAPABILITIES:
        if (provider is None or provider == ref.provider) and pattern.search(model_id):
            return accepts
    return None


def _primary_name(model: Any) -> str | None:
    try:
        return primary_model_name(model)
    except (ValueError, TypeError):
        return None


# --- MIME types --------------------------------------------------------------------------------

_MAGIC = (
    (b"\x89PNG", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF8", "image/gif"),
    (b"%PDF", "application/pdf"),
)


def _sniff(data: bytes) -> str | None:
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _guess_from_name(name: str | None) -> str | None:
    if not name:
        return None
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed


def _data_uri_mime(data: str) -> str | None:
    if not data.startswith("data:"):
        return None
    head = data[5 : data.find(",")] if "," in data else data[5:]
    mime = head.split(";", 1)[0].strip()
    return mime or None


def _payload_bytes(data: Any, limit: int = 16) -> bytes | None:
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data[:limit])
    if isinstance(data, str) and not data.startswith(("data:", "http://", "https://")):
        try:
            return base64.b64decode(data[: (limit // 3 + 1) * 4], validate=False)
        except (ValueError, TypeError):
            return None
    return None


def _normalise_mime(mime: str) -> str:
    return mime.split(";", 1)[0].strip().lower()


def attachment_mime_type(part: Part) -> str:
    """The MIME type of an image or file part: the declared one, else the data: URI's, the file
    name's or URL's extension, the payload's magic bytes; ``image/unknown`` or
    ``application/octet-stream`` when nothing tells. Always lower case, without parameters."""
    if isinstance(part.mime_type, str) and part.mime_type.strip():
        return _normalise_mime(part.mime_type)
    data = part.data
    found = _data_uri_mime(data) if isinstance(data, str) else None
    found = found or _guess_from_name(part.filename)
    if not found and isinstance(data, str) and data.startswith(("http://", "https://")):
        found = _guess_from_name(urlsplit(data).path)
    if not found:
        head = _payload_bytes(data)
        found = _sniff(head) if head else None
    if found:
        return _normalise_mime(found)
    return UNKNOWN_IMAGE_MIME if is_image_part(part) else UNKNOWN_FILE_MIME


def mime_allowed(mime: str, patterns: Iterable[str]) -> bool:
    """Whether ``mime`` matches one of ``patterns`` (exact, ``type/*`` or ``*``; case-insensitive)."""
    mime = _normalise_mime(mime)
    kind = mime.split("/", 1)[0]
    for raw in patterns:
        pattern = raw.strip().lower()
        if pattern == "*" or pattern == mime:
            return True
        if pattern.endswith("/*") and pattern[:-2] == kind:
            return True
    return False


# --- the rule ----------------------------------------------------------------------------------


def _check_rule(rule: Any) -> None:
    if isinstance(rule, bool) or rule == "auto":
        return
    if isinstance(rule, str) or not isinstance(rule, Sequence) or not all(isinstance(p, str) for p in rule):
        raise ValueError(
            f"observation.observeAttachments: expected true, false, 'auto' or a list of MIME patterns, got {rule!r}"
        )


def _allowed_mime(mime: str, rule: AttachmentRule, observer_model: Any) -> bool:
    _check_rule(rule)
    if rule is True:
        return True
    if rule is False:
        return False
    if rule == "auto":
        return model_accepts_attachments(observer_model) is not False
    return mime_allowed(mime, rule)  # type: ignore[arg-type]


def attachment_allowed(part: Part, rule: AttachmentRule, *, observer_model: Any = None) -> bool:
    """Whether ``part`` may be sent to the Observer model. Parts that are not image/file
    attachments are always allowed (the rule is only about attachments)."""
    if part.type not in ATTACHMENT_PART_TYPES:
        _check_rule(rule)
        return True
    return _allowed_mime(attachment_mime_type(part), rule, observer_model)


# --- tool results ------------------------------------------------------------------------------


def _result_blocks(value: Any) -> tuple[str, list[Any]] | None:
    """The content-block list of a multimodal tool result and the key holding it."""
    if not isinstance(value, dict):
        return None
    key = "value" if value.get("type") == "content" else "content"
    blocks = value.get(key)
    return (key, blocks) if isinstance(blocks, list) else None


def _block_is_attachment(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") in TOOL_RESULT_ATTACHMENT_BLOCKS
        and (block.get("data") is not None or block.get("url") is not None)
    )


def _block_mime(block: dict[str, Any]) -> str:
    declared = block.get("mediaType") or block.get("mimeType")
    if isinstance(declared, str) and declared.strip():
        return _normalise_mime(declared)
    data = block.get("data") if block.get("data") is not None else block.get("url")
    part = Part(
        type="image" if block.get("type") in ("image", "image-data") else "file",
        data=data,
        filename=block.get("filename"),
    )
    return attachment_mime_type(part)


def _block_placeholder(block: dict[str, Any], mime: str) -> dict[str, Any]:
    label = "Image" if mime.startswith("image/") else "File"
    name = block.get("filename") or mime
    return {"type": "text", "text": f"[{label}: {name} — not sent to the observer]"}


def filter_tool_result(value: Any, rule: AttachmentRule, observer_model: Any = None) -> Any:
    """A tool result with every attachment block the rule refuses replaced by a text
    placeholder. Results without content blocks are returned unchanged (the same object)."""
    found = _result_blocks(value)
    if found is None:
        return value
    key, blocks = found
    changed = False
    kept: list[Any] = []
    for block in blocks:
        if _block_is_attachment(block):
            mime = _block_mime(block)
            if not _allowed_mime(mime, rule, observer_model):
                kept.append(_block_placeholder(block, mime))
                changed = True
                continue
        kept.append(block)
    return {**value, key: kept} if changed else value


def filter_parts_for_observer(message: Message, rule: AttachmentRule, observer_model: Any = None) -> list[Part]:
    """The message's parts as the Observer model may receive them: attachments the rule refuses
    are dropped (the transcript still shows their placeholders) and tool results lose refused
    attachment blocks (replaced by placeholders). Parts are never mutated; changed ones are copies."""
    out: list[Part] = []
    for part in message.parts:
        if part.type in ATTACHMENT_PART_TYPES:
            if attachment_allowed(part, rule, observer_model=observer_model):
                out.append(part)
        elif part.type == "tool-invocation" and part.result is not None:
            filtered = filter_tool_result(part.result, rule, observer_model)
            out.append(part if filtered is part.result else dataclasses.replace(part, result=filtered, token_cache={}))
        else:
            out.append(part)
    return out


# --- content parts for the Observer request ----------------------------------------------------


def _image_url(data: Any, mime: str) -> str | None:
    if not mime.startswith("image/") or mime == UNKNOWN_IMAGE_MIME:
        head = _payload_bytes(data)
        sniffed = _sniff(head) if head else None
        mime = sniffed if sniffed and sniffed.startswith("image/") else "image/png"
    if isinstance(data, bytes | bytearray | memoryview):
        return f"data:{mime};base64,{base64.b64encode(bytes(data)).decode('ascii')}"
    if isinstance(data, str) and data.strip():
        data = data.strip()
        if data.startswith(("http://", "https://", "data:")):
            return data
        return f"data:{mime};base64,{data}"
    return None


def _image_content(url: str, detail: str | None) -> dict[str, Any]:
    image: dict[str, Any] = {"url": url}
    if detail in ("low", "high", "auto"):
        image["detail"] = detail
    return {"type": "image_url", "image_url": image}


def attachment_content_parts(
    messages: Sequence[Message],
    rule: AttachmentRule,
    observer_model: Any = None,
    *,
    attachment_counter: list[int] | None = None,
) -> list[dict[str, Any]]:
    """OpenAI-style content parts for the images the Observer may see, in transcript order.

    Each image is preceded by a text part repeating its transcript placeholder
    (``[Image #1: photo.png]``, numbered exactly as :func:`omlab.engine.transcript.format_history`
    numbers them; pass the same ``attachment_counter`` for multi-thread prompts) so the model can
    tie the picture to its line. Tool-result images follow a ``[Image from tool result NAME]``
    label. Non-image files are never sent (their placeholder is enough).
    """
    counter = attachment_counter if attachment_counter is not None else [0, 0]
    out: list[dict[str, Any]] = []
    for message in messages:
        for part in message.parts:
            if part.is_data:
                continue
            if part.type in ATTACHMENT_PART_TYPES:
                # the transcript's own numbering: by type or declared MIME, images and files apart
                labelled_image = part.type == "image" or (part.mime_type or "").startswith("image/")
                slot = 0 if labelled_image else 1
                counter[slot] += 1
                if not is_image_part(part) or not attachment_allowed(part, rule, observer_model=observer_model):
                    continue
                url = _image_url(part.data, attachment_mime_type(part))
                if url is None:
                    continue
                label = "Image" if labelled_image else "File"
                name = part.filename or part.mime_type or "attachment"
                out.append({"type": "text", "text": f"[{label} #{counter[slot]}: {name}]"})
                out.append(_image_content(url, part.detail))
            elif part.type == "tool-invocation" and part.state == "result":
                found = _result_blocks(filter_tool_result(part.result, rule, observer_model))
                if found is None:
                    continue
                for block in found[1]:
                    if not _block_is_attachment(block):
                        continue
                    mime = _block_mime(block)
                    if not mime.startswith("image/"):
                        continue
                    data = block.get("data") if block.get("data") is not None else block.get("url")
                    url = _image_url(data, mime)
                    if url is None:
                        continue
                    out.append({"type": "text", "text": f"[Image from tool result {part.tool_name or 'tool'}]"})
                    out.append(_image_content(url, block.get("detail")))
    return out


def observer_user_content(
    prompt_text: str,
    messages: Sequence[Message],
    rule: AttachmentRule,
    observer_model: Any = None,
) -> str | list[dict[str, Any]]:
    """The Observer's user-message ``content``: ``prompt_text`` alone when no attachment goes
    along, else a text part followed by :func:`attachment_content_parts`."""
    parts = attachment_content_parts(messages, rule, observer_model)
    if not parts:
        return prompt_text
    return [{"type": "text", "text": prompt_text}, *parts]


__all__ = [
    "AttachmentRule",
    "attachment_allowed",
    "attachment_content_parts",
    "attachment_mime_type",
    "filter_parts_for_observer",
    "filter_tool_result",
    "mime_allowed",
    "model_accepts_attachments",
    "observer_user_content",
]

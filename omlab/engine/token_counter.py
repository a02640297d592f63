"""Token counts of messages, as the reference engine computes them (spec: om-reference.md §5).

A message costs ``tokens(role) + 3.8 + Σ parts``, rounded (JavaScript rounding); a list costs
24 + Σ messages, and an empty list 0. Part rules:

* ``text``: tokens of the text.
* ``tool-invocation`` by state:

  - ``call`` / ``partial-call`` / ``approval-requested``: tokens(tool name) + tokens(args); args
    that are not a string are JSON-stringified and then take 12 off the message overhead;
  - ``approval-responded``: the same signature + tokens(approval reason) + one more message
    overhead (3.8); the reason is ``part.metadata["approval"]["reason"]``;
  - ``result``: one more message overhead + tokens of the *full* serialized result (JSON with a
    2-space indent; ``encryptedContent`` strings over 256 characters are stubbed), and 12 off
    if the result is not a string. ``part.metadata["modelOutput"]``, when present, replaces the
    result (the value the model actually saw). A result whose content blocks hold images or files
    is priced block by block (text, image and file estimates, JSON for the rest);
  - ``output-denied`` / ``output-error``: one more message overhead + tokens(reason / error text).

* ``reasoning`` and ``data-*`` parts: 0.
* ``image`` / ``file``: :mod:`omlab.engine.attachment_tokens`.
* any other part (or a tool invocation with an unknown state): tokens of the part's JSON.

Caching: every part estimate is stored in ``part.token_cache`` as
``"<source>|<kind>:<blake2b(payload)>" -> tokens`` with ``source = "v<CACHE_VERSION>:<estimator>"``.
An entry is used only when its whole key matches, so editing a part or switching estimator
recomputes it, and storing an estimate drops the part's other entries of the same kind. A part can
hold several kinds (a tool call's name and args). The entries are flat (a string and a number, not
the reference's ``{"v", "source", "key", "tokens"}`` record) because a dict holding only strings
and numbers is invisible to CPython's garbage collector: one record per message kept every part's
cache tracked for the whole session, and at a million tokens those dicts alone set off a full
collection (``benchmarks/bench_engine.py``).
``part.metadata["tokenEstimate"] = {"source": "client", "tokens": N}`` always wins.
Message and conversation overheads are never cached; ``message.token_cache`` stays unused because
omlab messages carry all their content in parts.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from omlab.engine.attachment_tokens import describe_attachment, image_dimensions, is_image_part
from omlab.engine.log_tokens import LeadingLines, LogTokenMemo
from omlab.engine.messages import Message, Part
from omlab.tokens.tiktoken_count import count_tiktoken, load_encoding
from omlab.tokens.tokenx import estimate_token_count

__all__ = [
    "CACHE_VERSION",
    "JSON_OVERHEAD_DELTA",
    "TOKENS_PER_CONVERSATION",
    "TOKENS_PER_MESSAGE",
    "TokenCounter",
]

#: Bump when any rule changes: every cached estimate (except client ones) is then recomputed.
CACHE_VERSION = 1
#: Role, framing and separators of one message (a practical average across providers).
TOKENS_PER_MESSAGE = 3.8
#: Conversation framing: system prompt wrapper, reply priming.
TOKENS_PER_CONVERSATION = 24
#: Structured (JSON) tool arguments and results are billed with less framing than prose.
JSON_OVERHEAD_DELTA = -12

Estimator = Literal["tokenx", "tiktoken"]

_ENCRYPTED_CONTENT_KEY = "encryptedContent"
_ENCRYPTED_CONTENT_STUB_THRESHOLD = 256
_CALL_STATES = frozenset({"call", "partial-call", "approval-requested"})
_CAMEL_CASE_FIELDS = {
    "tool_call_id": "toolCallId",
    "tool_name": "toolName",
    "error_text": "errorText",
    "mime_type": "mimeType",
    "size_bytes": "sizeBytes",
    "created_at": "createdAt",
}


# --- JavaScript-compatible helpers -----------------------------------------------------------


def _js_round(value: float) -> int:
    """JavaScript ``Math.round``: halves round up."""
    return math.floor(value + 0.5)


def _js_truthy(value: Any) -> bool:
    """JavaScript truthiness: empty objects and arrays are truthy, ``""``, 0 and NaN are not."""
    if isinstance(value, (dict, list, tuple)):
        return True
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value)


def _utf16_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


def _js_datetime(value: datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def _jsonable(value: Any, *, stub_encrypted: bool, seen: set[int] | None = None) -> Any:
    """A JSON-ready copy that serializes like ``JSON.stringify`` would (integral floats without
    ``.0``, NaN/Infinity as null, dates in ISO form)."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return int(value) if value.is_integer() and abs(value) < 1e21 else value
    if isinstance(value, datetime):
        return _js_datetime(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    seen = seen if seen is not None else set()
    if id(value) in seen:
        raise ValueError("circular reference")
    if isinstance(value, dict):
        seen.add(id(value))
        out: dict[str, Any] = {}
        for key, entry in value.items():
            if (
                stub_encrypted
                and key == _ENCRYPTED_CONTENT_KEY
                and isinstance(entry, str)
                and _utf16_length(entry) > _ENCRYPTED_CONTENT_STUB_THRESHOLD
            ):
                out[str(key)] = f"[stripped encryptedContent: {_utf16_length(entry)} characters]"
            else:
                out[str(key)] = _jsonable(entry, stub_encrypted=stub_encrypted, seen=seen)
        seen.discard(id(value))
        return out
    if isinstance(value, (list, tuple)):
        seen.add(id(value))
        items = [_jsonable(item, stub_encrypted=stub_encrypted, seen=seen) for item in value]
        seen.discard(id(value))
        return items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(dataclasses.asdict(value), stub_encrypted=stub_encrypted, seen=seen)
    return str(value)


def _compact_json(value: Any) -> str:
    """``JSON.stringify(value)``."""
    return json.dumps(_jsonable(value, stub_encrypted=False), ensure_ascii=False, separators=(",", ":"))


def _format_tool_result(value: Any) -> str:
    """A tool result as the model sees it: strings as is, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(_jsonable(value, stub_encrypted=True), ensure_ascii=False, indent=2)
    except ValueError:
        return str(value)


def _result_identity(value: Any) -> str | None:
    """A cheap string that changes whenever the formatted result would (``None``: use the
    formatted result itself). Strings are their own identity."""
    if isinstance(value, str):
        return None
    try:
        return "identity:" + json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
    except (TypeError, ValueError):
        return None


def _payload_hash(payload: str) -> str:
    return hashlib.blake2b(payload.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _entry_kind(cache_key: str) -> str:
    """The kind of a cache key (``"v1:tokenx|text:<hash>"`` -> ``"text"``)."""
    return cache_key.rpartition("|")[2].partition(":")[0]


def _serialize_part(part: Part) -> str:
    """The part as JSON (AI-SDK field names), without its caches or a client estimate."""
    fields: dict[str, Any] = {}
    for field in dataclasses.fields(part):
        if field.name == "token_cache":
            continue
        value = getattr(part, field.name)
        if field.name == "metadata":
            value = {k: v for k, v in value.items() if k != "tokenEstimate"}
            if not value:
                continue
        if value is None:
            continue
        fields[_CAMEL_CASE_FIELDS.get(field.name, field.name)] = value
    return _compact_json(fields)


def _client_estimate(part: Part) -> float | None:
    entry = part.metadata.get("tokenEstimate") if part.metadata else None
    if not isinstance(entry, dict) or entry.get("source") != "client":
        return None
    tokens = entry.get("tokens")
    if isinstance(tokens, bool) or not isinstance(tokens, (int, float)):
        return None
    return tokens if math.isfinite(tokens) and tokens >= 0 else None


@dataclasses.dataclass(slots=True)
class _PartCost:
    """What one part adds to its message: payload tokens, overhead change, extra messages."""

    tokens: float = 0
    overhead_delta: float = 0
    extra_messages: int = 0

    @property
    def total(self) -> float:
        return self.tokens + self.overhead_delta + self.extra_messages * TOKENS_PER_MESSAGE


class TokenCounter:
    """Counts strings, parts, messages and conversations, caching part estimates on the parts.

    ``model`` (``"provider/model-id"``) drives the image and file heuristics; every method takes a
    ``model`` override (the actor's model, say) for one call. ``estimator`` picks the text counter:
    the tokenx 1.3.0 port (the reference behaviour) or exact tiktoken counts in ``encoding``.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        estimator: Estimator = "tokenx",
        encoding: str = "o200k_base",
    ) -> None:
        if estimator == "tokenx":
            self._count_text: Callable[[str], int] = estimate_token_count
            self.source = f"v{CACHE_VERSION}:tokenx"
        elif estimator == "tiktoken":
            load_encoding(encoding)  # fail now, with a clear error, if it is not available offline
            self._count_text = lambda text: count_tiktoken(text, encoding)
            self.source = f"v{CACHE_VERSION}:tiktoken-{encoding}"
        else:
            raise ValueError(f"estimator must be 'tokenx' or 'tiktoken', got {estimator!r}")
        self.model = model
        self.estimator: Estimator = estimator
        self.encoding = encoding
        self._role_tokens: dict[str, int] = {}
        self._logs = LogTokenMemo()

    def __repr__(self) -> str:
        return f"TokenCounter(model={self.model!r}, source={self.source!r})"

    # --- public ---------------------------------------------------------------------------------

    def count_string(self, text: str | None) -> int:
        """Tokens of a plain string; never cached (parts cache their own counts)."""
        if not text:
            return 0
        return self._count_text(text)

    def count_log(self, text: str | None) -> int:
        """Tokens of an observation log, memoised per ``Date:`` group and line with tokenx (exact,
        see :mod:`omlab.engine.log_tokens`): logs are recounted after every cycle and repeat almost
        all their groups."""
        if not text:
            return 0
        if self.estimator == "tokenx":
            return self._logs.count(text)
        return self._count_text(text)

    def log_leading_lines(self, text: str, budget: float) -> LeadingLines:
        """The head of an observation log that a background reflection takes: the leading lines
        up to the one where their line-by-line count reaches ``budget`` (all lines when it never
        does), with the :meth:`count_log` of those lines and their length in characters."""
        if self.estimator == "tokenx":
            return self._logs.leading_lines(text, budget)
        lines = text.split("\n")
        covered, total = len(lines), 0
        for index, line in enumerate(lines):
            total += self.count_string(line)
            if total >= budget:
                covered = index + 1
                break
        head = "\n".join(lines[:covered])
        return LeadingLines(covered, self.count_log(head), len(head))

    def count_log_joined(self, first: str, first_tokens: int, second: str) -> int:
        """:meth:`count_log` of ``first + "\\n\\n" + second`` (``first`` alone when ``second`` is
        empty), where ``first_tokens`` is already ``count_log(first)``: with tokenx a count is the
        sum over lines, so only ``second`` is counted."""
        if not second:
            return first_tokens
        if self.estimator == "tokenx":
            return first_tokens + self._logs.count(second)
        return self.count_log(f"{first}\n\n{second}")

    def count_part(self, part: Part, *, model: str | None = None) -> float:
        """What ``part`` adds to its message, overhead adjustments included (can be fractional or
        negative: a JSON tool call takes 12 off the message overhead)."""
        return self._part_cost(part, model or self.model).total

    def count_message(self, message: Message, *, model: str | None = None) -> int:
        """``round(tokens(role) + 3.8 + Σ parts)`` with JavaScript rounding."""
        model = model or self.model
        payload = self._role(message.role)
        overhead = TOKENS_PER_MESSAGE
        extra_messages = 0
        for part in message.parts:
            cost = self._part_cost(part, model)
            payload += cost.tokens
            overhead += cost.overhead_delta
            extra_messages += cost.extra_messages
        if extra_messages:
            overhead += extra_messages * TOKENS_PER_MESSAGE
        return _js_round(payload + overhead)

    def count_messages(self, messages: Iterable[Message], *, model: str | None = None) -> int:
        """24 + Σ messages; 0 for no messages."""
        total = 0
        any_message = False
        for message in messages:
            any_message = True
            total += self.count_message(message, model=model)
        return total + TOKENS_PER_CONVERSATION if any_message else 0

    # --- caching --------------------------------------------------------------------------------

    def _cached_entry(self, part: Part, kind: str, payload: str) -> tuple[str, float | None]:
        key = f"{self.source}|{kind}:{_payload_hash(payload)}"
        tokens = part.token_cache.get(key)
        if isinstance(tokens, (int, float)) and not isinstance(tokens, bool) and math.isfinite(tokens):
            return key, tokens
        return key, None

    @staticmethod
    def _store(part: Part, kind: str, key: str, tokens: float) -> None:
        # An edited part, or another estimator, leaves an entry of the same kind behind: drop it.
        for stale in [k for k in part.token_cache if k != key and _entry_kind(k) == kind]:
            del part.token_cache[stale]
        part.token_cache[key] = tokens

    def _estimate(self, part: Part, kind: str, payload: str) -> float:
        """Tokens of ``payload`` under the text estimator, cached on ``part``."""
        key, tokens = self._cached_entry(part, kind, payload)
        if tokens is None:
            tokens = self.count_string(payload)
            self._store(part, kind, key, tokens)
        return tokens

    def _fixed(self, part: Part, kind: str, payload: str, compute: Callable[[], float]) -> float:
        """A cached estimate that ``compute`` produces from the inputs described by ``payload``."""
        key, tokens = self._cached_entry(part, kind, payload)
        if tokens is None:
            tokens = compute()
            self._store(part, kind, key, tokens)
        return tokens

    def _role(self, role: str) -> int:
        tokens = self._role_tokens.get(role)
        if tokens is None:
            tokens = self._role_tokens[role] = self.count_string(role)
        return tokens

    # --- parts ----------------------------------------------------------------------------------

    def _part_cost(self, part: Part, model: str | None) -> _PartCost:
        client = _client_estimate(part)
        if client is not None:
            return _PartCost(tokens=client)
        kind = part.type
        if kind == "text":
            return _PartCost(tokens=self._estimate(part, "text", part.text) if part.text else 0)
        if kind in ("image", "file"):
            return _PartCost(tokens=self._attachment_tokens(part, model))
        if kind == "reasoning" or part.is_data:
            return _PartCost()
        if kind == "tool-invocation" and part.state is not None:
            cost = self._tool_invocation_cost(part, model)
            if cost is not None:
                return cost
        return _PartCost(tokens=self._estimate(part, f"part-{kind}", _serialize_part(part)))

    def _attachment_tokens(self, part: Part, model: str | None) -> float:
        if is_image_part(part) and not (part.width and part.height):
            width, height = image_dimensions(part)
            if width and height:
                part.width, part.height = width, height  # decoded once, kept on the part
        estimate = describe_attachment(part, model)
        if estimate.tokens is None:
            return self._estimate(part, estimate.kind, estimate.payload)
        fixed_tokens = estimate.tokens
        return self._fixed(part, estimate.kind, estimate.payload, lambda: fixed_tokens)

    def _call_signature(self, part: Part) -> _PartCost:
        cost = _PartCost()
        if part.tool_name:
            cost.tokens += self._estimate(part, "tool-call-name", part.tool_name)
        if _js_truthy(part.args):
            if isinstance(part.args, str):
                cost.tokens += self._estimate(part, "tool-call-args", part.args)
            else:
                cost.tokens += self._estimate(part, "tool-call-args-json", _compact_json(part.args))
                cost.overhead_delta += JSON_OVERHEAD_DELTA
        return cost

    def _tool_invocation_cost(self, part: Part, model: str | None) -> _PartCost | None:
        state = part.state
        if state in _CALL_STATES:
            return self._call_signature(part)
        if state == "approval-responded":
            cost = self._call_signature(part)
            cost.extra_messages += 1
            reason = _approval_reason(part)
            if reason:
                cost.tokens += self._estimate(part, "tool-approval-reason", reason)
            return cost
        if state == "result":
            return self._tool_result_cost(part, model)
        if state == "output-denied":
            reason = _approval_reason(part) or "Tool call was not approved by the user"
            return _PartCost(tokens=self._estimate(part, "tool-result-denied", reason), extra_messages=1)
        if state == "output-error":
            error = part.error_text if isinstance(part.error_text, str) else "Tool execution failed"
            return _PartCost(tokens=self._estimate(part, "tool-result-error", error), extra_messages=1)
        return None

    def _tool_result_cost(self, part: Part, model: str | None) -> _PartCost:
        cost = _PartCost(extra_messages=1)
        stored = "modelOutput" in part.metadata
        value = part.metadata["modelOutput"] if stored else part.result
        if value is None:  # no result recorded (Python has no undefined/null distinction here)
            return cost
        multimodal = self._multimodal_result_tokens(part, value, model)
        if multimodal is not None:
            cost.tokens += multimodal
        else:
            kind = "tool-result-model-output-json" if stored else "tool-result-json"
            identity = _result_identity(value)
            if identity is None:
                cost.tokens += self._estimate(part, kind, _format_tool_result(value))
            else:
                # Keyed on a fast compact dump; the indented text is built only on a cache miss.
                cost.tokens += self._fixed(part, kind, identity, lambda: self.count_string(_format_tool_result(value)))
        if not isinstance(value, str):
            cost.overhead_delta += JSON_OVERHEAD_DELTA
        return cost

    def _multimodal_result_tokens(self, part: Part, value: Any, model: str | None) -> float | None:
        """Price a result's content blocks one by one when some hold an image or a file."""
        if not isinstance(value, dict):
            return None
        blocks = value.get("value") if value.get("type") == "content" else value.get("content")
        if not isinstance(blocks, list):
            return None
        # First describe every block (cheap), then price them only on a cache miss.
        priced: list[tuple[str, Any]] = []
        has_attachment = False
        for block in blocks:
            if not isinstance(block, dict):
                continue
            block_type = block.get("type")
            data = block.get("data")
            if block_type == "text":
                text = block["text"] if isinstance(block.get("text"), str) else str(block.get("value") or "")
                priced.append(("text", text))
            elif block_type in ("image", "image-data") or (
                block_type == "media" and str(block.get("mediaType") or "").startswith("image/")
            ):
                if not isinstance(data, str):
                    priced.append(("json", _format_tool_result(block)))
                    continue
                has_attachment = True
                mime = block.get("mediaType") or block.get("mimeType")
                priced.append(("attachment", Part(type="image", data=data, mime_type=mime)))
            elif block_type in ("audio", "file-data", "media"):
                if not isinstance(data, str):
                    priced.append(("json", _format_tool_result(block)))
                    continue
                has_attachment = True
                mime = block.get("mediaType") or block.get("mimeType")
                filename = block.get("filename")
                priced.append(("attachment", Part(type="file", data=data, mime_type=mime, filename=filename)))
            else:
                priced.append(("json", _format_tool_result(block)))
        if not has_attachment:
            return None

        descriptions: list[Any] = []
        estimates = []
        for how, item in priced:
            if how == "attachment":
                estimate = describe_attachment(item, model)
                estimates.append(estimate)
                descriptions.append({"type": estimate.kind, "estimate": estimate.payload})
            else:
                estimates.append(None)
                descriptions.append({"type": how, "hash": _payload_hash(item)})

        def price_blocks() -> float:
            tokens: float = 0
            for (how, item), estimate in zip(priced, estimates):
                if estimate is None:
                    tokens += self.count_string(item)
                elif estimate.tokens is None:
                    tokens += self.count_string(estimate.payload)
                else:
                    tokens += estimate.tokens
            return tokens

        payload = _compact_json({"type": "content", "value": descriptions})
        return self._fixed(part, "tool-result-multimodal-content", payload, price_blocks)


def _approval_reason(part: Part) -> str | None:
    approval = part.metadata.get("approval") if part.metadata else None
    reason = approval.get("reason") if isinstance(approval, dict) else None
    return reason if isinstance(reason, str) and reason else None

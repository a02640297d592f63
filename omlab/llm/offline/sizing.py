"""Offline Observer/Reflector output sized to a calibrated model's compression.

A calibrated profile (``omlab calibrate``) says how many observation tokens a real Observer or
Reflector produced for a given amount of content: the message tokens an observation covered, or
the observation tokens a reflection condensed (the ``input_tokens`` the engine gives a request,
which is what it routes ``ModelByInputTokens`` on). :class:`OutputSizing` holds that curve as a
compression ratio interpolated over content size; :func:`sized_generate` runs the built-in
extractive model and then brings the text inside its ``<observations>`` block (what the engine
keeps in the log; continuation hints come on top, as a real model's do) to the fitted size:

* **reflector**: condenses the observations straight to the fitted size (not to the engine's
  target: a real model that misses the target makes the engine retry, and so does this one);
* **observer**: when its extractive observations are longer than fitted, they are condensed with
  the reflector's ladder (lowest priority and oldest first); when shorter (or condensed below the
  size, the ladder moving in whole steps), more of the history is copied in, verbatim and in
  order, as 🟢 lines, until the size is reached or the history runs out. Nothing is invented:
  every word comes from the request.

The text stays a baseline's: a profile makes its *size* (hence reflection counts, context size and
cost) follow the real model, not its content.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omlab.llm.offline.base import OfflineResult, message_text
from omlab.llm.offline.observer import OfflineObserver
from omlab.llm.offline.reflector import parse_reflector_request, reflect
from omlab.llm.offline.transcript_parser import Entry, parse_observer_request
from omlab.llm.types import ChatMessage
from omlab.tokens.tokenx import estimate_token_count

SIZED_ROLES = ("observer", "reflector")
_HINT_RE = re.compile(r"<current-task>\s*(.*?)\s*</current-task>", re.DOTALL)
_WRAPPER_TOKENS = estimate_token_count("<observations>\n\n</observations>") - estimate_token_count("")


class SizingError(ValueError):
    """An output sizing that cannot be used (names the field)."""


@dataclass(frozen=True, slots=True)
class OutputSizing:
    """Observation tokens as a function of content tokens: ``content / ratio(content)``.

    ``content_tokens`` (ascending) and ``ratios`` are the fitted points; the ratio is linearly
    interpolated between them and held constant beyond the first and last. ``min_output_tokens``
    floors the result. ``overhead_tokens`` (None: not fitted) is what a reply holds beyond its
    observation text (wrapper, continuation hints): the offline observer's hints are clipped to it.
    """

    content_tokens: tuple[float, ...]
    ratios: tuple[float, ...]
    min_output_tokens: int = 1
    overhead_tokens: int | None = None

    def __post_init__(self) -> None:
        if not self.content_tokens or len(self.content_tokens) != len(self.ratios):
            raise SizingError("compression needs as many content_tokens as ratios, at least one")
        if any(not _finite(x) or x < 0 for x in self.content_tokens):
            raise SizingError(f"compression.content_tokens must be numbers >= 0, got {list(self.content_tokens)}")
        if list(self.content_tokens) != sorted(self.content_tokens):
            raise SizingError("compression.content_tokens must be ascending")
        if any(not _finite(r) or r <= 0 for r in self.ratios):
            raise SizingError(f"compression.ratios must be numbers > 0, got {list(self.ratios)}")
        if not isinstance(self.min_output_tokens, int) or self.min_output_tokens < 1:
            raise SizingError(f"min_output_tokens must be an integer >= 1, got {self.min_output_tokens!r}")
        if self.overhead_tokens is not None and (not isinstance(self.overhead_tokens, int) or self.overhead_tokens < 0):
            raise SizingError(f"overhead_tokens must be an integer >= 0, got {self.overhead_tokens!r}")

    def ratio(self, content_tokens: float) -> float:
        """The compression ratio at ``content_tokens`` (interpolated, constant beyond the ends)."""
        xs, ys = self.content_tokens, self.ratios
        if content_tokens <= xs[0]:
            return ys[0]
        if content_tokens >= xs[-1]:
            return ys[-1]
        right = bisect.bisect_right(xs, content_tokens)
        x0, x1, y0, y1 = xs[right - 1], xs[right], ys[right - 1], ys[right]
        return y0 if x1 == x0 else y0 + (y1 - y0) * (content_tokens - x0) / (x1 - x0)

    def output_tokens(self, content_tokens: float) -> int:
        """How many observation tokens the profiled model writes for ``content_tokens`` of content."""
        return max(self.min_output_tokens, round(content_tokens / self.ratio(content_tokens)))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (what a model spec's ``modelSettings.profile`` holds)."""
        data: dict[str, Any] = {
            "content_tokens": list(self.content_tokens),
            "ratios": list(self.ratios),
            "min_output_tokens": self.min_output_tokens,
        }
        if self.overhead_tokens is not None:
            data["overhead_tokens"] = self.overhead_tokens
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OutputSizing:
        """Read :meth:`to_dict`'s form; :class:`SizingError` names a missing or bad field."""
        if not isinstance(data, Mapping):
            raise SizingError(f"a profile's sizing must be a table, got {type(data).__name__}")
        for name in ("content_tokens", "ratios"):
            if not isinstance(data.get(name), Sequence) or isinstance(data.get(name), str):
                raise SizingError(f"compression.{name} must be a list of numbers, got {data.get(name)!r}")
        overhead = data.get("overhead_tokens")
        return cls(
            tuple(float(x) for x in data["content_tokens"]),
            tuple(float(r) for r in data["ratios"]),
            int(data.get("min_output_tokens", 1)),
            None if overhead is None else int(overhead),
        )


def sized_generate(
    name: str,
    messages: list[ChatMessage],
    sizing: OutputSizing,
    content_tokens: int | None,
    *,
    max_output_tokens: int | None = None,
) -> OfflineResult:
    """Run the offline ``observer`` or ``reflector`` with its output brought to ``sizing``.

    ``content_tokens`` is the request's content size (the engine's ``input_tokens``); without it
    the content section of the prompt is counted instead. ``max_output_tokens`` caps the size.
    """
    if name not in SIZED_ROLES:
        raise SizingError(f"a profile sizes omlab/observer or omlab/reflector only, not omlab/{name}")
    user_texts = [message_text(m) for m in messages if m.get("role") == "user"]
    if not user_texts:
        raise ValueError(f"{name} request has no user message")
    input_tokens = sum(estimate_token_count(message_text(m)) for m in messages)
    if name == "reflector":
        request = parse_reflector_request(user_texts[-1])
        content = content_tokens if content_tokens is not None else estimate_token_count(request.observations)
        target = _capped(sizing.output_tokens(content), max_output_tokens)
        text = reflect(request.observations, target + _WRAPPER_TOKENS + 1)
        return OfflineResult(text, input_tokens, estimate_token_count(text))
    natural = OfflineObserver().generate(messages).text
    parsed = parse_observer_request(user_texts[-1])
    if content_tokens is None:
        content_tokens = sum(estimate_token_count(e.text) for t in parsed.threads for e in t.entries)
    target = _capped(sizing.output_tokens(content_tokens), max_output_tokens)
    text = _fit_observer_output(natural, target, [e for t in parsed.threads for e in t.entries])
    if sizing.overhead_tokens is not None:
        text = _fit_hints(text, sizing.overhead_tokens)
    return OfflineResult(text, input_tokens, estimate_token_count(text))


def _fit_observer_output(natural: str, target: int, entries: list[Entry]) -> str:
    """The observer's output with the text inside ``<observations>`` brought close to ``target``
    tokens (continuation hints kept as they are)."""
    start, end = natural.find("<observations>"), natural.rfind("</observations>")
    if start < 0 or end < 0:
        return natural
    body = natural[start : end + len("</observations>")]
    inner = natural[start + len("<observations>") : end].strip("\n")
    wrapper = estimate_token_count(body) - estimate_token_count(inner)
    size = estimate_token_count(inner)
    if size > target:
        body = reflect(body, target + wrapper + 1)
    if estimate_token_count(body) < target + wrapper and entries:  # the ladder's steps can undershoot
        body = _extend(body, target + wrapper, entries)
    return natural[:start] + body + natural[end + len("</observations>") :]


def _fit_hints(text: str, overhead: int) -> str:
    """Clip the continuation hints after ``</observations>`` so that the reply's tokens beyond its
    observation text are about ``overhead``: the suggested response goes first, then the current
    task's last words; hints the real model does not write are dropped."""
    end = text.rfind("</observations>")
    start = text.find("<observations>")
    if end < 0 or start < 0:
        return text
    head = text[: end + len("</observations>")]
    inner = text[start + len("<observations>") : end].strip("\n")
    budget = overhead - (estimate_token_count(head) - estimate_token_count(inner))
    hints = text[end + len("</observations>") :]
    if estimate_token_count(hints) <= budget:
        return text
    task = _HINT_RE.search(hints)
    if task is None or budget <= estimate_token_count("\n<current-task>\n\n</current-task>"):
        return head
    words = task.group(1).split()
    while words and estimate_token_count(f"\n<current-task>\n{' '.join(words)}\n</current-task>") > budget:
        words = words[: max(0, min(len(words) - 1, len(words) * 9 // 10))]
    return head + (f"\n<current-task>\n{' '.join(words)}\n</current-task>" if words else "")


def _extend(body: str, goal: int, entries: list[Entry]) -> str:
    """Append history sentences not yet in ``body``, verbatim, as 🟢 lines until about ``goal``
    tokens (the last line takes the words that land closest to it)."""
    lines = body.split("\n")
    closing = lines.pop()  # </observations>

    def size(extra: list[str]) -> int:
        return estimate_token_count("\n".join([*lines, *extra, closing]))

    day = None
    for entry in entries:
        if size([]) >= goal:
            break
        text = " ".join(entry.text.split())
        if not text or text in body:
            continue
        header = []
        if entry.day != day:
            day = entry.day
            date_line = f"Date: {day.strftime('%b')} {day.day}, {day.year}"
            header = [] if date_line in lines else [date_line]
        clock = "" if entry.minutes is None else f"({entry.minutes // 60:02d}:{entry.minutes % 60:02d}) "
        prefix, words = f"* 🟢 {clock}{entry.role}: ", text.split()
        fits, too_many = 0, len(words) + 1  # binary search: the most words that stay within goal
        while too_many - fits > 1:
            middle = (fits + too_many) // 2
            if size([*header, prefix + " ".join(words[:middle])]) <= goal:
                fits = middle
            else:
                too_many = middle
        if fits < len(words):  # one word more when that lands closer to the goal than stopping short
            over = size([*header, prefix + " ".join(words[: fits + 1])]) - goal
            under = goal - (size([*header, prefix + " ".join(words[:fits])]) if fits else size([]))
            fits += over < under
        if not fits:
            break
        lines.extend([*header, prefix + " ".join(words[:fits])])
    return "\n".join([*lines, closing])


def _capped(target: int, max_output_tokens: int | None) -> int:
    return max(1, min(target, max_output_tokens)) if max_output_tokens is not None else target


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


__all__ = ["SIZED_ROLES", "OutputSizing", "SizingError", "sized_generate"]

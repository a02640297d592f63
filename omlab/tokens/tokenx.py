"""A Python port of tokenx 1.3.0, the vocabulary-free token estimator the reference engine uses.

The estimate must match the JavaScript package exactly (spec: ``tokenx.md`` §1-3), so this module
reproduces the JavaScript semantics that differ from Python's defaults:

* lengths are UTF-16 code units (an emoji is 2), except the CJK rule, which counts code points;
* the whitespace class is JavaScript's ``\\s`` (it includes the BOM U+FEFF and excludes
  U+001C-001F and U+0085, unlike Python's);
* digits are ASCII only;
* the default language patterns fold case the way a non-unicode JavaScript ``/…/i`` does (each
  class lists both cases explicitly, so Python's broader case folding never comes into play);
* the CJK set is the 1.3.0 one (no hiragana, no astral ideographs).

The one quirk not reproduced: a JavaScript pattern with the ``g``/``y`` flag keeps ``lastIndex``
between ``test`` calls and so matches only some of the time. Python patterns are stateless, so a
custom config always behaves like the flag-less JavaScript pattern.

Speed: the estimate only needs the non-whitespace pieces, found with one compiled regex. Under
the default options a piece's price depends on the piece alone, so prices are memoised across
calls in a bounded dictionary (most words of a conversation recur): the sum is then one ``map``
of dictionary look-ups.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "DEFAULT_CHARS_PER_TOKEN",
    "DEFAULT_LANGUAGE_CONFIGS",
    "LanguageConfig",
    "estimate_token_count",
    "is_within_token_limit",
    "slice_by_tokens",
    "split_by_tokens",
    "split_segments",
]

DEFAULT_CHARS_PER_TOKEN = 6

#: The 30 ASCII punctuation characters that split words (the apostrophe and quotes are not here).
PUNCTUATION = ".,!?;(){}[]<>:/\\|@#$%^&*+=`~_-"
#: JavaScript's ``\s``: WhiteSpace (incl. every Zs character and the BOM) plus LineTerminator.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B)) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_PUNCT_CLASS = "".join(re.escape(c) for c in PUNCTUATION)
_WS_CLASS = "".join(re.escape(c) for c in JS_WHITESPACE)
_PUNCT_SET = frozenset(PUNCTUATION)
_WS_SET = frozenset(JS_WHITESPACE)

# Maximal runs of one class each: whitespace, punctuation, everything else. This is exactly what
# JavaScript's ``text.split(/(\s+|[punct]+)/).filter(Boolean)`` returns.
_SEGMENT_RE = re.compile(f"[{_WS_CLASS}]+|[{_PUNCT_CLASS}]+|[^{_WS_CLASS}{_PUNCT_CLASS}]+")
# The same without whitespace runs, which always cost 0.
_PRICED_SEGMENT_RE = re.compile(f"[{_PUNCT_CLASS}]+|[^{_WS_CLASS}{_PUNCT_CLASS}]+")

_CJK_RE = re.compile(
    "[\u4e00-\u9fff\u3400-\u4dbf\u3000-\u303f\uff00-\uffef\u30a0-\u30ff\u2e80-\u2eff"
    "\u31c0-\u31ef\u3200-\u32ff\u3300-\u33ff\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"
    "\ua960-\ua97f\ud7b0-\ud7ff]"
)


@dataclass(frozen=True, slots=True)
class LanguageConfig:
    """A language rule: words in which ``pattern`` matches anywhere cost
    ``ceil(utf16_length / average_chars_per_token)``."""

    pattern: re.Pattern[str]
    average_chars_per_token: float

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, re.Pattern):
            raise TypeError(f"LanguageConfig.pattern must be a compiled re.Pattern, got {type(self.pattern).__name__}")
        if not self.average_chars_per_token > 0:
            raise ValueError(
                f"LanguageConfig.average_chars_per_token must be > 0, got {self.average_chars_per_token!r}"
            )


#: The 1.3.0 defaults, in order (the first matching config wins). Each class spells out both cases
#: because JavaScript's ``/i`` folds through ``toUpperCase`` (``ß`` and ``ẞ`` stay distinct).
DEFAULT_LANGUAGE_CONFIGS: tuple[LanguageConfig, ...] = (
    # German
    LanguageConfig(re.compile("[äÄöÖüÜßẞ]"), 3),
    # French, Spanish, Portuguese, Italian, ...
    LanguageConfig(re.compile("[éÉèÈêÊëËàÀâÂîÎïÏôÔûÛùÙüÜÿŸçÇœŒæÆáÁíÍóÓúÚñÑ]"), 3),
    # Polish, Czech, Slovak, ...
    LanguageConfig(re.compile("[ąĄćĆęĘłŁńŃóÓśŚźŹżŻěĚšŠčČřŘžŽýÝůŮúÚďĎťŤňŇ]"), 3.5),
)


def split_segments(text: str) -> list[str]:
    """The pieces tokenx prices: maximal runs of whitespace, of ASCII punctuation, and of
    everything else. Joined together they give back ``text``."""
    return _SEGMENT_RE.findall(text) if text else []


def utf16_length(text: str) -> int:
    """JavaScript's ``text.length``: UTF-16 code units (astral characters count twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class _Pricer:
    """Prices one segment under fixed options (1.3.0 rules, first match wins)."""

    __slots__ = ("ascii_may_match_config", "configs", "default_ratio")

    def __init__(self, default_chars_per_token: float, language_configs: Sequence[LanguageConfig] | None):
        if isinstance(default_chars_per_token, bool) or not default_chars_per_token > 0:
            raise ValueError(f"default_chars_per_token must be > 0, got {default_chars_per_token!r}")
        if language_configs is None:
            self.configs: tuple[LanguageConfig, ...] = DEFAULT_LANGUAGE_CONFIGS
            # The built-in classes hold only non-ASCII letters, so ASCII words can skip them.
            self.ascii_may_match_config = False
        else:
            self.configs = tuple(language_configs)
            for config in self.configs:
                if not isinstance(config, LanguageConfig):
                    raise TypeError(f"language_configs must hold LanguageConfig items, got {type(config).__name__}")
            self.ascii_may_match_config = bool(self.configs)
        self.default_ratio = default_chars_per_token

    def ratio_for(self, segment: str) -> float:
        for config in self.configs:
            if config.pattern.search(segment):
                return config.average_chars_per_token
        return self.default_ratio

    def __call__(self, segment: str) -> int:
        first = segment[0]
        if first in _WS_SET:
            return 0
        if segment.isascii():
            length = len(segment)
            if length <= 3:
                return 1
            if first in _PUNCT_SET:  # a punctuation run (segments never mix classes)
                return -(-length // 2)
            if segment.isdigit():  # ASCII-only here, so 0-9
                return 1
            if self.ascii_may_match_config:
                return math.ceil(length / self.ratio_for(segment))
            return math.ceil(length / self.default_ratio)
        if _CJK_RE.search(segment):
            return len(segment)  # code points, Latin letters included
        length = len(segment.encode("utf-16-le", "surrogatepass")) // 2
        if length <= 3:
            return 1
        return math.ceil(length / self.ratio_for(segment))


SEGMENT_MEMO_SIZE = 262_144
"""Pieces whose default-option price is remembered; the memo is emptied when it is full."""


class _SegmentPrices(dict[str, int]):
    """Prices of pieces under one :class:`_Pricer`, computed on first look-up and remembered."""

    __slots__ = ("_price",)

    def __init__(self, price: _Pricer) -> None:
        super().__init__()
        self._price = price

    def __missing__(self, segment: str) -> int:
        cost = self._price(segment)
        if len(self) >= SEGMENT_MEMO_SIZE:
            self.clear()
        self[segment] = cost
        return cost


_DEFAULT_PRICES = _SegmentPrices(_Pricer(DEFAULT_CHARS_PER_TOKEN, None))


def estimate_token_count(
    text: str | None,
    *,
    default_chars_per_token: float = DEFAULT_CHARS_PER_TOKEN,
    language_configs: Sequence[LanguageConfig] | None = None,
) -> int:
    """Estimate the token count of ``text`` exactly as tokenx 1.3.0 ``estimateTokenCount`` does.

    ``language_configs`` replaces the defaults completely (``[]`` turns accent handling off); they
    are consulted only for words that no earlier rule (CJK, digits, ≤ 3 units, punctuation) prices.
    """
    if not text:
        return 0
    if language_configs is None and default_chars_per_token == DEFAULT_CHARS_PER_TOKEN:
        # bool is an int: True == 1, never the default, so it still reaches the check in _Pricer
        return sum(map(_DEFAULT_PRICES.__getitem__, _PRICED_SEGMENT_RE.findall(text)))
    price = _Pricer(default_chars_per_token, language_configs)
    segments = _PRICED_SEGMENT_RE.findall(text)
    if len(segments) < 64:
        return sum(map(price, segments))
    return sum(price(segment) * count for segment, count in Counter(segments).items())


def is_within_token_limit(
    text: str | None,
    token_limit: float,
    *,
    default_chars_per_token: float = DEFAULT_CHARS_PER_TOKEN,
    language_configs: Sequence[LanguageConfig] | None = None,
) -> bool:
    """True when the estimate is at most ``token_limit`` (the limit itself counts as within)."""
    estimate = estimate_token_count(
        text, default_chars_per_token=default_chars_per_token, language_configs=language_configs
    )
    return estimate <= token_limit


def _utf16_slice(segment: str, start: int, end: int) -> str:
    if segment.isascii():
        return segment[start:end]
    units = segment.encode("utf-16-le", "surrogatepass")
    # A cut may split a surrogate pair, as in JavaScript; the half stays a lone surrogate.
    return units[2 * start : 2 * end].decode("utf-16-le", "surrogatepass")


def slice_by_tokens(
    text: str | None,
    start: float = 0,
    end: float | None = None,
    *,
    default_chars_per_token: float = DEFAULT_CHARS_PER_TOKEN,
    language_configs: Sequence[LanguageConfig] | None = None,
) -> str:
    """Cut ``text`` at estimated token positions, like ``Array.prototype.slice`` (tokenx 1.3.0
    ``sliceByTokens``): negative indices count from the end, a piece that straddles a boundary is
    cut in proportion to its UTF-16 length, and a slice never ends with the whitespace at ``end``.
    """
    if not text:
        return ""
    price = _Pricer(default_chars_per_token, language_configs)
    total = 0
    if start < 0 or (end is not None and end < 0):
        total = estimate_token_count(
            text, default_chars_per_token=default_chars_per_token, language_configs=language_configs
        )
    window_start = max(0, total + start) if start < 0 else max(0, start)
    if end is None:
        window_end: float = math.inf
    else:
        window_end = max(0, total + end) if end < 0 else end
    if window_start >= window_end:
        return ""

    pieces: list[str] = []
    position = 0
    for segment in _SEGMENT_RE.finditer(text):
        if position >= window_end:
            break
        piece = segment.group()
        cost = price(piece)
        if cost == 0:
            if window_start <= position < window_end:
                pieces.append(piece)
            continue
        segment_end = position + cost
        if position < window_end and segment_end > window_start:
            covered_from = max(0, window_start - position)
            covered_to = min(cost, window_end - position)
            if covered_from == 0 and covered_to == cost:
                pieces.append(piece)
            else:
                length = utf16_length(piece)
                cut_from = math.floor(covered_from / cost * length)
                cut_to = math.ceil(covered_to / cost * length)
                pieces.append(_utf16_slice(piece, cut_from, cut_to))
        position = segment_end
    return "".join(pieces)


def split_by_tokens(
    text: str | None,
    tokens_per_chunk: float,
    *,
    overlap: float = 0,
    default_chars_per_token: float = DEFAULT_CHARS_PER_TOKEN,
    language_configs: Sequence[LanguageConfig] | None = None,
) -> list[str]:
    """Split ``text`` into chunks of about ``tokens_per_chunk`` estimated tokens (tokenx 1.3.0
    ``splitByTokens``), never splitting a word.

    1.3.0 quirks kept on purpose: the last chunk can be only the carried overlap, and ``overlap``
    is not clamped (``overlap >= tokens_per_chunk`` emits a chunk after nearly every piece).
    """
    if not text or tokens_per_chunk <= 0:
        return []
    price = _Pricer(default_chars_per_token, language_configs)
    chunks: list[str] = []
    current: list[tuple[str, int]] = []
    running = 0
    for piece in _SEGMENT_RE.findall(text):
        cost = price(piece)
        current.append((piece, cost))
        running += cost
        if running >= tokens_per_chunk:
            chunks.append("".join(p for p, _ in current))
            carried: list[tuple[str, int]] = []
            carried_cost = 0
            for item in reversed(current):
                if carried_cost >= overlap:
                    break
                carried.append(item)
                carried_cost += item[1]
            carried.reverse()
            current = carried
            running = carried_cost
    if current:
        chunks.append("".join(p for p, _ in current))
    return chunks


@lru_cache(maxsize=262_144)
def estimate_line_cached(line: str) -> int:
    """:func:`estimate_token_count` of one line (no newline), with default options, memoised."""
    return estimate_token_count(line)


def estimate_token_count_cached(text: str | None) -> int:
    """:func:`estimate_token_count` with default options, memoised line by line.

    Exact: a newline is whitespace, so no segment spans two lines and the sum over lines equals
    the estimate of the whole text. Observation logs and prompts repeat most of their lines from
    one call to the next, so this turns repeated O(log size) estimates into dictionary look-ups.
    """
    if not text:
        return 0
    return sum(map(estimate_line_cached, text.split("\n")))

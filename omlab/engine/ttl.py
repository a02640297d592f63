"""``activateAfterIdle``: parsing idle durations and the provider prompt-cache lifetimes behind "auto".

Activating buffered observations rewrites the system messages, which breaks the actor's prompt
cache. After a long enough idle period the provider has dropped that cache anyway, so activating
early costs nothing; ``activateAfterIdle`` says how long that period is.
"""

from __future__ import annotations

import math
import re
from typing import Literal

MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS

_UNIT_MS = {
    **dict.fromkeys(("ms", "msec", "msecs", "millisecond", "milliseconds"), 1),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1000),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), MINUTE_MS),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), HOUR_MS),
    **dict.fromkeys(("d", "day", "days"), 24 * HOUR_MS),
}
_PART = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)", re.IGNORECASE)
_WHOLE = re.compile(r"(?:\s*\d+(?:\.\d+)?\s*[a-z]+)+\s*", re.IGNORECASE)

ActivationTTL = int | Literal["auto"] | None


def parse_activate_after_idle(value: object, option: str = "activateAfterIdle") -> ActivationTTL:
    """Parse an ``activateAfterIdle`` setting into milliseconds, ``"auto"`` or ``None`` (off).

    Accepted:
      - ``None`` or ``False`` → ``None`` (disabled);
      - a non-negative number of milliseconds (``300_000``; floats are rounded);
      - ``"auto"`` (any case) → ``"auto"``, resolved later by :func:`provider_cache_ttl_ms`;
      - a duration string: a number with a unit, ``"500ms"``, ``"30s"``, ``"5m"``, ``"1.5h"``,
        ``"1hr"``, ``"2d"``; units ms/msec/millisecond(s), s/sec/second(s), m/min/minute(s),
        h/hr/hour(s), d/day(s), any case. Compound strings such as ``"1h30m"`` or ``"1h 30m"``
        add up. Days and compounds are omlab extensions; the reference accepts one ms–h term.
    A bare number inside a string (``"300"``) is rejected: its unit would be a guess.
    Anything else raises :class:`~omlab.engine.config.ConfigError` naming ``option``.
    """
    if value is None or value is False:
        return None
    if isinstance(value, bool):
        _fail(option, f'got {value!r}; use false to disable, or a duration such as "5m"')
    if isinstance(value, int | float):
        if not math.isfinite(value) or value < 0:
            _fail(option, f"must be a non-negative number of milliseconds, got {value!r}")
        return math.floor(value + 0.5)
    if isinstance(value, str):
        text = value.strip()
        if text.lower() == "auto":
            return "auto"
        if not text or not _WHOLE.fullmatch(text):
            _fail(
                option,
                f'{value!r} is not a duration; write e.g. 300000 (ms), "30s", "5m", "1hr", "1h30m", "auto" or false',
            )
        total = 0.0
        for amount, unit in _PART.findall(text):
            factor = _UNIT_MS.get(unit.lower())
            if factor is None:
                _fail(option, f"unknown unit {unit!r} in {value!r}; use ms, s, m, h or d")
            total += float(amount) * factor
        return math.floor(total + 0.5)
    _fail(option, f'expected milliseconds, a duration string, "auto" or false, got {type(value).__name__}')


def _fail(option: str, message: str) -> None:
    from omlab.engine.config import ConfigError  # late: config imports this module

    raise ConfigError(option, message)


#: Prompt-cache lifetimes used by ``activateAfterIdle: "auto"`` (milliseconds).
PROVIDER_CACHE_TTL_MS: dict[str, int] = {
    # Anthropic: the default ("ephemeral") cache lives 5 minutes, refreshed on each hit;
    # a 1-hour TTL exists but is opt-in per request.
    "anthropic": 5 * MINUTE_MS,
    # OpenAI in-memory retention: caches are usually cleared after 5-10 minutes of inactivity
    # (always within an hour). Models that keep prompts for up to 24 h get 1 h below.
    "openai": 5 * MINUTE_MS,
    # Google Gemini: implicit caching publishes no lifetime; explicit caches default to 1 hour.
    # The reference uses 24 h; omlab takes the documented explicit default.
    "google": HOUR_MS,
    "gemini": HOUR_MS,
    "vertex": HOUR_MS,
    # DeepSeek keeps its disk cache for hours; Groq documents a 2-hour expiry (reference values).
    "deepseek": HOUR_MS,
    "groq": 2 * HOUR_MS,
    "xai": 5 * MINUTE_MS,
    "openrouter": 5 * MINUTE_MS,
    # omlab's offline models have no cache; treat them like the shortest real one.
    "omlab": 5 * MINUTE_MS,
}
#: Unknown providers get the shortest documented lifetime.
DEFAULT_CACHE_TTL_MS = 5 * MINUTE_MS
#: OpenAI models whose default retention is extended (not gpt-4*, gpt-5, gpt-5.1 … gpt-5.4).
_OPENAI_SHORT_TTL = re.compile(r"^(gpt-4|gpt-5(?:$|-|\.[1-4](?:$|-))|o\d|chatgpt)")
_NAME_HINTS = (
    ("claude", "anthropic"),
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("gemini", "google"),
    ("deepseek", "deepseek"),
    ("grok", "xai"),
)


def provider_cache_ttl_ms(model: str | None) -> int:
    """The prompt-cache lifetime of ``model``'s provider, for ``activateAfterIdle: "auto"``.

    ``model`` is a ``provider/model`` string (``"anthropic/claude-sonnet-4-5"``); a bare model
    name is matched by prefix (``claude`` → anthropic, ``gpt``/``o3`` → openai, ``gemini`` →
    google). Values, from the providers' public prompt-caching docs:

    ==========================  ===========
    anthropic, xai, openrouter  5 minutes
    openai                      5 minutes (gpt-4*, gpt-5 … gpt-5.4, o-series); 1 hour for
                                newer models with extended retention
    google / gemini / vertex    1 hour (explicit cache default; implicit caching undocumented)
    deepseek                    1 hour
    groq                        2 hours
    unknown or None             5 minutes
    ==========================  ===========

    Where the docs give a range or nothing, the table takes the short end: at worst an activation
    lands while the cache is still warm and costs one cache miss, which is cheaper than carrying
    a large unactivated context for an hour after the cache is gone.
    """
    if not model:
        return DEFAULT_CACHE_TTL_MS
    text = model.strip().lower()
    provider, _, name = text.partition("/") if "/" in text else ("", "", text)
    provider = provider.split(".")[0]
    if not provider:
        provider = next((p for hint, p in _NAME_HINTS if name.startswith(hint)), "")
    if provider == "openai":
        return 5 * MINUTE_MS if not name or _OPENAI_SHORT_TTL.match(name) else HOUR_MS
    return PROVIDER_CACHE_TTL_MS.get(provider, DEFAULT_CACHE_TTL_MS)


def activation_ttl_ms(setting: ActivationTTL, model: str | None) -> int | None:
    """The idle time in ms after which to activate, given a parsed setting and the actor model."""
    if setting is None:
        return None
    if setting == "auto":
        return provider_cache_ttl_ms(model)
    return int(setting)

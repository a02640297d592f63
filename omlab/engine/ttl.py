"""``activateAfterIdle``: parsing idle durations and the provider prompt-cache lifetimes behind "auto".

Activating buffered observations rewrites the system messages, which breaks the actor's prompt
cache. After a long enough idle period the provider has dropped that cache anyway, so activating
early costs nothing; ``activateAfterIdle`` says how long that period is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Literal

from omlab.engine.errors import ConfigError

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

#: milliseconds, ``"auto"``, ``None`` (off), or a per-provider map of those (see below)
ActivationTTL = int | Literal["auto"] | Mapping[str, "int | Literal['auto'] | None"] | None
#: the key of a per-provider map that applies to providers it does not list
DEFAULT_PROVIDER_KEY = "default"


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
      - a per-provider map ``{"anthropic": "5m", "openai": "auto", "default": false}``: each
        value is one of the above (not a map); the actor model's provider picks the entry,
        ``"default"`` covers providers the map does not list, and without it they get no idle
        activation. Provider keys are lower-cased.
    A bare number inside a string (``"300"``) is rejected: its unit would be a guess.
    Anything else raises :class:`~omlab.engine.errors.ConfigError` naming ``option``.
    """
    if isinstance(value, Mapping):
        parsed: dict[str, int | Literal["auto"] | None] = {}
        for provider, entry in value.items():
            if not isinstance(provider, str) or not provider.strip():
                _fail(option, f"a per-provider map needs provider names as keys, got {provider!r}")
            if isinstance(entry, Mapping):
                _fail(option, f'the entry for {provider!r} is a map; give a duration, "auto" or false')
            parsed[provider.strip().lower()] = parse_activate_after_idle(entry, f"{option}.{provider}")  # type: ignore[assignment]
        return parsed
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


def idle_option(value: ActivationTTL) -> Any:
    """A parsed setting as the ``activateAfterIdle`` option that parses to it again (``False`` = off)."""
    return False if value is None else (dict(value) if isinstance(value, Mapping) else value)


def _fail(option: str, message: str) -> None:
    raise ConfigError(option, message)


#: Prompt-cache lifetimes used by ``activateAfterIdle: "auto"`` (milliseconds).
PROVIDER_CACHE_TTL_MS: dict[str, int] = {
    # Anthropic: the default ("ephemeral") cache lives 5 minutes, refreshed on each hit;
    # a 1-hour TTL exists but is opt-in per request.
    "anthropic": 5 * MINUTE_MS,
    # OpenAI in-memory retention: caches are usually cleared after 5-10 minutes of inactivity
    # (always within an hour). Models that keep prompts for up to 24 h get 1 h below.
    "openai": 5 * MINUTE_MS,
    # Google Gemini: the reference's value (24 h).
    "google": 24 * HOUR_MS,
    "gemini": 24 * HOUR_MS,
    "vertex": 24 * HOUR_MS,
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


def model_provider(model: str | None) -> str:
    """The provider of a ``provider/model`` string (``""`` when unknown); a bare model name is
    matched by prefix (``claude`` → anthropic, ``gpt``/``o3`` → openai, ``gemini`` → google)."""
    if not model:
        return ""
    text = model.strip().lower()
    provider, _, name = text.partition("/") if "/" in text else ("", "", text)
    provider = provider.split(".")[0]
    if not provider:
        provider = next((p for hint, p in _NAME_HINTS if name.startswith(hint)), "")
    return provider


def openai_prompt_cache_retention(provider_options: Mapping[str, Any] | None) -> str | None:
    """``providerOptions.openai.promptCacheRetention``, lower-cased, when it is a string."""
    openai = (provider_options or {}).get("openai")
    value = openai.get("promptCacheRetention") if isinstance(openai, Mapping) else None
    if value is None and isinstance(openai, Mapping):
        value = openai.get("prompt_cache_retention")
    return value.lower() if isinstance(value, str) else None


def provider_cache_ttl_ms(model: str | None, provider_options: Mapping[str, Any] | None = None) -> int:
    """The prompt-cache lifetime of ``model``'s provider, for ``activateAfterIdle: "auto"``.

    ``model`` is a ``provider/model`` string (``"anthropic/claude-sonnet-4-5"``); a bare model
    name is matched by prefix (``claude`` → anthropic, ``gpt``/``o3`` → openai, ``gemini`` →
    google). Values, from the providers' public prompt-caching docs:

    ==========================  ===========
    anthropic, xai, openrouter  5 minutes
    openai                      5 minutes (gpt-4*, gpt-5 … gpt-5.4, o-series); 1 hour for
                                newer models with extended retention
    openai + providerOptions    1 hour with ``openai.promptCacheRetention: "24h"``, 5 minutes
                                with ``"in_memory"`` (the actor call's provider options)
    google / gemini / vertex    24 hours (the reference's value)
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
    provider = model_provider(model)
    if provider == "openai":
        retention = openai_prompt_cache_retention(provider_options)
        if retention == "24h":
            return HOUR_MS
        if retention == "in_memory":
            return 5 * MINUTE_MS
        text = model.strip().lower()
        name = text.partition("/")[2] if "/" in text else text
        return 5 * MINUTE_MS if not name or _OPENAI_SHORT_TTL.match(name) else HOUR_MS
    return PROVIDER_CACHE_TTL_MS.get(provider, DEFAULT_CACHE_TTL_MS)


def activation_ttl_ms(
    setting: ActivationTTL, model: str | None, provider_options: Mapping[str, Any] | None = None
) -> int | None:
    """The idle time in ms after which to activate, given a parsed setting, the actor model and
    the actor call's provider options (``None`` = no idle activation)."""
    if isinstance(setting, Mapping):
        provider = model_provider(model)
        setting = setting[provider] if provider in setting else setting.get(DEFAULT_PROVIDER_KEY)
    if setting is None:
        return None
    if setting == "auto":
        return provider_cache_ttl_ms(model, provider_options)
    return int(setting)


def ttl_expired_ms(idle_ms: float, ttl_ms: int, *, reference: bool = False) -> int:
    """``ttlExpiredMs`` of an idle (``ttl``) activation marker.

    The seed documents it as how long ``activateAfterIdle`` had been exceeded (idle time minus
    the TTL: 1,000 after 5 min 1 s with a 5-minute TTL); the reference (1.31.0) reports the whole
    idle time (301,000), which ``compat="reference"`` (``reference=True``) reproduces.
    """
    return int(idle_ms) if reference else int(idle_ms - ttl_ms)

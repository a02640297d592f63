"""Cost of a model call in US dollars, from litellm's bundled price map or explicit overrides.

The price map is litellm's local copy (``LITELLM_LOCAL_MODEL_COST_MAP=True`` is set by
:func:`omlab.llm.env.prepare_environment` before litellm is imported), so pricing never reaches the
network and is reproducible for a pinned litellm version. litellm is imported on first use only.

Overrides map a model string to a :class:`Price` or to another model string ("priced as"), which is
how offline runs are costed as if a real model had been used::

    price_call("omlab/observer", 1000, 200, overrides={"omlab/observer": "google/gemini-2.5-flash"})
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeAlias

from omlab.llm.spec import is_offline_model, litellm_model_name

_TIER_KEY = re.compile(r"^input_cost_per_token_above_(\d+)k_tokens$")


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def __post_init__(self) -> None:
        for name in ("input_per_mtok", "output_per_mtok"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ValueError(f"Price.{name} must be a finite number >= 0, got {value!r}")

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000


PriceOverride: TypeAlias = "Price | str | Mapping[str, float]"
"""A :class:`Price`, a model string to be priced as, or ``{"input_per_mtok": .., "output_per_mtok": ..}``."""


def price_call(
    model: str,
    input_tokens: int,
    output_tokens: int,
    *,
    overrides: Mapping[str, PriceOverride] | None = None,
) -> float | None:
    """Dollar cost of one call; 0.0 for offline models (unless priced as another); None if unknown."""
    for name, value in (("input_tokens", input_tokens), ("output_tokens", output_tokens)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"price_call {name} must be a non-negative integer, got {value!r}")
    seen: list[str] = []
    current = model
    while True:
        if current in seen:
            chain = " -> ".join([*seen, current])
            raise ValueError(f"price overrides form a cycle: {chain}")
        seen.append(current)
        override = (overrides or {}).get(current)
        if override is None:
            break
        if isinstance(override, str):
            current = override
            continue
        return as_price(override, current).cost(input_tokens, output_tokens)
    if is_offline_model(current):
        return 0.0
    entry = _price_entry(current)
    if entry is None:
        return None
    return _cost_from_entry(entry, input_tokens, output_tokens)


def as_price(value: Price | Mapping[str, float], model: str = "?") -> Price:
    """A :class:`Price` from a Price or a ``{"input_per_mtok", "output_per_mtok"}`` mapping."""
    if isinstance(value, Price):
        return value
    if isinstance(value, Mapping):
        unknown = set(value) - {"input_per_mtok", "output_per_mtok"}
        if unknown or len(value) != 2:
            raise ValueError(
                f"price override for {model!r} needs exactly input_per_mtok and output_per_mtok, got {sorted(value)}"
            )
        return Price(value["input_per_mtok"], value["output_per_mtok"])
    raise ValueError(f"price override for {model!r} must be a Price, a model string or a mapping, got {value!r}")


def known_price(model: str) -> Price | None:
    """The base (untiered) price of ``model`` in litellm's map, per million tokens."""
    if is_offline_model(model):
        return Price(0.0, 0.0)
    entry = _price_entry(model)
    if entry is None:
        return None
    return Price(entry["input_cost_per_token"] * 1_000_000, entry["output_cost_per_token"] * 1_000_000)


def _cost_from_entry(entry: Mapping[str, Any], input_tokens: int, output_tokens: int) -> float:
    input_rate = entry["input_cost_per_token"]
    output_rate = entry["output_cost_per_token"]
    # Long-context tiers (e.g. Gemini above 200k) price the whole call by the prompt size.
    tier = _tier_for(entry, input_tokens)
    if tier is not None:
        input_rate = entry.get(f"input_cost_per_token_above_{tier}k_tokens", input_rate)
        output_rate = entry.get(f"output_cost_per_token_above_{tier}k_tokens", output_rate)
    return input_tokens * input_rate + output_tokens * output_rate


def _tier_for(entry: Mapping[str, Any], input_tokens: int) -> int | None:
    tiers = [int(m.group(1)) for key in entry if (m := _TIER_KEY.match(key))]
    passed = [t for t in tiers if input_tokens > t * 1000]
    return max(passed) if passed else None


def _price_entry(model: str) -> Mapping[str, Any] | None:
    cost_map = _litellm_cost_map()
    litellm_name = litellm_model_name(model)
    litellm_provider, bare_name = litellm_name.split("/", 1)
    entry = cost_map.get(litellm_name)
    if entry is None:
        # First-party models are keyed by their bare name ("gpt-4o-mini"); accept that entry
        # only when it belongs to the same provider.
        candidate = cost_map.get(bare_name)
        if isinstance(candidate, Mapping) and candidate.get("litellm_provider") == litellm_provider:
            entry = candidate
    if not isinstance(entry, Mapping):
        return None
    if not isinstance(entry.get("input_cost_per_token"), int | float):
        return None
    if not isinstance(entry.get("output_cost_per_token"), int | float):
        return None
    return entry


@cache
def _litellm_cost_map() -> Mapping[str, Any]:
    from omlab.llm.env import prepare_environment

    prepare_environment()
    import litellm

    return litellm.model_cost


__all__ = ["Price", "PriceOverride", "as_price", "known_price", "price_call"]

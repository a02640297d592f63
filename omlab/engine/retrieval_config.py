"""The ``retrieval`` option: durable pointers from observation groups to raw messages, plus a
recall tool (:class:`RetrievalConfig`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from omlab.engine.errors import ConfigError
from omlab.engine.option_checks import check_bool, normalize, option_keys, optional_str

Scope = Literal["thread", "resource"]

_RETRIEVAL_KEYS = option_keys("vector", "scope", "instructions")


@dataclass(frozen=True, slots=True)
class RetrievalConfig:
    """``retrieval``: durable pointers from observation groups to raw messages, plus a recall tool."""

    vector: bool = False
    scope: Scope = "resource"
    instructions: str | None = None


def parse_retrieval(value: Any) -> RetrievalConfig | None:
    """``true``, ``false`` or ``{vector, scope, instructions}`` → the resolved option (``None`` = off)."""
    if value is False:
        return None
    if value is True:
        return RetrievalConfig()
    if not isinstance(value, Mapping):
        raise ConfigError("retrieval", f"expected true, false or {{vector, scope, instructions}}, got {value!r}")
    given = normalize(value, _RETRIEVAL_KEYS, "retrieval.")
    scope = given.get("scope", "resource")
    if scope not in ("thread", "resource"):
        raise ConfigError("retrieval.scope", f"must be 'thread' or 'resource', got {scope!r}")
    return RetrievalConfig(
        vector=check_bool(given.get("vector", False), "retrieval.vector"),
        scope=scope,
        instructions=optional_str(given.get("instructions"), "retrieval.instructions"),
    )


def retrieval_dict(retrieval: RetrievalConfig) -> dict[str, Any]:
    """The option's fields by name (as the snapshot and the rebuilding options write them)."""
    return {"vector": retrieval.vector, "scope": retrieval.scope, "instructions": retrieval.instructions}

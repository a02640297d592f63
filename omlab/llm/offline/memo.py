"""Per-line memo caches of the offline models.

Observation logs repeat almost all their lines from one call to the next (a reflection reads the
previous reflection back), so the offline models memoise their pure per-line functions. The
caches are bounded, and :func:`clear_line_memos` empties them all, so a benchmark can measure a
cold start.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

LINE_MEMO_SIZE = 65_536
"""Entries kept per memoised function (a 40k-token log has about 2,000 lines)."""

_F = TypeVar("_F", bound=Callable[..., Any])
_MEMOS: list[Any] = []


def line_memo(function: _F) -> _F:
    """Memoise a pure function of one line (and hashable options)."""
    cached = lru_cache(maxsize=LINE_MEMO_SIZE)(function)
    _MEMOS.append(cached)
    return cached  # type: ignore[return-value]


def clear_line_memos() -> None:
    """Empty every offline-model line memo."""
    for cached in _MEMOS:
        cached.cache_clear()

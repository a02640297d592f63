"""Run ids: time-sortable, file-name safe, unique enough for parallel sweeps.

Format ``YYYYMMDDTHHMMSS-<6 hex>`` (UTC start time plus 24 random bits), e.g.
``20240501T093015-3fa9c2``. Sorting run ids as strings sorts runs by start time. Callers may
choose their own id instead; it must be usable as a file name (letters, digits, ``.``, ``_``,
``-``; not starting with ``.``).
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime

RUN_ID_PATTERN = re.compile(r"^\d{8}T\d{6}-[0-9a-f]{6}$")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$")


def new_run_id(now: datetime | None = None, suffix: str | None = None) -> str:
    """A fresh run id for a run starting at ``now`` (default: the current UTC time).

    Args:
        now: Timezone-aware start time; converted to UTC.
        suffix: Six lowercase hex digits (default: random). Given only by tests.

    Raises:
        ValueError: ``now`` is naive or ``suffix`` is not six lowercase hex digits.
    """
    moment = datetime.now(UTC) if now is None else now
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"new_run_id needs a timezone-aware time, got naive {moment.isoformat()}")
    tail = secrets.token_hex(3) if suffix is None else suffix
    if not re.fullmatch(r"[0-9a-f]{6}", tail):
        raise ValueError(f"run id suffix must be 6 lowercase hex digits, got {tail!r}")
    return f"{moment.astimezone(UTC):%Y%m%dT%H%M%S}-{tail}"


def check_run_id(run_id: str) -> str:
    """Return ``run_id`` if it can name a run file, else raise ``ValueError`` saying why."""
    if not isinstance(run_id, str) or not _SAFE_NAME.fullmatch(run_id):
        raise ValueError(
            f"run_id {run_id!r} cannot name a run file: use letters, digits, '.', '_' and '-' "
            f"(1-200 characters, not starting with '.')"
        )
    return run_id


def run_id_time(run_id: str) -> datetime | None:
    """The UTC start time encoded in a generated run id, or None for a caller-chosen id."""
    if not RUN_ID_PATTERN.fullmatch(run_id):
        return None
    return datetime.strptime(run_id[:15], "%Y%m%dT%H%M%S").replace(tzinfo=UTC)

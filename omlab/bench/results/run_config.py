"""What a ``runs`` row's ``config_json`` says about how the run was made."""

from __future__ import annotations

import json


def sweep_id_of(config_json: object) -> str | None:
    """The sweep a run belongs to, from its ``runs.config_json`` (None for a single run)."""
    if not isinstance(config_json, str):
        return None
    try:
        value = json.loads(config_json).get("sweep_id")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


__all__ = ["sweep_id_of"]

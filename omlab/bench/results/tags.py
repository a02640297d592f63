"""Run tags: ``<results_dir>/tags.json`` (``{run_id: [tag, ...]}``) beside the run files, which stay
as the harness wrote them."""

from __future__ import annotations

import json
from pathlib import Path

TAGS_FILE = "tags.json"


def read_tags(results_dir: str | Path) -> dict[str, list[str]]:
    """``{run_id: tags}`` from the results directory's tags file (empty when there is none).

    Raises:
        ValueError: A tags file that is not a JSON object of lists (names the file).
    """
    path = Path(results_dir) / TAGS_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON ({error})") from error
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise ValueError(f"{path}: expected an object of run id -> list of tags")
    return {str(k): [str(t) for t in v] for k, v in data.items()}


__all__ = ["TAGS_FILE", "read_tags"]

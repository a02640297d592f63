"""Guessing which loader a dataset file is for, from its first bytes (for a hint when a suite's
``[dataset] kind`` does not match the file).

Only the opening of the file is read, so a LongMemEval file of hundreds of megabytes costs nothing.
The guess goes by the keys each format's records start with: LoCoMo's ``sample_id`` and
``conversation``, LongMemEval's ``question_id`` and ``haystack_sessions``, and, for omlab's JSONL,
a first line that is a whole JSON object with ``sessions``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

KIND_LABELS: dict[str, str] = {
    "locomo": "a LoCoMo file",
    "longmemeval": "a LongMemEval file",
    "jsonl": "an omlab JSONL file",
}
_HEAD_BYTES = 1 << 16
_KEY = r'"{}"\s*:'


def guess_kind(path: str | Path) -> str | None:
    """``locomo``, ``longmemeval`` or ``jsonl`` when the file's opening looks like one, else None."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    text = head.lstrip()
    if text.startswith("["):
        if _has(text, "sample_id") and _has(text, "conversation"):
            return "locomo"
        if _has(text, "question_id") and _has(text, "haystack_sessions"):
            return "longmemeval"
        return None
    if text.startswith("{"):
        first_line = text.split("\n", 1)[0]
        try:
            record = json.loads(first_line)
        except json.JSONDecodeError:
            record = None
        if isinstance(record, dict):
            if "sessions" in record:
                return "jsonl"
            if "haystack_sessions" in record:
                return "longmemeval"  # LongMemEval also comes as JSON lines
            if "sample_id" in record and "conversation" in record:
                return "locomo"
    return None


def _has(text: str, key: str) -> bool:
    return re.search(_KEY.format(re.escape(key)), text) is not None


__all__ = ["KIND_LABELS", "guess_kind"]

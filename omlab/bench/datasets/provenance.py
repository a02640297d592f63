"""Content hashes that pin what a run was fed (file sha256, digest of generated data)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from omlab.bench.datasets.errors import DatasetError
from omlab.bench.datasets.schema import Conversation

_CHUNK = 1 << 20


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks (datasets can be gigabytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def verify_sha256(actual: str, expected: str | None, *, file: str) -> None:
    """Raise DatasetError when ``expected`` is given and differs from ``actual`` (case-insensitive)."""
    if expected is not None and actual.lower() != expected.strip().lower():
        raise DatasetError(
            f"sha256 mismatch: expected {expected.strip().lower()}, file has {actual} "
            "(wrong revision, a different variant, or a corrupted download)",
            file=file,
        )


def conversations_digest(conversations: Iterable[Conversation]) -> str:
    """Hex sha256 over the canonical content of conversations (turns and questions).

    Used as the ``sha256`` of generated datasets, so two runs on "the same synthetic data" can
    prove it.
    """
    digest = hashlib.sha256()
    for conversation in conversations:
        digest.update(f"conversation\x1f{conversation.id}\x1e".encode())
        for session in conversation.sessions:
            digest.update(f"session\x1f{session.id}\x1f{session.date.isoformat()}\x1e".encode())
            for turn in session.turns:
                fields = (turn.id, turn.role, turn.created_at.isoformat(), turn.content)
                digest.update(("\x1f".join(fields) + "\x1e").encode())
                if turn.parts is not None:
                    digest.update(json.dumps(turn.parts, ensure_ascii=False, sort_keys=True).encode())
        for question in conversation.questions:
            record = [
                question.id,
                question.type,
                question.question,
                question.answer,
                question.evidence_ids,
                question.is_abstention,
            ]
            digest.update(json.dumps(record, ensure_ascii=False).encode())
    return digest.hexdigest()

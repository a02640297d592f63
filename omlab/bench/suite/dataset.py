"""Loading a suite's dataset: the conversations a run (and its preflight) works on.

Relative paths in a suite are relative to the suite file's folder (:func:`resolve_path`); the
``[dataset] limit`` and the run's ``--limit`` both cap the number of conversations
(:func:`effective_limit`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from omlab.bench.datasets import load_jsonl, load_locomo, load_longmemeval, load_mastra, load_synthetic
from omlab.bench.datasets.schema import Conversation, DatasetInfo
from omlab.bench.suite.suite_file import Suite
from omlab.bench.suite.tables import DatasetSpec


def load_conversations(
    spec: DatasetSpec, base_dir: str | Path = ".", limit: int | None = None, *, caption_style: str = "omlab"
) -> tuple[DatasetInfo, list[Conversation]]:
    """Load a suite's dataset: the first ``min(spec.limit, limit)`` conversations, each with at
    most ``spec.questions_per_conversation`` questions (LoCoMo image captions in ``caption_style``)."""
    pace = {} if spec.turn_pace_s is None else {"turn_pace": spec.turn_pace_s}
    sha = {} if spec.expected_sha256 is None else {"expected_sha256": spec.expected_sha256}
    if spec.kind == "synthetic":
        extra = {k: v for k, v in (("session_tokens", spec.session_tokens), ("mix", spec.mix)) if v is not None}
        count = effective_limit(spec, limit)
        seeds = list(spec.seeds)[:count] if count else list(spec.seeds)
        info, conversations = load_synthetic(seeds, spec.target_tokens, n_questions=spec.n_questions, **pace, **extra)
    elif spec.kind == "longmemeval":
        path = resolve_path(spec.path, base_dir) if spec.path else None
        info, conversations = load_longmemeval(path, spec.subset, revision=spec.revision, **sha, **pace)
    elif spec.kind == "locomo":
        source = spec.path if spec.path.startswith(("http://", "https://")) else resolve_path(spec.path, base_dir)
        info, conversations = load_locomo(source, caption_style=caption_style, **sha, **pace)
    elif spec.kind == "mastra":
        info, conversations = load_mastra(**spec.mastra_selection(base_dir))
    else:
        info, conversations = load_jsonl(resolve_path(spec.path, base_dir), **sha, **pace)
    count = effective_limit(spec, limit)
    if count is not None:
        conversations = conversations[:count]
    if spec.questions_per_conversation is not None:
        conversations = [
            dataclasses.replace(c, questions=c.questions[: spec.questions_per_conversation]) for c in conversations
        ]
    return info, conversations


def caption_style(suite: Suite) -> str:
    """How LoCoMo image turns read: as the official transcript with the official protocol."""
    return "official" if suite.scoring.protocol == "official" else "omlab"


def effective_limit(spec: DatasetSpec, limit: int | None) -> int | None:
    """How many conversations a run takes: the smaller of ``[dataset] limit`` and ``limit``."""
    limits = [value for value in (spec.limit, limit) if value is not None]
    return min(limits) if limits else None


def resolve_path(path: str, base_dir: str | Path) -> Path:
    """``path`` as the suite means it: relative paths are relative to the suite file's folder."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else Path(base_dir) / candidate


__all__ = ["caption_style", "effective_limit", "load_conversations", "resolve_path"]

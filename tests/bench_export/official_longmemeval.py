"""LongMemEval's official QA metric computation, written from its documented behaviour
(benchmarks.md §1.5), for the export round trip. Not the official code.

``evaluate_qa.py`` reads the hypothesis JSONL, asks its judge one question per line and labels the
line ``'yes' in reply.lower()``; ``print_qa_metrics.py`` then reads those labels with the reference
file and prints the per-type accuracies, the task-averaged accuracy (unweighted mean over the six
types), the overall accuracy (micro over every labelled line) and the abstention accuracy (lines
whose question id contains ``_abs``). Ids absent from the reference are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SIX_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "temporal-reasoning",
    "knowledge-update",
)


def read_hypotheses(path: Path) -> list[dict[str, Any]]:
    """The hypothesis file: JSONL, or a JSON list."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def evaluate_qa(
    hypotheses: list[dict[str, Any]], references: list[dict[str, Any]], ask_judge: Callable[[dict, str], str]
) -> list[dict[str, Any]]:
    """The eval log: each hypothesis with ``autoeval_label = {"label": 'yes' in reply.lower()}``."""
    by_id = {ref["question_id"]: ref for ref in references}
    log = []
    for entry in hypotheses:
        reference = by_id.get(entry["question_id"])
        if reference is None:
            continue  # the official script warns and skips
        reply = ask_judge(reference, entry["hypothesis"])
        log.append({**entry, "autoeval_label": {"model": "judge", "label": "yes" in reply.lower()}})
    return log


def print_qa_metrics(log: list[dict[str, Any]], references: list[dict[str, Any]]) -> dict[str, float]:
    """The printed numbers: per type, task-averaged, overall and abstention accuracy."""
    qtype = {ref["question_id"]: ref["question_type"] for ref in references}
    by_type: dict[str, list[int]] = {name: [] for name in SIX_TYPES}
    labels, abstention = [], []
    for entry in log:
        if entry["question_id"] not in qtype:
            continue
        label = 1 if entry["autoeval_label"]["label"] else 0
        by_type[qtype[entry["question_id"]]].append(label)
        labels.append(label)
        if "_abs" in entry["question_id"]:
            abstention.append(label)
    with np.errstate(all="ignore"):
        per_type = {name: float(np.mean(values)) if values else float("nan") for name, values in by_type.items()}
        return {
            **{f"type:{name}": value for name, value in per_type.items()},
            "task_averaged": float(np.mean(list(per_type.values()))),
            "overall": float(np.mean(labels)),
            "abstention": float(np.mean(abstention)) if abstention else float("nan"),
        }

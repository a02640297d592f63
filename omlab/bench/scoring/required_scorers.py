"""Which scorers a question needs before it counts as judged.

LongMemEval-style datasets (longmemeval, synthetic, jsonl) are scored by the judge alone. LoCoMo
gets the official ``f1`` for every category and the judge (J) for categories 1-4
(:data:`J_CATEGORIES`); category 5 (adversarial) has F1 only.
"""

from __future__ import annotations

from omlab.bench.datasets.schema import Question

J_CATEGORIES: tuple[int, ...] = (1, 2, 3, 4)
"""The LoCoMo categories the judge scores."""


def required_scorers(question: Question, dataset_kind: str) -> frozenset[str]:
    """The ``scores.scorer`` rows a question needs before its judge phase is done: ``judge`` (and
    ``f1`` for LoCoMo, whose category 5 has F1 only)."""
    if dataset_kind != "locomo":
        return frozenset({"judge"})
    needed = {"f1"} if question.category is not None else set()
    if question.category in J_CATEGORIES:
        needed.add("judge")
    return frozenset(needed)


__all__ = ["J_CATEGORIES", "required_scorers"]

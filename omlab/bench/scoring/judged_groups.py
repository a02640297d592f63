"""The question types an accuracy is reported for, whether or not any of their questions got a verdict.

``docs/results-queries.md`` groups the judged questions by type, so a type whose questions all lack
a verdict (the judge failed on them) is still a row: value missing, n 0 and its missing count. The
aggregates only see questions with a verdict and would drop that type; :func:`with_every_group`
puts it back, in the order the report prints types (LongMemEval's, then LoCoMo's category order,
then other types alphabetically; abstention last).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from omlab.bench.datasets.locomo import CATEGORY_NAMES
from omlab.bench.datasets.schema import LONGMEMEVAL_TYPES
from omlab.bench.scoring.aggregate import LOCOMO_CATEGORY_ORDER

ABSTENTION = "abstention"
_ORDER = (*LONGMEMEVAL_TYPES, *(CATEGORY_NAMES[c] for c in LOCOMO_CATEGORY_ORDER))


def judged_groups(questions: pd.DataFrame, judged: pd.Series, *, locomo: bool) -> list[str]:
    """The accuracy groups of the judged questions: their types in report order, then
    ``abstention`` when one of them is an abstention question (never on LoCoMo, whose abstention
    category is not judged)."""
    chosen = questions[judged]
    types = set(chosen["question_type"].dropna().astype(str))
    groups = [t for t in _ORDER if t in types] + sorted(types - set(_ORDER))
    if not locomo and chosen["is_abstention"].fillna(False).astype(bool).any():
        groups.append(ABSTENTION)
    return groups


def with_every_group(
    rows: list[dict[str, Any]], groups: list[str], blank: Callable[[str], dict[str, Any]], name: str = "accuracy"
) -> list[dict[str, Any]]:
    """``rows`` with one ``name`` row per group of ``groups`` right after the ``name``/``all`` row:
    the computed row when there is one, else ``blank(group)``. Unchanged without an ``all`` row
    (the run was not judged)."""
    position = next((i for i, r in enumerate(rows) if r["name"] == name and r["group_key"] == "all"), None)
    if position is None:
        return rows
    computed = {r["group_key"]: r for r in rows if r["name"] == name and r["group_key"] != "all"}
    ordered = [computed.pop(group) if group in computed else blank(group) for group in groups]
    ordered += list(computed.values())  # a group outside the judged questions' types stays as computed
    rest = [r for r in rows if not (r["name"] == name and r["group_key"] != "all")]
    position = next(i for i, r in enumerate(rest) if r["name"] == name and r["group_key"] == "all")
    return [*rest[: position + 1], *ordered, *rest[position + 1 :]]


def blank_row(name: str) -> Callable[[str], dict[str, Any]]:
    """A ``name`` row of a group with no score: value missing, n 0."""

    def make(group: str) -> dict[str, Any]:
        return {"name": name, "group_key": group, "value": math.nan, "lo": None, "hi": None, "n": 0, "n_missing": None}

    return make


__all__ = ["ABSTENTION", "blank_row", "judged_groups", "with_every_group"]

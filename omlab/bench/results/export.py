"""Exporting a run's answers for LongMemEval's official evaluator.

``evaluate_qa.py`` reads a JSONL file with one ``{"question_id": ..., "hypothesis": ...}`` object
per line. :func:`export_hypotheses` writes exactly that (UTF-8, no other keys), one line per
answered question of the run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from omlab.bench.results.frames import Db, catalog_of
from omlab.bench.results.schema import ANSWER_FAILED


def hypothesis_lines(answers: pd.DataFrame, *, include_failed: bool = False) -> list[str]:
    """One JSON line per answer in ``answers`` (an ``answers_df``/``answers`` frame).

    Answers with status ``failed`` are left out unless ``include_failed``; then a missing
    hypothesis is written as ``""`` (the evaluator needs a string).
    """
    kept = answers if include_failed else answers[answers["status"].fillna("") != ANSWER_FAILED]
    lines = []
    for question_id, hypothesis in zip(kept["question_id"], kept["hypothesis"], strict=True):
        text = hypothesis if isinstance(hypothesis, str) else ""
        lines.append(json.dumps({"question_id": question_id, "hypothesis": text}, ensure_ascii=False))
    return lines


def export_hypotheses(db: Db, run_id: str, path: str | Path, *, include_failed: bool = False) -> int:
    """Write run ``run_id``'s answers to ``path`` as evaluator JSONL; returns the line count.

    Raises:
        ValueError: No run ``run_id`` under ``db``.
    """
    answers = catalog_of(db).read_table("answers", run_id)
    lines = hypothesis_lines(answers, include_failed=include_failed)
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)

"""Exporting a run's results in the official evaluators' formats and as flat tables.

* ``longmemeval``: the hypothesis JSONL that LongMemEval's ``evaluate_qa.py`` reads, one
  ``{"question_id": ..., "hypothesis": ...}`` object per line (UTF-8, no other keys), one line per
  answered question (:func:`export_hypotheses`).
* ``locomo``: a JSON list of ``{"sample_id": ..., "qa": [...]}`` objects, one per conversation, whose
  ``qa`` items carry ``question``, ``answer`` (omlab's gold: "Not mentioned in the conversation"
  for category 5, whose score does not use it), ``category`` and the answer under ``prediction``: the shape
  the official ``evaluation.py`` ``eval_question_answering(qas, eval_key="prediction")`` scores
  (:func:`locomo_predictions`).
* ``csv`` / ``parquet``: ``answers`` (joined with every scorer, one row per question), ``scores``
  (long form) and ``calls`` (every model call), one file each (:func:`export_tables`). Floats are
  written at full precision (CSV uses the shortest text that reads back to the same float).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from omlab.bench.results.frames import Db, answers_df, calls_df, catalog_of, scores_df
from omlab.bench.results.schema import ANSWER_FAILED

EXPORT_FORMATS: tuple[str, ...] = ("longmemeval", "locomo", "csv", "parquet")
LOCOMO_PREDICTION_KEY = "prediction"


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
    target = _target(path)
    target.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def locomo_predictions(answers: pd.DataFrame, *, include_failed: bool = False) -> list[dict[str, Any]]:
    """LoCoMo prediction records (see the module docstring) from an ``answers`` frame, grouped by
    conversation in first-seen order, questions in id order, each with its omlab ``question_id``.
    ``evidence`` is left empty (the official F1 does not use it). A failed answer is left out
    unless ``include_failed`` (then its prediction is ``""``)."""
    kept = answers if include_failed else answers[answers["status"].fillna("") != ANSWER_FAILED]
    samples: dict[str, list[dict[str, Any]]] = {}
    for row in kept.sort_values("question_id", kind="stable").itertuples(index=False):
        category = None if pd.isna(row.category) else int(row.category)
        item: dict[str, Any] = {"question": row.question, "answer": row.gold, "category": category}
        item["evidence"] = []
        item[LOCOMO_PREDICTION_KEY] = row.hypothesis if isinstance(row.hypothesis, str) else ""
        item["question_id"] = row.question_id
        samples.setdefault(row.conversation_id, []).append(item)
    return [{"sample_id": sample_id, "qa": qa} for sample_id, qa in samples.items()]


def export_locomo(db: Db, run_id: str, path: str | Path, *, include_failed: bool = False) -> int:
    """Write run ``run_id``'s answers as LoCoMo predictions JSON; returns the question count."""
    answers = catalog_of(db).read_table("answers", run_id)
    records = locomo_predictions(answers, include_failed=include_failed)
    target = _target(path)
    target.write_text(json.dumps(records, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return sum(len(record["qa"]) for record in records)


def export_tables(db: Db, run_id: str, folder: str | Path, fmt: str = "csv") -> list[Path]:
    """Write ``answers``, ``scores`` and ``calls`` of run ``run_id`` into ``folder`` as ``fmt``
    (``csv`` or ``parquet``); returns the files written."""
    if fmt not in ("csv", "parquet"):
        raise ValueError(f"table export format must be csv or parquet, got {fmt!r}")
    catalog = catalog_of(db)
    tables = {
        "answers": answers_df(catalog, run_id),
        "scores": scores_df(catalog, run_id),
        "calls": calls_df(catalog, run_id),
    }
    out = Path(folder).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in tables.items():
        flat = _flat(frame)
        path = out / f"{name}.{fmt}"
        if fmt == "csv":
            flat.to_csv(path, index=False)  # floats as repr: the shortest text that reads back exactly
        else:
            flat.to_parquet(path, index=False)
        written.append(path)
    return written


def export_run(db: Db, run_id: str, fmt: str, out: str | Path, *, include_failed: bool = False) -> list[Path]:
    """Export run ``run_id`` in ``fmt`` (one of :data:`EXPORT_FORMATS`) to ``out`` (a file for
    ``longmemeval``/``locomo``, a folder for the tables); returns the files written.

    Raises:
        ValueError: Unknown format or run.
    """
    if fmt == "longmemeval":
        export_hypotheses(db, run_id, out, include_failed=include_failed)
        return [Path(out)]
    if fmt == "locomo":
        export_locomo(db, run_id, out, include_failed=include_failed)
        return [Path(out)]
    if fmt in ("csv", "parquet"):
        return export_tables(db, run_id, out, fmt)
    raise ValueError(f"export format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}")


def default_export_path(results_dir: str | Path, run_id: str, fmt: str) -> Path:
    """``<results>/exports/<run_id>/`` plus ``hypotheses.jsonl`` or ``locomo_predictions.json``
    (the folder itself for the tables)."""
    folder = Path(results_dir) / "exports" / run_id
    return {"longmemeval": folder / "hypotheses.jsonl", "locomo": folder / "locomo_predictions.json"}.get(fmt, folder)


def _flat(frame: pd.DataFrame) -> pd.DataFrame:
    """JSON-like cells (dicts, lists) as JSON text, so every cell is a plain value."""
    flat = frame.copy()
    for column in flat.columns:
        if flat[column].dtype == object and flat[column].map(lambda v: isinstance(v, (dict, list))).any():
            flat[column] = flat[column].map(
                lambda v: json.dumps(v, ensure_ascii=False, default=str) if isinstance(v, (dict, list)) else v
            )
    return flat


def _target(path: str | Path) -> Path:
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


__all__ = [
    "EXPORT_FORMATS",
    "LOCOMO_PREDICTION_KEY",
    "default_export_path",
    "export_hypotheses",
    "export_locomo",
    "export_run",
    "export_tables",
    "hypothesis_lines",
    "locomo_predictions",
]

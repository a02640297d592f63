"""DataFrame getters over the results: what reports, plots and notebooks consume.

Every getter takes ``db``, a results directory or a :class:`ResultsCatalog`, and optional filters
(``None`` means "all"; a filter also accepts a list meaning "one of"). Running runs are included
with the rows flushed so far. Columns are those of ``docs/results-schema.md`` with fixed dtypes:
times ``datetime64[us, UTC]``; flags that are always set ``bool``, flags that may be missing
pandas ``boolean``; counts ``int64``/``Int64``; text ``str``. Plots take these frames and never
open a database.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from omlab.bench.results.catalog import ResultsCatalog

Db = str | Path | ResultsCatalog
RunIds = str | Iterable[str] | None
OneOrMany = str | Iterable[str] | None

SCORE_COLUMNS: dict[str, str] = {"judge_correct": "boolean", "f1": "float64", "retention": "float64"}
"""Score columns :func:`answers_df` always has, even before anything was scored."""


def catalog_of(db: Db) -> ResultsCatalog:
    """``db`` as a catalog (a path becomes ``ResultsCatalog(path)``)."""
    if isinstance(db, ResultsCatalog):
        return db
    if isinstance(db, (str, Path)):
        return ResultsCatalog(db)
    raise TypeError(f"db must be a results directory or a ResultsCatalog, got {type(db).__name__}")


def runs_df(db: Db) -> pd.DataFrame:
    """One row per run (header, provenance, status), oldest first."""
    return catalog_of(db).read_table("runs")


def conversations_df(
    db: Db, run_id: RunIds = None, conversation_id: OneOrMany = None, phase: OneOrMany = None
) -> pd.DataFrame:
    """Per-conversation phase checkpoints (``done``/``failed``)."""
    return catalog_of(db).read_table(
        "conversations", run_id, {"conversation_id": _many(conversation_id), "phase": _many(phase)}
    )


def steps_df(db: Db, run_id: RunIds = None, conversation_id: OneOrMany = None) -> pd.DataFrame:
    """Engine steps, in step order per conversation."""
    return catalog_of(db).read_table("steps", run_id, {"conversation_id": _many(conversation_id)})


def events_df(
    db: Db, run_id: RunIds = None, conversation_id: OneOrMany = None, types: OneOrMany = None
) -> pd.DataFrame:
    """``data-om-*`` parts and debug events, in ``seq`` order per conversation. ``payload`` is
    the JSON text of the whole part (``json.loads`` it for fields without a column)."""
    return catalog_of(db).read_table(
        "events", run_id, {"conversation_id": _many(conversation_id), "type": _many(types)}
    )


def calls_df(db: Db, run_id: RunIds = None, conversation_id: OneOrMany = None, roles: OneOrMany = None) -> pd.DataFrame:
    """Model calls (tokens, both costs, latency, tier, cache hits, errors).

    ``cost_usd`` is the call *as configured* (its tokens priced with the run's prices, cached
    calls included); ``cost_usd_paid`` what the run paid a provider for it (0 for a cached call).
    Runs written before ``cost_usd_paid`` existed get it from ``cost_usd`` and ``cached``."""
    calls = catalog_of(db).read_table(
        "model_calls", run_id, {"conversation_id": _many(conversation_id), "role": _many(roles)}
    )
    return calls.assign(cost_usd_paid=paid_costs(calls)) if "cost_usd_paid" in calls else calls


def paid_costs(calls: pd.DataFrame) -> pd.Series:
    """``cost_usd_paid`` of ``model_calls`` rows; for rows of runs older than that column (NULL),
    ``cost_usd`` when the call was sent and 0 when it was served from a cache."""
    cached = calls["cached"].astype("boolean").fillna(False).astype(bool)
    derived = pd.to_numeric(calls["cost_usd"], errors="coerce").astype("float64").where(~cached, 0.0)
    if "cost_usd_paid" not in calls:
        return derived
    return pd.to_numeric(calls["cost_usd_paid"], errors="coerce").astype("float64").fillna(derived)


def scores_df(db: Db, run_id: RunIds = None, scorers: OneOrMany = None) -> pd.DataFrame:
    """Scores in long form, one row per (question, scorer)."""
    return catalog_of(db).read_table("scores", run_id, {"scorer": _many(scorers)})


def answers_df(db: Db, run_id: RunIds = None, conversation_id: OneOrMany = None) -> pd.DataFrame:
    """Answers joined with their scores, one row per question.

    Each scorer adds a column named after it holding ``value`` (``f1``, ``retention``, and
    ``judge`` = 1.0/0.0), and, when the scorer records verdicts, ``<scorer>_correct`` (pandas
    ``boolean``, ``<NA>`` when unscored). ``judge_correct``, ``f1`` and ``retention`` are always
    present. A scorer whose name is already an answers column is named ``score_<scorer>``.

    ``actor_cost_usd`` and ``judge_cost_usd`` sum the model calls made for the question, as
    configured (priced with the run's prices, cached calls included), and ``actor_cost_usd_paid`` /
    ``judge_cost_usd_paid`` what this run paid for them (cached calls: 0); NaN when none is
    recorded, e.g. in runs written before ``model_calls.question_id`` existed.
    """
    catalog = catalog_of(db)
    answers = catalog.read_table("answers", run_id, {"conversation_id": _many(conversation_id)})
    scores = catalog.read_table("scores", run_id)
    calls = catalog.read_table("model_calls", run_id, {"role": ["actor", "judge"]})
    calls = calls.assign(cost_usd_paid=paid_costs(calls))
    return join_question_costs(join_scores(answers, scores), calls)


def lineage_df(db: Db, run_id: RunIds = None, conversation_id: OneOrMany = None) -> pd.DataFrame:
    """Evidence lineage, one row per (question, evidence turn): where the turn went in memory
    (``docs/results-schema.md``); empty for runs written before schema version 3."""
    return catalog_of(db).read_table("lineage", run_id, {"conversation_id": _many(conversation_id)})


def lineage_questions_df(db: Db, run_id: RunIds = None, conversation_id: OneOrMany = None) -> pd.DataFrame:
    """One row per question: evidence counts and the loss cause (``lost_at_observation``,
    ``lost_at_reflection``, ``present_answered_wrong``, ``answered_right``, …)."""
    return catalog_of(db).read_table("lineage_questions", run_id, {"conversation_id": _many(conversation_id)})


def metrics_df(db: Db, run_id: RunIds = None, names: OneOrMany = None) -> pd.DataFrame:
    """Aggregate metrics (value with its ``lo``/``hi`` interval and ``n``)."""
    return catalog_of(db).read_table("metrics", run_id, {"name": _many(names)})


def join_scores(answers: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """``answers`` with one column per scorer from long-form ``scores`` (see :func:`answers_df`)."""
    key = ["run_id", "question_id"]
    wide = answers.copy()
    for scorer, group in scores.groupby("scorer", sort=True):
        name = f"score_{scorer}" if scorer in answers.columns else str(scorer)
        per_question = group.set_index(key)
        columns = {name: per_question["value"].astype("float64")}
        if per_question["correct"].notna().any():
            columns[f"{name}_correct"] = per_question["correct"].astype("boolean")
        wide = wide.merge(pd.DataFrame(columns).reset_index(), on=key, how="left")
    for name, dtype in SCORE_COLUMNS.items():
        if name not in wide.columns:
            wide[name] = pd.Series(pd.NA if dtype == "boolean" else float("nan"), index=wide.index, dtype=dtype)
        else:
            wide[name] = wide[name].astype(dtype)
    return wide


def join_question_costs(answers: pd.DataFrame, calls: pd.DataFrame) -> pd.DataFrame:
    """``answers`` with ``actor_cost_usd`` and ``judge_cost_usd`` (as configured) and, when
    ``calls`` has ``cost_usd_paid``, ``actor_cost_usd_paid`` and ``judge_cost_usd_paid``: the cost
    of the calls each question's answering and judging made (NaN when there are none)."""
    key = ["run_id", "question_id"]
    wide = answers
    costs = [("cost_usd", "cost_usd")] + ([("cost_usd_paid", "cost_usd_paid")] if "cost_usd_paid" in calls else [])
    for role in ("actor", "judge"):
        mine = calls[(calls["role"] == role) & calls["question_id"].notna()]
        for column, suffix in costs:
            name = f"{role}_{suffix}"
            # min_count=1: a question whose calls all lack a cost stays NaN rather than $0
            per_question = mine.groupby(key)[column].sum(min_count=1).rename(name)
            wide = wide.merge(per_question.reset_index(), on=key, how="left")
            wide[name] = wide[name].astype("float64")
    return wide


def _many(value: OneOrMany) -> str | list[str] | None:
    if value is None or isinstance(value, str):
        return value
    return list(value)

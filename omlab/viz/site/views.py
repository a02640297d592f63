"""Each page of the run browser: read what it shows (the results getters and
:mod:`omlab.bench.results.browse`, read-only) and render it (:mod:`omlab.viz.site.pages`).

Every function takes the results folder and returns the page's HTML, so the server is only routing
and the static site (:mod:`omlab.viz.site.static`) is written by calling them with a static
``links``. A ``ValueError`` means the request named something that is not there (a run, a
question, a call, a sort key).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pandas as pd

from omlab.bench.lineage import LINEAGE_EVENT_TYPES
from omlab.bench.report.run_report import report_sections
from omlab.bench.results import (
    ResultsCatalog,
    answers_df,
    calls_df,
    events_df,
    lineage_df,
    lineage_questions_df,
    metrics_df,
)
from omlab.bench.results.browse import call_row as read_call
from omlab.bench.results.browse import (
    call_text,
    call_texts,
    compare_runs,
    filter_runs,
    run_header,
    run_list,
    sort_runs,
)
from omlab.viz.questions import filter_questions, question_frames, question_html, question_table
from omlab.viz.site import pages
from omlab.viz.site.links import LIVE, Links


def runs_view(
    results_dir: Path, query: pages.ListQuery, *, links: Links = LIVE, runs: pd.DataFrame | None = None
) -> str:
    """The run list, filtered and sorted as ``query`` says (``runs``: the folder's
    :func:`~omlab.bench.results.browse.run_list`, when the caller has read it)."""
    runs = run_list(results_dir) if runs is None else runs
    shown = sort_runs(filter_runs(runs, **query.filters()), query.sort, descending=query.desc)
    return pages.runs_page(runs, shown, query, results_dir=str(results_dir), links=links)


def run_view(
    results_dir: Path,
    run_id: str,
    question_filters: Mapping[str, str],
    calls_shown: int,
    *,
    links: Links = LIVE,
    runs: pd.DataFrame | None = None,
    compare_with: Sequence[str] | None = None,
) -> str:
    """A run's page (``calls_shown`` model calls listed; 0: all). ``runs``: the folder's run list
    when the caller has read it; ``compare_with``: the runs offered for comparison (default:
    every readable run)."""
    catalog = ResultsCatalog(results_dir)
    header = run_header(catalog, run_id)
    metrics = metrics_df(catalog, run_id)
    questions = question_table(answers_df(catalog, run_id), lineage_questions_df(catalog, run_id))
    questions = filter_questions(
        questions,
        type=question_filters.get("type") or None,
        verdict=question_filters.get("verdict") or None,
        cause=question_filters.get("cause") or None,
    )
    calls = calls_df(catalog, run_id)
    others = run_list(results_dir) if runs is None else runs
    header = header.copy()
    header["sweep_id"] = others.loc[others["run_id"] == run_id, "sweep_id"].squeeze() if len(others) else ""
    others = others[others["status"] != "unreadable"]
    if compare_with is not None:
        others = others[others["run_id"].isin(list(compare_with))]
    return pages.run_page(
        header,
        report_sections(header, metrics),
        questions,
        calls.head(calls_shown) if calls_shown else calls,
        calls_total=len(calls),
        others=others,
        results_dir=str(results_dir),
        question_filters=question_filters,
        links=links,
    )


def question_view(results_dir: Path, run_id: str, question_id: str, whole: bool = False, *, links: Links = LIVE) -> str:
    """One question of a run, with the actor and judge calls made for it (``whole``: the whole
    memory context, else the lines around the evidence)."""
    catalog = ResultsCatalog(results_dir)
    run_header(catalog, run_id)
    answers = answers_df(catalog, run_id)
    one = answers[answers["question_id"] == question_id]
    if one.empty:
        raise ValueError(f"run {run_id!r} has no question {question_id!r}")
    conversation = one["conversation_id"].iloc[0]
    pages_of = conversation_question_views(results_dir, run_id, conversation, one, (whole,), links=links)
    return pages_of[(question_id, whole)]


def conversation_question_views(
    results_dir: Path,
    run_id: str,
    conversation: str,
    answers: pd.DataFrame,
    kinds: Sequence[bool] = (False, True),
    *,
    links: Links = LIVE,
) -> dict[tuple[str, bool], str]:
    """The pages of the questions in ``answers`` (all of one conversation), each of the ``kinds``
    (``whole`` or not) asked for, reading the conversation's lineage, events and calls once:
    ``{(question_id, whole): html}``."""
    catalog = ResultsCatalog(results_dir)
    frames = question_frames(
        answers,
        lineage_df(catalog, run_id, conversation),
        lineage_questions_df(catalog, run_id, conversation),
        events_df(catalog, run_id, conversation, types=list(LINEAGE_EVENT_TYPES)),
    )
    calls = calls_df(catalog, run_id, conversation)
    written: dict[tuple[str, bool], str] = {}
    for question_id in answers["question_id"].astype(str).unique():
        own = calls[calls["question_id"] == question_id]
        for whole in kinds:
            section = question_html(frames, question_id, window=None if whole else 3)
            written[(question_id, whole)] = pages.question_page(
                run_id, question_id, section, own, results_dir=str(results_dir), whole=whole, links=links
            )
    return written


def call_view(results_dir: Path, run_id: str, call_id: str, *, links: Links = LIVE) -> str:
    """One model call of a run."""
    call = read_call(results_dir, run_id, call_id)
    prompt, response = call_text(results_dir, run_id, call_id)
    return pages.call_page(
        run_id, call.to_dict(), prompt=prompt, response=response, results_dir=str(results_dir), links=links
    )


def call_views(results_dir: Path, run_id: str, *, links: Links = LIVE) -> Iterator[tuple[str, str]]:
    """``(call_id, html)`` of every model call of a run, reading its calls and their texts once."""
    calls = calls_df(results_dir, run_id)
    texts = call_texts(results_dir, run_id)
    for call in calls.to_dict("records"):
        call_id = str(call["call_id"])
        prompt, response = texts.get(call_id, (None, None))
        yield (
            call_id,
            pages.call_page(run_id, call, prompt=prompt, response=response, results_dir=str(results_dir), links=links),
        )


def compare_view(results_dir: Path, run_a: str, run_b: str, *, links: Links = LIVE) -> str:
    """Two runs' configuration diff beside their metric diff."""
    catalog = ResultsCatalog(results_dir)
    config, metrics = compare_runs(results_dir, run_a, run_b)
    a, b = run_header(catalog, run_a), run_header(catalog, run_b)
    return pages.compare_page(a, b, config, metrics, results_dir=str(results_dir), links=links)


def plots_view(
    results_dir: Path, run_id: str, folder: Path, *, links: Links = LIVE, draw: bool = True, missing: str = ""
) -> str:
    """A run's plots, drawn into ``folder`` the first time they are asked for (``draw`` False:
    only those already there; ``missing`` says why there are none)."""
    if draw and (not folder.is_dir() or not any(folder.glob("*.png"))):
        draw_plots(results_dir, run_id, folder)
    images = sorted(path.name for path in folder.glob("*.png")) if folder.is_dir() else []
    return pages.plots_page(run_id, images, results_dir=str(results_dir), links=links, missing=missing)


def draw_plots(results_dir: Path, run_id: str, folder: Path) -> None:
    """Draw every plot that applies to run ``run_id`` into ``folder``."""
    from omlab.bench.results import steps_df
    from omlab.viz.report import write_run_plots

    catalog = ResultsCatalog(results_dir)
    header = run_header(catalog, run_id)
    folder.mkdir(parents=True, exist_ok=True)
    metrics = metrics_df(catalog, run_id)
    write_run_plots(
        folder,
        steps=steps_df(catalog, run_id),
        events=events_df(catalog, run_id),
        calls=calls_df(catalog, run_id),
        answers=answers_df(catalog, run_id),
        metrics=metrics if len(metrics) else pd.DataFrame(columns=metrics.columns),
        lineage=lineage_df(catalog, run_id),
        lineage_questions=lineage_questions_df(catalog, run_id),
        run_label=f"{header.get('suite')}-{header.get('config_name')}",
    )


__all__ = [
    "call_view",
    "call_views",
    "compare_view",
    "conversation_question_views",
    "draw_plots",
    "plots_view",
    "question_view",
    "run_view",
    "runs_view",
]

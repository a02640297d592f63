"""A run's report with its drawings: what ``omlab report`` and ``omlab run --report`` write.

The text (headline numbers, accuracy per type, cost, compression, blocking, latency) comes from
:func:`omlab.bench.report.run_report.write_report`; this module hands it the two things bench
does not draw: the run's PNG plots (:func:`omlab.viz.report.write_run_plots`, with
``plots=True``) and, for an html report, the per-question page
(:func:`omlab.viz.questions.questions_page`). matplotlib is imported only when plots are asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from omlab.bench.report import run_report
from omlab.bench.results import ResultsCatalog


def write_report(
    results_dir: str | Path,
    run_id: str,
    *,
    fmt: str = "md",
    plots: bool = False,
    out_dir: str | Path | None = None,
    extra_images: Sequence[str] = (),
) -> Path:
    """Write run ``run_id``'s report (and, with ``plots``, its plots) to ``out_dir`` (default
    ``<results>/reports/<run_id>``); an html report gets the per-question page beside it.
    ``extra_images`` are file names of plots the caller drew beside the report (listed after the
    run's own). Returns the report file.

    Raises:
        ValueError: Unknown run or format.
    """
    return run_report.write_report(
        results_dir,
        run_id,
        fmt=fmt,
        out_dir=out_dir,
        plots=write_plots if plots else None,
        questions_page=write_questions_page,
        extra_images=extra_images,
    )


def write_questions_page(catalog: ResultsCatalog, run_id: str, path: Path, title: str) -> Path | None:
    """Write the per-question page (:func:`omlab.viz.questions.questions_page`) of a run to
    ``path``; None (nothing written) when the run has no answers."""
    from omlab.bench.lineage import LINEAGE_EVENT_TYPES
    from omlab.bench.results import answers_df, events_df, lineage_df, lineage_questions_df
    from omlab.viz.questions import question_frames, questions_page

    answers = answers_df(catalog, run_id)
    if answers.empty:
        return None
    frames = question_frames(
        answers,
        lineage_df(catalog, run_id),
        lineage_questions_df(catalog, run_id),
        events_df(catalog, run_id, types=list(LINEAGE_EVENT_TYPES)),
    )
    path.write_text(questions_page(frames, title=title), encoding="utf-8")
    return path


def write_plots(
    catalog: ResultsCatalog, run_id: str, header: pd.Series, metrics: pd.DataFrame, target: Path
) -> list[Path]:
    """Every plot that applies to the run (:func:`omlab.viz.report.write_run_plots`), under ``target``."""
    from omlab.bench.results import answers_df, calls_df, events_df, lineage_df, lineage_questions_df, steps_df
    from omlab.viz.report import write_run_plots

    return write_run_plots(
        target,
        steps=steps_df(catalog, run_id),
        events=events_df(catalog, run_id),
        calls=calls_df(catalog, run_id),
        answers=answers_df(catalog, run_id),
        metrics=metrics,
        lineage=lineage_df(catalog, run_id),
        lineage_questions=lineage_questions_df(catalog, run_id),
        run_label=f"{header.get('suite')}-{header.get('config_name')}",
    )


__all__ = ["write_plots", "write_questions_page", "write_report"]

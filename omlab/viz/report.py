"""Every plot that applies to one run, saved as PNG files.

Given a run's frames (the ``omlab.bench.results`` getters), :func:`write_run_plots` draws each
plot whose input is there and writes it under ``out_dir``; a plot whose frame is empty (or has
nothing of the kind, e.g. no reflection, no routed call) is skipped rather than written as an
empty picture. File names are ``<run>-<plot>[-<detail>].png`` with the run label made safe for
file systems. Cross-run plots (sweep heatmaps, cost vs accuracy with its Pareto front) come from
a sweep table, with :func:`write_sweep_plots`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from omlab.viz.plots._frames import has_rows, numeric
from omlab.viz.plots.accuracy import plot_accuracy_by_type, scored_column
from omlab.viz.plots.compression import compression_cycles, plot_compression
from omlab.viz.plots.context import plot_context_timeline
from omlab.viz.plots.cost import plot_cost_breakdown
from omlab.viz.plots.loss_causes import plot_loss_causes
from omlab.viz.plots.pareto import plot_cost_vs_accuracy
from omlab.viz.plots.survival import plot_fact_survival
from omlab.viz.plots.sweep import plot_sweep_heatmap
from omlab.viz.plots.tiers import plot_tier_routing
from omlab.viz.style import DPI, FIGSIZE_BARS, FIGSIZE_WIDE, FONT, GREY, plain_texts


def file_stem(text: str) -> str:
    """``text`` reduced to letters, digits, ``.``, ``_`` and ``-`` (other runs become one ``-``)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-.")
    return stem or "run"


def write_run_plots(
    out_dir: Path,
    *,
    steps: pd.DataFrame | None,
    events: pd.DataFrame | None,
    calls: pd.DataFrame | None,
    answers: pd.DataFrame | None = None,
    metrics: pd.DataFrame | None = None,
    lineage: pd.DataFrame | None = None,
    lineage_questions: pd.DataFrame | None = None,
    run_label: str,
    max_timelines: int = 3,
    dpi: int = DPI,
) -> list[Path]:
    """Save each applicable plot of one run as a PNG and return the paths written.

    Written when their input is there:

    * ``<run>-context-<conversation>.png``: the sawtooth of the first ``max_timelines``
      conversations (in id order) of ``steps``, with ``events`` as markers;
    * ``<run>-compression-observation.png`` / ``-compression-reflection.png``: per-cycle
      compression, when ``events`` hold such cycles;
    * ``<run>-cost-by-role.png``, ``-cost-by-model.png`` and, when some call was routed by
      ``ModelByInputTokens``, ``-cost-by-tier.png`` and ``-tier-routing.png``;
    * ``<run>-accuracy-by-type.png``: from ``metrics`` rows named ``accuracy`` when there are
      any, else from ``answers`` scored by the first score column of
      :data:`omlab.viz.plots.accuracy.SCORER_PREFERENCE` that holds values;
    * ``<run>-fact-survival.png`` (share of observed evidence still in memory per reflection
      generation) from ``lineage``, and ``<run>-loss-causes.png`` (why each question type was
      missed) from ``lineage_questions``.

    Args:
        out_dir: Folder for the PNG files (created if needed; existing files are overwritten).
        steps: ``steps_df`` of the run.
        events: ``events_df`` of the run.
        calls: ``calls_df`` of the run.
        answers: ``answers_df`` of the run.
        metrics: ``metrics_df`` of the run.
        lineage: ``lineage_df`` of the run (evidence lineage).
        lineage_questions: ``lineage_questions_df`` of the run.
        run_label: Names the files and appears above each plot (e.g. the run id or config name).
        max_timelines: At most this many per-conversation timelines.
        dpi: PNG resolution.

    Returns:
        The files written, in the order above.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    run = file_stem(run_label)
    jobs: list[tuple[str, Callable[[Axes], Axes], tuple[float, float]]] = []

    if has_rows(steps):
        for conversation in sorted(steps["conversation_id"].dropna().astype(str).unique())[:max_timelines]:
            jobs.append(
                (
                    f"context-{file_stem(conversation)}",
                    lambda ax, c=conversation: plot_context_timeline(steps, events, conversation_id=c, ax=ax),
                    FIGSIZE_WIDE,
                )
            )
    for operation in ("observation", "reflection"):
        if not compression_cycles(events, operation=operation).empty:
            jobs.append(
                (
                    f"compression-{operation}",
                    lambda ax, o=operation: plot_compression(events, operation=o, ax=ax),
                    FIGSIZE_WIDE,
                )
            )
    if has_rows(calls):
        routed = "tier" in calls.columns and numeric(calls["tier"]).notna().any()
        for by in ("role", "model", *(("tier",) if routed else ())):
            jobs.append((f"cost-by-{by}", lambda ax, b=by: plot_cost_breakdown(calls, by=b, ax=ax), FIGSIZE_BARS))
        if routed:
            jobs.append(("tier-routing", lambda ax: plot_tier_routing(calls, ax=ax), FIGSIZE_BARS))
    accuracy = _accuracy_job(answers, metrics)
    if accuracy is not None:
        jobs.append(("accuracy-by-type", accuracy, FIGSIZE_BARS))
    jobs += _lineage_jobs(lineage, lineage_questions)

    return _save(jobs, out_dir, run, run_label, dpi)


def _lineage_jobs(
    lineage: pd.DataFrame | Mapping[str, pd.DataFrame] | None,
    questions: pd.DataFrame | Mapping[str, pd.DataFrame] | None,
) -> list[tuple[str, Callable[[Axes], Axes], tuple[float, float]]]:
    """The fact-survival curve and the loss-cause bars, when the lineage has rows (one frame, or
    ``{config label: frame}`` for a sweep's cells)."""

    def present(frames: pd.DataFrame | Mapping[str, pd.DataFrame] | None) -> bool:
        if isinstance(frames, Mapping):
            return any(has_rows(frame) for frame in frames.values())
        return has_rows(frames)

    jobs: list[tuple[str, Callable[[Axes], Axes], tuple[float, float]]] = []
    if present(lineage):
        jobs.append(("fact-survival", lambda ax: plot_fact_survival(lineage, ax=ax), FIGSIZE_BARS))
    if present(questions):
        jobs.append(("loss-causes", lambda ax: plot_loss_causes(questions, ax=ax), FIGSIZE_BARS))
    return jobs


#: sweep-table columns worth a heatmap, when the sweep has them
SWEEP_HEATMAP_VALUES = ("blocked_s", "context_tokens_peak", "sync_observations", "accuracy", "cost_usd")


def write_sweep_plots(
    out_dir: Path,
    table: pd.DataFrame,
    *,
    x: str,
    y: str,
    sweep_label: str,
    lineage: Mapping[str, pd.DataFrame] | None = None,
    lineage_questions: Mapping[str, pd.DataFrame] | None = None,
    dpi: int = DPI,
) -> list[Path]:
    """Save a sweep's heatmaps (``x`` × ``y`` → each of :data:`SWEEP_HEATMAP_VALUES` present) and
    its cost-vs-accuracy plot with the Pareto front, from a sweep table (one row per cell: the grid
    columns ``x``/``y``, the metric columns and ``config_name``); with the cells' lineage
    (``{config name: lineage_df}``, ``{config name: lineage_questions_df}``) also one fact-survival
    curve per cell and the loss causes per cell: what each setting costs in memory."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs: list[tuple[str, Callable[[Axes], Axes], tuple[float, float]]] = []
    for value in SWEEP_HEATMAP_VALUES:
        if value in table.columns and numeric(table[value]).notna().any():
            jobs.append(
                (
                    f"heatmap-{value}",
                    lambda ax, v=value: plot_sweep_heatmap(table, x=x, y=y, value=v, ax=ax),
                    FIGSIZE_BARS,
                )
            )
    if {"cost_usd", "accuracy"} <= set(table.columns) and numeric(table["accuracy"]).notna().any():
        points = table.assign(label=table["config_name"])
        jobs.append(("cost-vs-accuracy", lambda ax: plot_cost_vs_accuracy(points, ax=ax), FIGSIZE_BARS))
    jobs += _lineage_jobs(lineage, lineage_questions)
    return _save(jobs, out_dir, file_stem(sweep_label), sweep_label, dpi)


def _save(
    jobs: list[tuple[str, Callable[[Axes], Axes], tuple[float, float]]],
    out_dir: Path,
    run: str,
    run_label: str,
    dpi: int,
) -> list[Path]:
    written = []
    for name, draw, figsize in jobs:
        figure = Figure(figsize=figsize, layout="constrained")
        draw(figure.add_subplot())
        figure.suptitle(f"run: {run_label}", fontsize=FONT.annotation, color=GREY, x=0.99, ha="right")
        plain_texts(figure)
        path = out_dir / f"{run}-{name}.png"
        figure.savefig(path, dpi=dpi, bbox_inches="tight", facecolor="white")
        written.append(path)
    return written


def _accuracy_job(answers: pd.DataFrame | None, metrics: pd.DataFrame | None) -> Callable[[Axes], Axes] | None:
    if has_rows(metrics) and "name" in metrics.columns and (metrics["name"].astype(str) == "accuracy").any():
        return lambda ax: plot_accuracy_by_type(metrics, ax=ax)
    if has_rows(answers) and "question_type" in answers.columns and scored_column(answers) is not None:
        return lambda ax: plot_accuracy_by_type(answers, ax=ax)
    return None


def write_production_plot(results_dir: str | Path, run_id: str, out_dir: Path, *, dpi: int = DPI) -> list[str]:
    """For a run on a Mastra database: draw production beside the replay (one PNG per thread,
    ``<run>-production-<thread>.png`` in ``out_dir``) and return the file names; none otherwise."""
    from omlab.bench.datasets.errors import DatasetError
    from omlab.bench.report.production import production_comparison
    from omlab.viz.plots.production import plot_production_comparison

    try:
        comparison = production_comparison(results_dir, run_id)
    except DatasetError:  # the report's section says why
        return []
    if comparison is None or comparison.log.empty:
        return []
    out_dir.mkdir(parents=True, exist_ok=True)
    names = []
    for thread in sorted(set(comparison.log["conversation_id"].astype(str))):
        axes = plot_production_comparison(comparison.log, comparison.generations, conversation_id=thread)
        name = f"{file_stem(run_id)}-production-{file_stem(thread)}.png"
        axes[0].figure.savefig(out_dir / name, dpi=dpi)
        names.append(name)
    return names

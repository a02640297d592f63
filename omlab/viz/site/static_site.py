"""The run browser written as a static site: ``omlab report --format html`` over a results folder.

:func:`write_site` renders every page ``omlab view`` serves that can be a file, with the same
views and templates (:mod:`omlab.viz.site.views`, linking through a static
:class:`~omlab.viz.site.links.Links`), into one folder that opens from ``file://`` with no server
and no network: the run list (its script filters and sorts in the page), each run (report
tables, questions, model calls, plots), each question (the lines around its evidence, and the
whole memory context), each model call (prompt and response), and comparisons.

A comparison is a page per pair of runs, so not every pair is written: every pair within a sweep,
and within a suite every pair when it has at most :data:`ALL_PAIRS_UP_TO` runs (else each run with
the one before it). Plots: with ``plots`` every run's are drawn; without, the ones an earlier
``omlab report --plots`` / ``omlab sweep --plots`` left in ``reports/<run>/`` are copied.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from omlab.bench.results import ResultsCatalog, answers_df
from omlab.bench.results.browse import run_list
from omlab.viz.site import pages, views
from omlab.viz.site.links import Links, file_name

ALL_PAIRS_UP_TO = 12
"""A suite with at most this many runs gets a comparison page for every pair of its runs."""
MARKER = ".omlab-site"
"""The file that marks a folder as a site :func:`write_site` wrote (and may replace)."""
ASSETS = Path(__file__).parent / "static"


@dataclass(frozen=True, slots=True)
class SiteWritten:
    """What :func:`write_site` wrote: the run list's file and how many of each page."""

    index: Path
    runs: int
    pages: int
    comparisons: int
    plots: int


def compare_pairs(runs: pd.DataFrame, all_pairs_up_to: int = ALL_PAIRS_UP_TO) -> list[tuple[str, str]]:
    """The pairs of runs the site compares (each ``(a, b)`` with ``a`` sorting first): every pair
    within a sweep; within a suite, every pair up to ``all_pairs_up_to`` runs, else each run
    with the one before it."""
    pairs: set[tuple[str, str]] = set()
    for column in ("sweep_id", "suite"):
        for value, group in runs.groupby(column):
            if not value:
                continue
            ids = sorted(group["run_id"].astype(str))
            if column == "sweep_id" or len(ids) <= all_pairs_up_to:
                pairs.update(itertools.combinations(ids, 2))
            else:
                pairs.update(itertools.pairwise(ids))
    return sorted(pairs)


def write_site(
    results_dir: str | Path,
    out_dir: str | Path,
    *,
    plots: bool = False,
    progress: Callable[[str], None] | None = None,
) -> SiteWritten:
    """Write the static run browser of ``results_dir`` to ``out_dir`` and return what it wrote.

    The site is written to a new folder beside ``out_dir`` and then moved into place, replacing
    a site written there before (never any other folder).

    Raises:
        ValueError: ``out_dir`` exists, is not empty and is not a site written here before.
    """
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    if out_dir.exists() and not (out_dir / MARKER).is_file() and any(out_dir.iterdir()):
        raise ValueError(f"--out {out_dir} is a folder holding other files; name a new or empty folder for the site")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
    try:
        written = _write(results_dir, work, plots=plots, progress=progress or (lambda _: None))
        if out_dir.exists():
            shutil.rmtree(out_dir)
        work.rename(out_dir)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return SiteWritten(out_dir / "index.html", written.runs, written.pages, written.comparisons, written.plots)


def _write(results_dir: Path, site: Path, *, plots: bool, progress: Callable[[str], None]) -> SiteWritten:
    (site / MARKER).write_text("written by omlab report --format html; replaced when written again\n")
    shutil.copytree(ASSETS, site / "static")
    runs = run_list(results_dir)
    readable = runs[runs["problem"] == ""]
    pairs = compare_pairs(readable)
    partners: dict[str, list[str]] = {}
    for a, b in pairs:
        partners.setdefault(a, []).append(b)
        partners.setdefault(b, []).append(a)
    count = _Count()
    count.page(site / "index.html", views.runs_view(results_dir, pages.ListQuery(), links=_at(0), runs=runs))
    count.page(site / "compare.html", pages.compare_index_page(pairs, results_dir=str(results_dir), links=_at(0)))
    for a, b in pairs:
        count.page(
            site / "compare" / f"{file_name(a)}--{file_name(b)}.html",
            views.compare_view(results_dir, a, b, links=_at(1)),
        )
    for row in runs[runs["problem"] != ""].to_dict("records"):  # listed, so linked: say what is wrong
        title, message = f"Run {row['run_id']} cannot be read", f"{row['status']}: {row['problem']}"
        html = pages.error_page(title, message, results_dir=str(results_dir), links=_at(1))
        count.page(site / "run" / f"{file_name(row['run_id'])}.html", html)
    for number, run_id in enumerate(readable["run_id"].astype(str), 1):
        progress(f"run {number}/{len(readable)}: {run_id}")
        folder = site / "run" / file_name(run_id)
        page = views.run_view(
            results_dir, run_id, {}, 0, links=_at(1), runs=runs, compare_with=partners.get(run_id, [])
        )
        count.page(site / "run" / f"{file_name(run_id)}.html", page)
        count.plots += _plots(results_dir, run_id, folder, plots=plots)
        count.page(
            folder / "plots.html",
            views.plots_view(results_dir, run_id, folder / "plot", links=_at(2), draw=False, missing=_no_plots(plots)),
        )
        answers = answers_df(ResultsCatalog(results_dir), run_id)
        for conversation, group in answers.groupby("conversation_id", sort=True):
            question_pages = views.conversation_question_views(
                results_dir, run_id, str(conversation), group, links=_at(3)
            )
            for (question_id, whole), html in question_pages.items():
                count.page(folder / ("context" if whole else "question") / f"{file_name(question_id)}.html", html)
        for call_id, html in views.call_views(results_dir, run_id, links=_at(3)):
            count.page(folder / "call" / f"{file_name(call_id)}.html", html)
    return SiteWritten(site / "index.html", len(readable), count.pages, len(pairs), count.plots)


def _plots(results_dir: Path, run_id: str, folder: Path, *, plots: bool) -> int:
    target = folder / "plot"
    if plots:
        views.draw_plots(results_dir, run_id, target)
    else:
        drawn = sorted((results_dir / "reports" / run_id).glob("*.png"))
        if drawn:
            target.mkdir(parents=True, exist_ok=True)
            for path in drawn:
                shutil.copy2(path, target / path.name)
    return len(list(target.glob("*.png"))) if target.is_dir() else 0


def _no_plots(plots: bool) -> str:
    if plots:
        return "This run has nothing to plot yet."
    return (
        "No plots were drawn for this run: write the site with --plots (omlab report --format html --plots), "
        "or draw this run's with omlab report RUN --plots before writing the site."
    )


def _at(depth: int) -> Links:
    return Links.static_at(depth)


class _Count:
    def __init__(self) -> None:
        self.pages = 0
        self.plots = 0

    def page(self, path: Path, html: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
        self.pages += 1


__all__ = ["ALL_PAIRS_UP_TO", "MARKER", "SiteWritten", "compare_pairs", "write_site"]

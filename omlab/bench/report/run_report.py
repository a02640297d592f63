"""A run's report: headline numbers, accuracy per type, cost, compression, blocking, latency.

:func:`write_report` writes ``<results>/reports/<run_id>/report.md`` (or ``report.html``, with the
per-question page beside it when given a ``questions_page`` writer) from the run's ``metrics``
rows (computed on the fly from its frames when the run has none yet, e.g. while it is running)
and, given a ``plots`` writer, links the PNG plots it draws beside it. Drawing is not bench's
job: the writers come from the caller (``omlab.viz.run_report.write_report``, what ``omlab
report`` calls, passes viz's).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from omlab.bench.datasets.errors import DatasetError
from omlab.bench.report.glossary import GLOSSARY, metric_label
from omlab.bench.report.latest import latest_run
from omlab.bench.report.metrics import compute_metrics, load_run_frames
from omlab.bench.report.production import production_comparison
from omlab.bench.results import ResultsCatalog, metrics_df, runs_df
from omlab.bench.scoring.verdicts import VERDICT_RULES

PlotWriter = Callable[[ResultsCatalog, str, pd.Series, pd.DataFrame, Path], list[Path]]
"""Draws a run's plots: ``(catalog, run_id, runs row, metrics, folder)`` -> the files written."""
QuestionsPageWriter = Callable[[ResultsCatalog, str, Path, str], "Path | None"]
"""Writes a run's per-question page: ``(catalog, run_id, path, title)`` -> the file, or None
when there is nothing to write."""

HEADLINE: tuple[tuple[str, str, str], ...] = (
    ("accuracy (micro)", "accuracy", "all"),
    ("task-averaged accuracy", "task_averaged_accuracy", "all"),
    ("abstention accuracy", "accuracy", "abstention"),
    ("LoCoMo F1", "f1", "all"),
    ("retention (gold answer still in context)", "retention", "all"),
    ("evidence retention", "evidence_retention", "all"),
    ("questions", "questions", "all"),
    ("failed phases (a resume retries them)", "failed_phases", "all"),
    ("failed questions", "failed_questions", "all"),
    ("answered but not scored", "unscored_questions", "all"),
    ("judge verdicts missing", "judge_missing", "all"),
    ("cost (USD, as configured)", "cost_usd", "all"),
    ("cost paid in this run (USD)", "cost_usd_paid", "all"),
    ("warnings (inputs accepted, listed below)", "warnings", "all"),
)
QUESTIONS_PAGE = "questions.html"
"""The per-question page ``omlab report --format html`` writes beside ``report.html``."""
COMPRESSION = (
    "compression_observation",
    "compression_observation_per_cycle",
    "compression_reflection",
    "compression_reflection_per_cycle",
    "compression_context",
    "context_tokens_avg",
    "context_tokens_peak",
    "question_context_tokens_avg",
    "full_history_tokens_avg",
)
_CSS = (
    "body{font-family:sans-serif;margin:2em;max-width:1100px}"
    "table{border-collapse:collapse;margin-bottom:1.5em}"
    "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}th{background:#f3f3f3}img{max-width:100%}"
)
BLOCKING = (
    "blocked_s",
    "blocked_s_per_conversation",
    "blocked_steps",
    "sync_observations",
    "sync_reflections",
    "buffered_observations",
    "buffered_reflections",
    "activations",
    "reflection_activations",
)


@dataclass(slots=True)
class Section:
    """A titled table of the report."""

    title: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)


def latest_run_id(results_dir: str | Path) -> str:
    """The run ``latest`` names under ``results_dir``: the latest readable run that is not a sweep
    cell (:func:`omlab.bench.report.latest.latest_run`)."""
    return latest_run(results_dir).run_id


def report_sections(header: pd.Series, metrics: pd.DataFrame, failures: pd.DataFrame | None = None) -> list[Section]:
    """The report's tables from a ``runs`` row and the run's ``metrics`` rows.

    ``failures``: what an incomplete run failed (``conversation_id``, ``phase``, ``error``; see
    :func:`run_failure_rows`), listed in their own section; without it the run row's ``error``
    text is split into that section."""
    config = json.loads(header["config_json"]) if isinstance(header.get("config_json"), str) else {}
    run = Section(
        "Run",
        ["field", "value"],
        [
            ["run", header["run_id"]],
            ["suite", header.get("suite")],
            ["configuration", header.get("config_name")],
            ["status", _status_label(header)],
            ["dataset", _dataset_label(header)],
            ["config hash", str(header.get("config_hash") or "")[:16]],
            ["started", header.get("started_at")],
            ["finished", header.get("finished_at")],
            ["models", ", ".join(f"{k}={_short(v)}" for k, v in config.get("models", {}).items())],
            ["QA protocol", _protocol_label(header, config)],
            [
                "versions",
                _versions(header),
            ],
        ],
    )
    headline = Section("Headline", ["metric", "value", "95% CI", "n", "missing"])
    for label, name, group in HEADLINE:
        row = _find(metrics, name, group)
        if row is not None:
            headline.rows.append(
                [label, _fmt(row["value"], name), _ci(row, name), _count(row["n"]), _missing(row, metrics)]
            )
    sections = [run]
    failed = _failure_section(header, failures)
    if failed is not None:
        sections.append(failed)
    sections.append(headline)
    if config.get("warnings"):
        sections.append(
            Section(
                "Warnings",
                ["kind", "record", "detail"],
                [[w.get("kind"), w.get("record"), w.get("detail")] for w in config["warnings"]],
            )
        )
    for title, name in (
        ("Accuracy by question type", "accuracy"),
        ("F1 by LoCoMo category", "f1"),
        ("Retention by question type", "retention"),
    ):
        groups = metrics[(metrics["name"] == name) & (metrics["group_key"] != "all")]
        if len(groups):
            sections.append(
                Section(
                    title,
                    ["group", "value", "95% CI", "n", "missing"],
                    [
                        [g["group_key"], _fmt(g["value"], name), _ci(g, name), _count(g["n"]), _missing(g, metrics)]
                        for _, g in groups.iterrows()
                    ],
                )
            )
    cost = metrics[(metrics["name"] == "cost_usd") & (metrics["group_key"] != "all")]
    if len(cost):
        calls = metrics[metrics["name"] == "calls"].set_index("group_key")["value"]
        paid = metrics[metrics["name"] == "cost_usd_paid"].set_index("group_key")["value"]
        sections.append(
            Section(
                "Cost by role, model and tier (USD)",
                ["group", "cost as configured", "paid in this run", "calls"],
                [
                    [
                        g["group_key"],
                        f"{g['value']:.4f}",
                        f"{paid[g['group_key']]:.4f}" if g["group_key"] in paid.index else "",
                        _count(calls.get(g["group_key"], g["n"])),
                    ]
                    for _, g in cost.iterrows()
                ],
            )
        )
    for title, names in (
        ("Compression and context size", COMPRESSION),
        ("Blocking and activations", BLOCKING),
    ):
        rows = [
            [metric_label(name), _fmt(row["value"], name), _count(row["n"])]
            for name in names
            if (row := _find(metrics, name, "all")) is not None
        ]
        rows += [
            [f"{metric_label(r['name'])} ({r['group_key']})", _fmt(r["value"], r["name"]), _count(r["n"])]
            for _, r in metrics[(metrics["name"].isin(names)) & (metrics["group_key"] != "all")].iterrows()
        ]
        if rows:
            sections.append(Section(title, ["metric", "value", "n"], rows))
    latency = metrics[metrics["name"].isin(("latency_s_p50", "latency_s_p95"))]
    if len(latency):
        sections.append(
            Section(
                "Model latency (s, calls actually made)",
                ["metric", "group", "value", "n"],
                [
                    [metric_label(r["name"]), r["group_key"], f"{r['value']:.3f}", _count(r["n"])]
                    for _, r in latency.iterrows()
                ],
            )
        )
    sections.append(Section("Glossary", ["term", "meaning"], [list(entry) for entry in GLOSSARY]))
    return sections


def production_sections(results_dir: str | Path, run_id: str, header: pd.Series) -> list[Section]:
    """The production comparison section of a run on a Mastra database (none for other runs)."""
    if header.get("dataset") != "mastra":
        return []
    title = "Production vs this replay (observation log tokens, reflections)"
    try:
        comparison = production_comparison(results_dir, run_id)
    except DatasetError as error:  # the database moved or changed since the run: report the rest
        return [Section(title, ["problem"], [[f"production records unavailable: {error}"]])]
    if comparison is None or comparison.summary.empty:
        return []
    columns = list(comparison.summary.columns)
    rows = [
        [_cell(v) if not isinstance(v, float) else f"{v:,.0f}" for v in r]
        for r in comparison.summary.itertuples(index=False)
    ]
    return [Section(title, columns, rows)]


def render_markdown(title: str, sections: Sequence[Section], images: Sequence[str] = ()) -> str:
    """Markdown text of a report."""
    lines = [f"# {title}", ""]
    for section in sections:
        lines += [
            f"## {section.title}",
            "",
            "| " + " | ".join(section.columns) + " |",
            "|" + "|".join("---" for _ in section.columns) + "|",
        ]
        lines += ["| " + " | ".join(_cell(v).replace("|", "\\|") for v in row) + " |" for row in section.rows]
        lines.append("")
    if images:
        lines += ["## Plots", ""] + [f"![{Path(i).stem}]({i})" for i in images] + [""]
    return "\n".join(lines)


def notebook_markdown(text: str) -> str:
    """Report Markdown made safe for ``IPython.display.Markdown``: every ``$`` escaped.

    Jupyter reads text between two ``$`` as LaTeX, so two dollar amounts turned the table cells
    between them into one formula and the table lost a row.
    """
    return text.replace("\\$", "$").replace("$", "\\$")


def render_html(title: str, sections: Sequence[Section], images: Sequence[str] = ()) -> str:
    """A self-contained HTML page of a report (images are linked files beside it)."""
    esc = html.escape
    head = f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>"
    parts = [f"{head}<style>{_CSS}</style></head><body><h1>{esc(title)}</h1>"]
    for section in sections:
        parts.append(
            f"<h2>{esc(section.title)}</h2><table><tr>"
            + "".join(f"<th>{esc(c)}</th>" for c in section.columns)
            + "</tr>"
        )
        parts += ["<tr>" + "".join(f"<td>{esc(_cell(v))}</td>" for v in row) + "</tr>" for row in section.rows]
        parts.append("</table>")
    if images:
        parts.append(
            "<h2>Plots</h2>" + "".join(f"<p><img src='{esc(i)}' alt='{esc(Path(i).stem)}'></p>" for i in images)
        )
    parts.append("</body></html>")
    return "".join(parts)


def write_report(
    results_dir: str | Path,
    run_id: str,
    *,
    fmt: str = "md",
    out_dir: str | Path | None = None,
    plots: PlotWriter | None = None,
    questions_page: QuestionsPageWriter | None = None,
    extra_images: Sequence[str] = (),
) -> Path:
    """Write run ``run_id``'s report to ``out_dir`` (default ``<results>/reports/<run_id>``);
    returns the report file. ``plots`` draws the run's plots beside it (linked from the report);
    ``questions_page`` writes the per-question page of an html report (linked from it);
    ``extra_images`` are file names of plots a caller drew beside the report (listed after the
    run's own).

    A run on a ``kind = "mastra"`` dataset gets a "Production vs this replay" section: the
    production records it replayed beside the run (``omlab.bench.report.production``).

    Raises:
        ValueError: Unknown run or format.
    """
    if fmt not in ("md", "html"):
        raise ValueError(f"report format must be md or html, got {fmt!r}")
    catalog = ResultsCatalog(results_dir)
    header = runs_df(catalog)
    header = header[header["run_id"] == run_id]
    if header.empty:
        raise ValueError(f"no run {run_id!r} under {Path(results_dir) / 'runs'}")
    row = header.iloc[0]
    metrics = metrics_df(catalog, run_id)
    if metrics.empty:
        config = json.loads(row["config_json"]) if isinstance(row["config_json"], str) else {}
        metrics = compute_metrics(
            load_run_frames(catalog, run_id),
            dataset_kind=str(row.get("dataset") or ""),
            on_missing=config.get("scoring", {}).get("on_missing", "drop"),
            judged="judge" in config.get("phases", ["judge"]),
            f1_aggregation=config.get("scoring", {}).get("f1_aggregation", "mean"),
            protocol=config.get("scoring", {}).get("protocol", "omlab"),
        )
    target = Path(out_dir) if out_dir is not None else Path(results_dir) / "reports" / run_id
    target.mkdir(parents=True, exist_ok=True)
    images = [path.name for path in plots(catalog, run_id, row, metrics, target)] if plots is not None else []
    title = f"omlab run {run_id}: {row.get('suite')} [{row.get('config_name')}]"
    if row.get("status") == "incomplete":
        title += " (INCOMPLETE)"
    failures = None
    if row.get("status") == "incomplete":
        from omlab.bench.results import answers_df, conversations_df

        failures = run_failure_rows(conversations_df(catalog, run_id), answers_df(catalog, run_id))
    sections = report_sections(row, metrics, failures) + production_sections(results_dir, run_id, row)
    images = [*images, *extra_images]
    text = render_markdown(title, sections, images) if fmt == "md" else render_html(title, sections, images)
    if fmt == "html" and questions_page is not None:
        page = questions_page(catalog, run_id, target / QUESTIONS_PAGE, f"{title}: questions")
        if page is not None:
            link = f"<p><a href='{QUESTIONS_PAGE}'>Every question: answers, evidence lineage, memory context</a></p>"
            text = text.replace("</h1>", "</h1>" + link, 1)
    path = target / f"report.{fmt}"
    path.write_text(text, encoding="utf-8")
    return path


def _find(metrics: pd.DataFrame, name: str, group: str) -> pd.Series | None:
    hit = metrics[(metrics["name"] == name) & (metrics["group_key"] == group)]
    return None if hit.empty else hit.iloc[0]


def _fmt(value: Any, name: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if name in ("accuracy", "task_averaged_accuracy", "retention", "evidence_retention", "f1"):
        return f"{100 * value:.1f}%"
    if name.startswith("cost"):
        return f"${value:.4f}"
    if name.startswith("compression"):
        return f"{value:.2f}×"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}"


def _ci(row: pd.Series, name: str) -> str:
    lo, hi = row.get("lo"), row.get("hi")
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return ""
    return f"{_fmt(lo, name)} – {_fmt(hi, name)}"


def _missing(row: pd.Series, metrics: pd.DataFrame) -> str:
    """The ``missing`` cell: questions without a score (left out of ``n`` or counted wrong, as
    ``[scoring] on_missing`` says) and, for task-averaged accuracy, the LongMemEval types absent."""
    parts = []
    count = row.get("n_missing")
    if count is not None and not pd.isna(count):
        parts.append(f"{int(count):,}")
    if row["name"] == "task_averaged_accuracy":
        absent = metrics.loc[metrics["name"] == "task_type_absent", "group_key"].tolist()
        if absent:
            parts.append(f"types absent: {', '.join(absent)}")
    return "; ".join(parts)


def _status_label(header: pd.Series) -> str:
    """The status; for an incomplete run one short line (the counts), the errors being listed in
    the Failures section."""
    status = str(header.get("status") or "")
    if status != "incomplete":
        return status
    error = header.get("error")
    first = str(error).strip().splitlines()[0] if isinstance(error, str) and error.strip() else ""
    counts = first.removeprefix(_INCOMPLETE).strip()
    counts = f": {counts}" if counts else ""
    return f"INCOMPLETE{counts} (run the same command again to retry the failed parts)"


_INCOMPLETE = "INCOMPLETE:"
_FAILURE_ROWS = 50


def run_failure_rows(conversations: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """An incomplete run's failures: its failed conversation phases, then its failed answers
    (phase ``answer (<question id>)``), with their errors (columns ``conversation_id``,
    ``phase``, ``error``)."""
    rows = []
    if not conversations.empty and "status" in conversations.columns:
        failed = conversations[conversations["status"] == "failed"].sort_values(["conversation_id", "phase"])
        rows += [(r.conversation_id, r.phase, r.error) for r in failed.itertuples()]
    if not answers.empty and "status" in answers.columns:
        failed = answers[answers["status"] == "failed"].sort_values(["conversation_id", "question_id"])
        rows += [(r.conversation_id, f"answer ({r.question_id})", r.error) for r in failed.itertuples()]
    return pd.DataFrame(rows, columns=["conversation_id", "phase", "error"])


def _failure_section(header: pd.Series, failures: pd.DataFrame | None) -> Section | None:
    if str(header.get("status") or "") != "incomplete":
        return None
    if failures is None:
        failures = _failures_from_error(header.get("error"))
    if failures.empty:
        return None
    rows = [
        [str(r.conversation_id), str(r.phase), " ".join(str(r.error).split()) if isinstance(r.error, str) else ""]
        for r in failures.head(_FAILURE_ROWS).itertuples()
    ]
    if len(failures) > _FAILURE_ROWS:
        rows.append(["", "", f"… and {len(failures) - _FAILURE_ROWS} more"])
    return Section("Failures", ["conversation", "phase", "error"], rows)


def _failures_from_error(error: Any) -> pd.DataFrame:
    """The run row's ``error`` text (``omlab.bench.run.failures.RunFailures.error_text``) as rows:
    each ``  <conversation> <phase>: <error>`` line after the counts."""
    rows = []
    for line in str(error).splitlines()[1:] if isinstance(error, str) else []:
        head, _, detail = line.strip().partition(": ")
        conversation, _, phase = head.partition(" ")
        rows.append((conversation, phase, detail) if phase else ("", "", line.strip()))
    return pd.DataFrame(rows, columns=["conversation_id", "phase", "error"])


def _count(value: Any) -> str:
    return "" if value is None or pd.isna(value) else f"{int(value):,}"


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT:
        return ""
    return str(value)


def _short(spec: Any) -> str:
    return spec if isinstance(spec, str) else json.dumps(spec, separators=(",", ":"))


def _versions(header: pd.Series) -> str:
    dirty = " (dirty)" if header.get("git_dirty") is True else ""
    return (
        f"omlab {header.get('omlab_version')}, litellm {header.get('litellm_version')}, "
        f"duckdb {header.get('duckdb_version')}, git {str(header.get('git_commit') or '')[:10]}{dirty}"
    )


def _protocol_label(header: pd.Series, config: dict[str, Any]) -> str:
    """Which QA protocol and (LoCoMo) F1 aggregation the run used."""
    scoring = config.get("scoring", {})
    wording = scoring.get("protocol_wording")
    if scoring.get("protocol") == "official" and wording:
        source = "omlab's wording" if wording.get("source") == "omlab" else f"wording from {wording.get('source')}"
        label = f"official ({source}, sha256 {str(wording.get('sha256'))[:12]})"
    else:
        label = str(scoring.get("protocol", "omlab"))
    if str(header.get("dataset") or "") == "locomo":
        named = config.get("replay", {}).get("speaker_names")
        label += (
            "; speakers by name (messages, Observer history, actor context)"
            if named
            else "; speakers as user and assistant"
        )
        aggregation = scoring.get("f1_aggregation", "mean")
        how = "per-question F1 rounded to 3 decimals, then averaged" if aggregation == "official" else "mean F1"
        label += f"; F1 aggregation: {aggregation} ({how})"
    verdict = scoring.get("verdict")
    phases = header.get("phases")
    judged = phases is None or (not isinstance(phases, float) and "judge" in list(phases))
    if verdict in VERDICT_RULES and judged:
        label += f"; judge verdicts parsed as {verdict} ({VERDICT_RULES[verdict]})"
    return label


def _dataset_label(header: pd.Series) -> str:
    parts = [str(header.get("dataset") or "")]
    if isinstance(header.get("dataset_subset"), str):
        parts.append(header["dataset_subset"])
    if isinstance(header.get("dataset_sha256"), str):
        parts.append(f"sha256 {header['dataset_sha256'][:12]}")
    return " ".join(parts)


__all__ = [
    "PlotWriter",
    "QuestionsPageWriter",
    "Section",
    "latest_run_id",
    "notebook_markdown",
    "render_html",
    "render_markdown",
    "report_sections",
    "run_failure_rows",
    "write_report",
]

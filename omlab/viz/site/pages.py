"""The run browser's pages as HTML: pure functions of the frames :mod:`omlab.bench.results.browse`
and the getters return (Jinja2 templates under ``templates/``, autoescaped).

Every page function takes ``links`` (:mod:`omlab.viz.site.links`): the live server's routes by
default, or a static site's relative files; the templates link only through it.

Stable hooks for tests and user style sheets: the run list is ``table#runs`` with one
``tr[data-run]`` per run and one ``tbody.sweep[data-sweep]`` per sweep; the filters are
``select#filter-<name>``; questions are ``tr[data-question]``, calls ``tr[data-call]``; the call
page shows ``pre.prompt`` and ``pre#response``; the comparison ``table#config-diff`` and
``table#metric-diff``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from omlab.bench.report.run_index import HEADLINE, format_value
from omlab.bench.results.browse import METRIC_PREFIX
from omlab.viz.questions import CAUSE_LABELS, CSS
from omlab.viz.site.links import LIVE, Links

LIST_FILTERS: tuple[tuple[str, str, str], ...] = (
    ("suite", "suite", "suite"),
    ("config", "configuration", "config_name"),
    ("status", "status", "status"),
    ("tag", "tag", "tags"),
    ("sweep", "sweep", "sweep_id"),
)
"""``(filter, label, run_list column)`` of the run list's select filters."""
_FIXED_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("run_id", "run", False),
    ("suite", "suite", False),
    ("config_name", "configuration", False),
    ("status", "status", False),
    ("tags", "tags", False),
    ("sweep_id", "sweep", False),
    ("started_at", "started (UTC)", False),
    ("duration_s", "duration", True),
)


@dataclass(frozen=True, slots=True)
class ListQuery:
    """What the run list shows: its filters (``""``: none), sort key and direction."""

    suite: str = ""
    config: str = ""
    status: str = ""
    tag: str = ""
    sweep: str = ""
    text: str = ""
    sort: str = "started_at"
    desc: bool = True

    def filters(self) -> dict[str, str]:
        """The filters as :func:`omlab.bench.results.browse.filter_runs` takes them."""
        return {
            "suite": self.suite,
            "config": self.config,
            "status": self.status,
            "tag": self.tag,
            "sweep": self.sweep,
            "text": self.text,
        }

    def href(self, links: Links = LIVE, **changes: Any) -> str:
        """The list's URL with these fields changed (empty fields left out)."""
        values = {**self.filters(), "sort": self.sort, "desc": "1" if self.desc else "0", **changes}
        if isinstance(values["desc"], bool):
            values["desc"] = "1" if values["desc"] else "0"
        return links.runs(**values)


def environment() -> Environment:
    """The templates' Jinja2 environment (HTML autoescaped)."""
    return Environment(loader=PackageLoader("omlab.viz.site", "templates"), autoescape=select_autoescape())


_ENV: Environment | None = None


def render(template: str, links: Links = LIVE, **context: Any) -> str:
    """Render ``template`` with ``context``, linking through ``links``."""
    global _ENV
    if _ENV is None:
        _ENV = environment()
    return _ENV.get_template(template).render(links=links, **context)


def headline_columns(runs: pd.DataFrame) -> list[tuple[str, str, str]]:
    """``(column, label, kind)`` of the headline metrics some listed run has (``omlab runs``'s)."""
    return [
        (f"{METRIC_PREFIX}{name}", label, kind)
        for name, label, kind in HEADLINE
        if f"{METRIC_PREFIX}{name}" in runs and runs[f"{METRIC_PREFIX}{name}"].notna().any()
    ]


def runs_page(
    all_runs: pd.DataFrame,
    shown: pd.DataFrame,
    query: ListQuery,
    *,
    results_dir: str,
    title: str = "Runs",
    links: Links = LIVE,
) -> str:
    """The run list: ``shown`` (filtered and sorted :func:`~omlab.bench.results.browse.run_list`
    rows) with filter options taken from ``all_runs``; a sweep's cells are grouped under it,
    where its first cell falls in the sort order. Each row carries its filter fields and each cell
    its sort value (``data-*``), which a static site's script filters and sorts on."""
    headline = headline_columns(all_runs)
    columns = [{"key": key, "label": label, "numeric": numeric} for key, label, numeric in _FIXED_COLUMNS] + [
        {"key": key, "label": label, "numeric": True} for key, label, _ in headline
    ]
    for column in columns:
        same = column["key"] == query.sort
        column["href"] = query.href(links, sort=column["key"], desc=not query.desc if same else True)
        column["arrow"] = (" ▼" if query.desc else " ▲") if same else ""
    kinds = {key: kind for key, _, kind in headline}
    rows = [_list_row(row, kinds) for row in shown.to_dict("records")]
    filters = [
        {
            "name": name,
            "label": label,
            "value": getattr(query, name),
            "options": _options(all_runs[column], split=name == "tag"),
        }
        for name, label, column in LIST_FILTERS
    ]
    labels = {key: label for key, label, _ in _FIXED_COLUMNS} | {key: label for key, label, _ in headline}
    return render(
        "runs.html",
        links,
        title=title,
        results_dir=results_dir,
        filters=filters,
        text=query.text,
        sort=query.sort,
        desc=query.desc,
        sort_label=labels.get(query.sort, query.sort),
        columns=columns,
        blocks=group_sweeps(rows, query, links),
        shown=len(shown),
        total=len(all_runs),
    )


def group_sweeps(
    rows: Sequence[Mapping[str, Any]], query: ListQuery | None = None, links: Links = LIVE
) -> list[dict[str, Any]]:
    """Rows in blocks: a sweep's rows together (at its first row's place, in their order), every
    other run a block of its own."""
    query = query or ListQuery()
    blocks: list[dict[str, Any]] = []
    sweeps: dict[str, dict[str, Any]] = {}
    for row in rows:
        sweep = row.get("sweep_id") or ""
        if not sweep:
            blocks.append({"sweep_id": "", "rows": [row]})
            continue
        if sweep not in sweeps:
            sweeps[sweep] = {
                "sweep_id": sweep,
                "suite": row.get("suite", ""),
                "rows": [],
                "href": query.href(links, sweep=sweep),
            }
            blocks.append(sweeps[sweep])
        sweeps[sweep]["rows"].append(row)
    return blocks


def run_page(
    header: Mapping[str, Any],
    sections: Sequence[Any],
    questions: pd.DataFrame,
    calls: pd.DataFrame,
    *,
    calls_total: int,
    others: pd.DataFrame,
    results_dir: str,
    question_filters: Mapping[str, str] | None = None,
    links: Links = LIVE,
) -> str:
    """A run: its report sections (``omlab report``'s tables), its questions (linked to their
    page), its model calls (linked to theirs) and a picker of runs to compare it with (``others``)."""
    run_id = str(header["run_id"])
    title = f"{header.get('suite')} [{header.get('config_name')}] · {header.get('status')}"
    chosen = dict(question_filters or {})
    filters = [
        {
            "name": "type",
            "label": "type",
            "value": chosen.get("type", ""),
            "options": _pairs(questions, "question_type"),
        },
        {
            "name": "verdict",
            "label": "verdict",
            "value": chosen.get("verdict", ""),
            "options": [(v, v) for v in ("right", "wrong", "unjudged") if v in set(questions.get("verdict", []))],
        },
        {
            "name": "cause",
            "label": "loss cause",
            "value": chosen.get("cause", ""),
            "options": [
                (c, CAUSE_LABELS.get(c, c))
                for c in sorted({c for c in questions.get("loss_cause", []) if isinstance(c, str)})
            ],
        },
    ]
    sweep = header.get("sweep_id") or ""
    return render(
        "run.html",
        links,
        title=title,
        results_dir=results_dir,
        run_id=run_id,
        sections=[_section(s) for s in sections],
        questions=[_question_row(q) for q in questions.to_dict("records")],
        question_filters=filters,
        calls=_call_rows(calls),
        calls_total=calls_total,
        others=[
            {"run_id": r["run_id"], "label": f"{r['run_id']} · {r['suite']} [{r['config_name']}]"}
            for r in others.to_dict("records")
            if r["run_id"] != run_id
        ],
        sweep_href=ListQuery(sweep=sweep).href(links) if sweep else "",
    )


def question_page(
    run_id: str,
    question_id: str,
    question_html: str,
    calls: pd.DataFrame,
    *,
    results_dir: str,
    whole: bool = False,
    links: Links = LIVE,
) -> str:
    """One question (the per-question view's section) with the model calls made for it; ``whole``:
    the section holds the whole memory context (scrolled to its first evidence line)."""
    return render(
        "question.html",
        links,
        title=f"question {question_id}",
        results_dir=results_dir,
        run_id=run_id,
        question_id=question_id,
        question_html=question_html,
        question_css=CSS,
        whole=whole,
        calls=_call_rows(calls),
        calls_total=len(calls),
    )


def call_page(
    run_id: str,
    call: Mapping[str, Any],
    *,
    prompt: Sequence[Mapping[str, Any]] | None,
    response: str | None,
    results_dir: str,
    links: Links = LIVE,
) -> str:
    """One model call: its row, and its prompt messages and response text when the run holds them."""
    question = _text(call.get("question_id"))
    return render(
        "call.html",
        links,
        title=f"call {call['call_id']}",
        results_dir=results_dir,
        run_id=run_id,
        call_id=str(call["call_id"]),
        role=_text(call.get("role")),
        question_id=question,
        question_href=links.question(run_id, question) if question else "",
        fields=[(name, _cell(call.get(name), name)) for name in call if name not in ("run_id",)],
        prompt=[{"role": _text(m.get("role")), "content": _content(m.get("content"))} for m in prompt or []],
        response=response,
        missing_text="This run holds no text for this call (runs written before results schema 7 do "
        "not, nor do the calls of a prepared memory reused from an earlier run).",
    )


def compare_page(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    config: pd.DataFrame,
    metrics: pd.DataFrame,
    *,
    results_dir: str,
    links: Links = LIVE,
) -> str:
    """Two runs side by side: the settings that differ, and every metric with b − a."""
    rows = []
    for row in metrics.to_dict("records"):
        delta = row["delta"]
        rows.append(
            {
                "name": row["name"],
                "group_key": row["group_key"],
                "a": _number(row["a"], row["name"]),
                "b": _number(row["b"], row["name"]),
                "delta": _signed(delta, row["name"]),
                "css": "" if _missing(delta) or delta == 0 else ("delta-pos" if delta > 0 else "delta-neg"),
            }
        )
    return render(
        "compare.html",
        links,
        title=f"{a['run_id']} vs {b['run_id']}",
        results_dir=results_dir,
        a=a["run_id"],
        b=b["run_id"],
        a_label=f"{a.get('suite')} [{a.get('config_name')}]",
        b_label=f"{b.get('suite')} [{b.get('config_name')}]",
        config=config.to_dict("records"),
        metrics=rows,
    )


def plots_page(run_id: str, images: Sequence[str], *, results_dir: str, links: Links = LIVE, missing: str = "") -> str:
    """A run's plots (PNG file names, under :meth:`Links.plot`); ``missing``: why there are none."""
    return render(
        "plots.html",
        links,
        title=f"plots of {run_id}",
        results_dir=results_dir,
        run_id=run_id,
        images=images,
        missing=missing,
    )


def compare_index_page(pairs: Sequence[tuple[str, str]], *, results_dir: str, links: Links) -> str:
    """A static site's comparisons: a link to each pair written (``a`` sorts first); its script
    opens the pair a form asked for (``?run=A&run=B``) or says it was not written."""
    return render(
        "compare_index.html",
        links,
        title="Comparisons",
        results_dir=results_dir,
        pairs=[{"a": a, "b": b, "href": links.compare(a, b)} for a, b in pairs],
    )


def error_page(title: str, message: str, *, results_dir: str, links: Links = LIVE) -> str:
    """A page saying what went wrong (an unknown run, a bad filter)."""
    return render("error.html", links, title=title, message=message, results_dir=results_dir)


# ---------------------------------------------------------------------------------------- helpers


def _list_row(row: Mapping[str, Any], kinds: Mapping[str, str]) -> dict[str, Any]:
    cells = {
        "run_id": row["run_id"],
        "suite": row["suite"],
        "config_name": row["config_name"],
        "status": row["status"],
        "sweep_id": row["sweep_id"],
        "started_at": "" if _missing(row["started_at"]) else row["started_at"].strftime("%Y-%m-%d %H:%M:%S"),
        "duration_s": _duration(row["duration_s"]),
    }
    sort = {key: _sort_value(row.get(key)) for key in (*cells, "tags")}
    for key, kind in kinds.items():
        value = row.get(key)
        cells[key] = "" if _missing(value) else format_value(float(value), kind)
        sort[key] = _sort_value(value)
    return {
        "run_id": row["run_id"],
        "status": row["status"],
        "problem": row.get("problem") or "",
        "suite": row["suite"],
        "sweep_id": row["sweep_id"],
        "tags": str(row["tags"]),
        "config_name": row["config_name"],
        "tag_list": [t for t in str(row["tags"]).split(",") if t],
        "cells": cells,
        "sort": sort,
    }


def _sort_value(value: Any) -> str:
    """A cell's value as the list's script sorts it: numbers as numbers, times as ISO text
    (which sorts as time), missing as ``""`` (sorted last either way)."""
    if _missing(value):
        return ""
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(float(value))
    return str(value)


def _options(column: pd.Series, *, split: bool = False) -> list[str]:
    values = {str(v) for v in column if isinstance(v, str) and v}
    if split:
        values = {tag for value in values for tag in value.split(",") if tag}
    return sorted(values)


def _pairs(frame: pd.DataFrame, column: str) -> list[tuple[str, str]]:
    values = sorted({str(v) for v in frame.get(column, []) if isinstance(v, str) and v})
    return [(v, v) for v in values]


def _section(section: Any) -> dict[str, Any]:
    return {
        "title": section.title,
        "columns": list(section.columns),
        "rows": [[_cell(v) for v in row] for row in section.rows],
    }


def _question_row(row: Mapping[str, Any]) -> dict[str, Any]:
    f1 = row.get("f1")
    return {
        "question_id": _text(row.get("question_id")),
        "conversation_id": _text(row.get("conversation_id")),
        "question_type": _text(row.get("question_type")),
        "verdict": _text(row.get("verdict")),
        "cause": _text(row.get("cause")),
        "loss_cause": _text(row.get("loss_cause")),
        "f1": "" if _missing(f1) else f"{float(f1):.2f}",
        "question": _text(row.get("question")),
    }


def _call_rows(calls: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {
            "call_id": _text(c.get("call_id")),
            "role": _text(c.get("role")),
            "conversation_id": _text(c.get("conversation_id")),
            "question_id": _text(c.get("question_id")),
            "resolved_model": _text(c.get("resolved_model")) or _text(c.get("requested_model")),
            "tier": _text(c.get("tier")),
            "input_tokens": _cell(c.get("input_tokens")),
            "output_tokens": _cell(c.get("output_tokens")),
            "cost_usd": "" if _missing(c.get("cost_usd")) else f"{float(c['cost_usd']):.5f}",
            "latency_s": "" if _missing(c.get("latency_s")) else f"{float(c['latency_s']):.2f}",
            "cached": "yes" if c.get("cached") is True else "",
            "error": _text(c.get("error")),
        }
        for c in calls.to_dict("records")
    ]


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts: their text, other parts by type
        return "\n".join(
            str(part.get("text", f"[{part.get('type', 'part')}]")) if isinstance(part, Mapping) else str(part)
            for part in value
        )
    return "" if value is None else str(value)


def _cell(value: Any, name: str = "") -> str:
    if _missing(value):
        return ""
    if isinstance(value, pd.Timestamp):
        return value.strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, float):
        return _number(value, name)
    return str(value)


def _number(value: Any, name: str) -> str:
    if _missing(value):
        return ""
    value = float(value)
    if "cost" in name:
        return f"{value:.4f}"
    if value.is_integer():
        return f"{value:,.0f}"
    return f"{value:.3f}"


def _signed(value: Any, name: str) -> str:
    if _missing(value):
        return ""
    text = _number(abs(float(value)), name)
    return ("+" if value > 0 else "−" if value < 0 else "") + text


def _duration(seconds: Any) -> str:
    if _missing(seconds):
        return ""
    seconds = float(seconds)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _text(value: Any) -> str:
    return "" if _missing(value) else str(value)


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    try:
        return isinstance(value, float) and math.isnan(value)
    except TypeError:
        return False


__all__ = [
    "LIST_FILTERS",
    "ListQuery",
    "call_page",
    "compare_index_page",
    "compare_page",
    "environment",
    "error_page",
    "group_sweeps",
    "headline_columns",
    "plots_page",
    "question_page",
    "render",
    "run_page",
    "runs_page",
]

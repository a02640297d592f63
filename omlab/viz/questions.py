"""The per-question view as HTML: why was each question answered right or missed?

Pure: frames in (a run's ``answers_df``, ``lineage_df``, ``lineage_questions_df`` and the
``events_df`` rows the memory is rebuilt from), HTML text out. Used by ``omlab report --format
html`` (``questions.html``) and by the notebook widget
(:mod:`omlab.viz.widgets.questions`), which shows one question at a time.

Each question is a ``<section class="omlab-question">`` (``data-type``, ``data-verdict`` =
``right``/``wrong``/``unjudged``, ``data-cause`` = its loss cause) holding the question, the gold
and model answers, the verdict and F1, each evidence turn's lineage as a small timeline
(``ol.omlab-timeline``), for an evidence line a reflection dropped the line's text beside what
the Reflector wrote instead (``div.omlab-drop`` with ``.omlab-dropped`` and ``.omlab-instead``
lines), and the memory context at question time (the final observation log) with
the lines that carry the evidence marked ``.omlab-evidence``; evidence still unobserved at the end
is shown as the raw message it is in the context, marked the same way. The page shows an excerpt
of the context around the evidence lines (``window`` lines either side); the widget shows it all.
These CSS classes are stable: tests and user style sheets select on them.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from omlab.bench.lineage import LOSS_CAUSES, final_log
from omlab.bench.lineage.drops import DROP_COLUMNS, reflection_drops

CAUSE_LABELS: Mapping[str, str] = {
    "lost_at_observation": "lost at observation",
    "lost_at_reflection": "lost at reflection",
    "present_answered_wrong": "present but answered wrong",
    "present_unjudged": "present (not judged)",
    "answered_right": "answered right",
    "no_evidence": "no evidence cited",
}
CSS = (
    ".omlab-question{border:1px solid #ccc;border-radius:6px;padding:8px 12px;margin:10px 0;font-size:13px}"
    ".omlab-question h3{margin:2px 0 6px 0;font-size:14px}"
    ".omlab-badge{display:inline-block;border-radius:4px;padding:0 6px;margin-left:6px;font-size:12px;"
    "background:#eee}"
    ".omlab-right{background:#d8f0dc}.omlab-wrong{background:#f8d7d7}"
    ".omlab-qa td{padding:1px 8px 1px 0;vertical-align:top;border:none}"
    ".omlab-timeline{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px}"
    ".omlab-timeline li{border:1px solid #bbb;border-radius:10px;padding:0 8px;font-size:12px;background:#fafafa}"
    ".omlab-timeline li.omlab-lost{background:#f8d7d7;border-color:#d99}"
    ".omlab-timeline li.omlab-kept{background:#d8f0dc;border-color:#9c9}"
    ".omlab-context{font-family:monospace;font-size:12px;max-height:360px;overflow:auto;"
    "border:1px solid #ddd;padding:4px;white-space:pre-wrap}"
    ".omlab-line{margin:0}.omlab-gap{color:#888;font-style:italic}"
    ".omlab-evidence{background:#fff3a8;outline:1px solid #e0c000}"
    ".omlab-filters select{margin-right:12px}"
    ".omlab-drop{margin:2px 0 8px 0;padding:4px 8px;border-left:3px solid #d99;background:#fdf6f6;font-size:12px}"
    ".omlab-drop-head{color:#555;margin:2px 0}.omlab-shared{color:#777;font-style:italic;margin-left:6px}"
    ".omlab-dropped,.omlab-instead{font-family:monospace;white-space:pre-wrap;margin:1px 0 1px 8px;padding:1px 4px}"
    ".omlab-dropped{background:#f8d7d7}.omlab-instead{background:#e6eef8}"
)
_FILTER_JS = """
<script>
function omlabFilter(){
  const pick = id => document.getElementById(id).value;
  const t = pick('omlab-f-type'), v = pick('omlab-f-verdict'), c = pick('omlab-f-cause');
  let shown = 0;
  document.querySelectorAll('section.omlab-question').forEach(s => {
    const ok = (!t || s.dataset.type === t) && (!v || s.dataset.verdict === v) && (!c || s.dataset.cause === c);
    s.style.display = ok ? '' : 'none'; shown += ok;
  });
  document.getElementById('omlab-f-count').textContent = shown + ' shown';
}
</script>
"""


@dataclass(frozen=True, slots=True)
class QuestionFrames:
    """What the view reads: one row per question (:func:`question_table`), the lineage rows, the
    final observation log of each conversation and the evidence lines reflections dropped with
    what the Reflector wrote instead (:func:`omlab.bench.lineage.drops.reflection_drops`)."""

    questions: pd.DataFrame
    lineage: pd.DataFrame
    logs: Mapping[str, list[str]]
    drops: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(DROP_COLUMNS)))


def question_table(answers: pd.DataFrame, lineage_questions: pd.DataFrame) -> pd.DataFrame:
    """One row per question: answers joined with loss causes, plus ``verdict`` (``right`` /
    ``wrong`` / ``unjudged``) and the readable ``cause`` label."""
    keep = ["question_id", "conversation_id", "question_type", "question", "gold", "hypothesis"]
    left = answers[[c for c in keep + ["judge_correct", "f1"] if c in answers]].copy()
    right = lineage_questions[
        [c for c in ("question_id", "loss_cause", "n_evidence", "n_in_context", "correct") if c in lineage_questions]
    ]
    table = left.merge(right, on="question_id", how="outer") if len(right) else left.assign(loss_cause=None)
    if "conversation_id" not in table and "conversation_id" in lineage_questions:
        table["conversation_id"] = lineage_questions["conversation_id"]
    verdicts = []
    for judged, correct in zip(
        table.get("judge_correct", pd.Series(pd.NA, index=table.index)),
        table.get("correct", pd.Series(pd.NA, index=table.index)),
        strict=True,
    ):
        value = judged if not pd.isna(judged) else correct
        verdicts.append("unjudged" if pd.isna(value) else "right" if bool(value) else "wrong")
    table["verdict"] = verdicts
    table["cause"] = [CAUSE_LABELS.get(c, "") if isinstance(c, str) else "" for c in table["loss_cause"]]
    return table.sort_values(["conversation_id", "question_id"], na_position="last", ignore_index=True)


def question_frames(
    answers: pd.DataFrame, lineage: pd.DataFrame, lineage_questions: pd.DataFrame, events: pd.DataFrame
) -> QuestionFrames:
    """Assemble the view's frames from a run's getters (events: at least the lineage types)."""
    logs: dict[str, list[str]] = {}
    if len(events):
        for conversation_id, frame in events.groupby("conversation_id", sort=False):
            logs[str(conversation_id)] = final_log(frame.sort_values("seq"))
    drops = reflection_drops(lineage, events)
    return QuestionFrames(question_table(answers, lineage_questions), lineage, logs, drops)


def filter_questions(
    table: pd.DataFrame, *, type: str | None = None, verdict: str | None = None, cause: str | None = None
) -> pd.DataFrame:
    """Rows of :func:`question_table` matching the filters (None: no filter on that field;
    ``cause`` is a ``loss_cause`` value)."""
    keep = pd.Series(True, index=table.index)
    if type:
        keep &= table["question_type"] == type
    if verdict:
        keep &= table["verdict"] == verdict
    if cause:
        keep &= table["loss_cause"] == cause
    return table[keep]


def question_html(frames: QuestionFrames, question_id: str, *, window: int | None = 3) -> str:
    """One question's ``section.omlab-question`` (``window``: context lines shown either side of
    an evidence line; None shows the whole context)."""
    row = frames.questions[frames.questions["question_id"] == question_id]
    if row.empty:
        raise ValueError(f"no question {question_id!r} in this run")
    q = row.iloc[0]
    evidence = frames.lineage[frames.lineage["question_id"] == question_id] if len(frames.lineage) else frames.lineage
    esc = html.escape
    verdict = q["verdict"]
    badge_class = {"right": "omlab-right", "wrong": "omlab-wrong"}.get(verdict, "")
    f1 = q.get("f1")
    opening = (
        f"<section class='omlab-question' data-question='{esc(question_id)}'"
        f" data-type='{esc(_text(q.get('question_type')))}' data-verdict='{esc(verdict)}'"
        f" data-cause='{esc(_text(q.get('loss_cause')))}'>"
    )
    parts = [
        opening,
        f"<h3>{esc(question_id)}<span class='omlab-badge'>{esc(_text(q.get('question_type')))}</span>"
        f"<span class='omlab-badge {badge_class}'>{esc(verdict)}</span>"
        + (f"<span class='omlab-badge'>F1 {float(f1):.2f}</span>" if not _missing(f1) else "")
        + (f"<span class='omlab-badge'>{esc(q['cause'])}</span>" if q.get("cause") else "")
        + "</h3>",
        "<table class='omlab-qa'>"
        + "".join(
            f"<tr><td><b>{label}</b></td><td>{esc(_text(q.get(column)))}</td></tr>"
            for label, column in (("question", "question"), ("gold", "gold"), ("model answer", "hypothesis"))
        )
        + "</table>",
    ]
    drops = frames.drops[frames.drops["question_id"] == question_id] if len(frames.drops) else frames.drops
    shown: dict[tuple[Any, str], str] = {}  # (generation, line) -> the turn it is shown for
    for item in evidence.itertuples():
        parts.append(_timeline(item))
        parts.extend(_drop(drop, shown) for drop in drops[drops["evidence_id"] == item.evidence_id].itertuples())
    log = frames.logs.get(_text(q.get("conversation_id")), [])
    parts.append(_context(log, evidence, window))
    parts.append("</section>")
    return "".join(parts)


def questions_page(frames: QuestionFrames, *, title: str = "Questions", window: int | None = 3) -> str:
    """A self-contained HTML page of every question, with type / verdict / loss-cause filters."""
    esc = html.escape
    table = frames.questions
    options = {
        "omlab-f-type": ("type", sorted({_text(t) for t in table.get("question_type", []) if _text(t)})),
        "omlab-f-verdict": ("verdict", ["right", "wrong", "unjudged"]),
        "omlab-f-cause": ("loss cause", [c for c in LOSS_CAUSES if c in set(table.get("loss_cause", []))]),
    }
    selects = "".join(
        f"<label>{label} <select id='{ident}' onchange='omlabFilter()'><option value=''>all</option>"
        + "".join(f"<option value='{esc(v)}'>{esc(CAUSE_LABELS.get(v, v))}</option>" for v in values)
        + "</select></label>"
        for ident, (label, values) in options.items()
    )
    counts = table["loss_cause"].value_counts() if "loss_cause" in table else pd.Series(dtype="int64")
    summary = ", ".join(f"{CAUSE_LABELS.get(c, c)}: {int(counts[c])}" for c in LOSS_CAUSES if c in counts)
    body = "".join(question_html(frames, qid, window=window) for qid in table["question_id"])
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>"
        f"<style>body{{font-family:sans-serif;margin:2em;max-width:1100px}}{CSS}</style>{_FILTER_JS}</head>"
        f"<body><h1>{esc(title)}</h1><p>{len(table)} questions. {esc(summary)}</p>"
        f"<div class='omlab-filters'>{selects}<span id='omlab-f-count'>{len(table)} shown</span></div>"
        f"{body}</body></html>"
    )


def _timeline(item: Any) -> str:
    esc = html.escape
    stages = [f"<li>turn {esc(_text(item.evidence_id))} · ingested at step {_int(item.ingest_step)}</li>"]
    lines = json.loads(item.lines) if isinstance(item.lines, str) else []
    if _missing(item.cycle_id):
        stages.append("<li>never observed (raw message at the end)</li>")
    else:
        how = (
            "buffered at step " + _int(item.buffered_step) + ", activated"
            if item.cycle_kind == "buffered"
            else "observed"
        )
        match = "by message id" if item.match == "message_id" else "by content"
        stages.append(
            f"<li>{how} at step {_int(item.observed_step)} (gen {_int(item.observed_generation)}, matched {match})</li>"
        )
        if not lines:
            stages.append("<li class='omlab-lost'>no observation line came from it</li>")
        else:
            stages.append(
                f"<li title='{esc(chr(10).join(lines))}'>became {len(lines)} line{'s' * (len(lines) != 1)}</li>"
            )
    generations = json.loads(item.generations) if isinstance(item.generations, str) else []
    for generation in generations:
        fate = generation.get("fate")
        css = " class='omlab-lost'" if fate == "dropped" else ""
        stages.append(f"<li{css}>gen {generation.get('generation')}: {esc(str(fate))}</li>")
    present = bool(item.in_context) if not _missing(item.in_context) else False
    where = f" as {item.in_context_as}" if present and isinstance(item.in_context_as, str) else ""
    css = "omlab-kept" if present else "omlab-lost"
    stages.append(f"<li class='{css}'>at question time: {'in context' + where if present else 'not in context'}</li>")
    return f"<ol class='omlab-timeline'>{''.join(stages)}</ol>"


def _drop(drop: Any, shown: dict[tuple[Any, str], str]) -> str:
    """A dropped evidence line beside what the Reflector wrote instead (``div.omlab-drop``); a
    line already shown for another turn of the question (their lines were merged) is named only."""
    esc = html.escape
    lines = int(drop.generation_lines)
    when = f"gen {_int(drop.generation)} (step {_int(drop.step)})"
    opening = f"<div class='omlab-drop' data-evidence='{esc(_text(drop.evidence_id))}'>"
    first = shown.setdefault((drop.generation, drop.dropped), _text(drop.evidence_id))
    if first != _text(drop.evidence_id):
        note = f"{when} dropped the same line as for turn {first} (above): the two turns' lines had been merged"
        return f"{opening}<div class='omlab-drop-head'>{esc(note)}</div></div>"
    parts = [
        opening,
        f"<div class='omlab-drop-head'>{when} dropped this line:</div>",
        f"<div class='omlab-dropped'>− {esc(drop.dropped)}</div>",
    ]
    if drop.how == "closest":
        head = f"the Reflector wrote instead (closest of the {lines} lines it wrote):"
    elif drop.how == "in_its_place":
        head = f"the Reflector wrote in its place (between the lines it kept around it; {lines} lines in all):"
    else:
        head = f"the Reflector wrote nothing in its place: none of its {lines} lines shares a word with it"
    parts.append(f"<div class='omlab-drop-head'>{esc(head)}</div>")
    for line, shared in zip(drop.instead, drop.shared, strict=True):
        # the words themselves: "jan, 2024" reads as a weak match where a count would not
        note = f"shares {len(shared)} of its {int(drop.n_words)} words: {', '.join(shared)}" if len(shared) else ""
        parts.append(f"<div class='omlab-instead'>+ {esc(line)}<span class='omlab-shared'>{esc(note)}</span></div>")
    parts.append("</div>")
    return "".join(parts)


def _context(log: Sequence[str], evidence: pd.DataFrame, window: int | None) -> str:
    esc = html.escape
    carried: set[str] = set()
    raw: list[str] = []
    for item in evidence.itertuples():
        carried.update(json.loads(item.final_lines) if isinstance(item.final_lines, str) else [])
        if item.in_context_as == "message":
            raw.append(_text(item.evidence_text))
    marked = [i for i, line in enumerate(log) if line in carried]
    if window is None:
        shown = set(range(len(log)))
    else:
        shown = {j for i in marked for j in range(max(0, i - window), min(len(log), i + window + 1))}
    rows: list[str] = []
    previous = -1
    for index in sorted(shown):
        if index > previous + 1:
            rows.append(f"<div class='omlab-gap'>… {index - previous - 1} lines …</div>")
        css = "omlab-line omlab-evidence" if index in marked else "omlab-line"
        rows.append(f"<div class='{css}'>{esc(log[index])}</div>")
        previous = index
    if log and previous < len(log) - 1 and shown:
        rows.append(f"<div class='omlab-gap'>… {len(log) - previous - 1} lines …</div>")
    if not marked:
        note = f"no line of the {len(log)}-line observation log carries this question's evidence"
        rows.insert(0, f"<div class='omlab-gap'>{esc(note)}</div>")
    for text in raw:
        rows.append(f"<div class='omlab-line omlab-evidence'>[unobserved message] {esc(text)}</div>")
    title = f"memory context at question time ({len(log)} observation lines, {len(marked)} carry evidence)"
    return f"<details open><summary>{esc(title)}</summary><div class='omlab-context'>{''.join(rows)}</div></details>"


def _text(value: Any) -> str:
    return "" if _missing(value) else str(value)


def _int(value: Any) -> str:
    return "?" if _missing(value) else str(int(value))


def _missing(value: Any) -> bool:
    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


__all__ = [
    "CAUSE_LABELS",
    "CSS",
    "QuestionFrames",
    "filter_questions",
    "question_frames",
    "question_html",
    "question_table",
    "questions_page",
]

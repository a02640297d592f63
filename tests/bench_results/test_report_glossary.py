"""The report explains its words: metric labels instead of raw names, and a glossary (also in README)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from omlab.bench.report.glossary import GLOSSARY, METRIC_LABELS
from omlab.bench.report.run_report import BLOCKING, COMPRESSION, report_sections

README = Path(__file__).resolve().parents[2] / "README.md"
SNAKE = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)+\b")


def _sections():
    names = [*COMPRESSION, *BLOCKING, "latency_s_p50", "latency_s_p95"]
    metrics = pd.DataFrame(
        [
            {"name": name, "group_key": "all" if "latency" not in name else "role:observer", "value": 1.5, "n": 3}
            for name in names
        ],
    ).assign(lo=None, hi=None, n_missing=None)
    header = pd.Series({"run_id": "R", "status": "finished", "config_json": "{}"})
    return {section.title: section for section in report_sections(header, metrics)}


def test_every_listed_metric_has_a_label():
    assert set(COMPRESSION) | set(BLOCKING) | {"latency_s_p50", "latency_s_p95"} <= set(METRIC_LABELS)


def test_tables_print_labels_not_snake_case_names():
    sections = _sections()
    for title in ("Compression and context size", "Blocking and activations", "Model latency (s, calls actually made)"):
        raw = [row[0] for row in sections[title].rows if SNAKE.match(str(row[0]))]
        assert not raw, f"{title}: raw metric names {raw}"


def test_the_report_and_readme_explain_the_terms_users_asked_about():
    glossary = {term for term, _ in _sections()["Glossary"].rows}
    for term in ("evidence retention", "carry evidence", "generation (gen N)", "compression", "blocked time"):
        assert term in glossary
    readme = README.read_text(encoding="utf-8")
    assert "## Glossary" in readme
    for term, _ in GLOSSARY:
        assert f"**{term}**" in readme, f"README's glossary lacks {term!r}"

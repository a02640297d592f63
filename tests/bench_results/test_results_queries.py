"""``docs/results-queries.md``: every number of ``report.md`` is one DuckDB query over the run file.

Each query of the doc runs on real (small, offline) runs and must give the report's figure (as
displayed) and the ``metrics`` row (at full precision); every figure of the report must have a
query."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import duckdb
import pytest
from bench_runner.suites import write_suite

from omlab.bench.report.run_report import write_report
from omlab.bench.results import metrics_df, runs_df
from omlab.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "results-queries.md"
SAMPLES = ROOT / "datasets" / "samples"
_QUERY = re.compile(r"<!-- report: (.+?) \| (.+?) \| (.+?) -->\n```sql\n(.*?)```", re.DOTALL)
_VIEW = re.compile(r"```sql\n(-- view: .*?)```", re.DOTALL)
_NUMBER = re.compile(r"-?[\d,]*\.?\d+")


def _queries() -> list[tuple[str, str, str, str]]:
    return _QUERY.findall(DOC.read_text(encoding="utf-8"))


def _report_rows(text: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """``{(section, row key): (value cell, n cell[, missing cell])}`` for every table row but the
    Run section's."""
    rows: dict[tuple[str, str], tuple[str, str]] = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:]
            continue
        if not line.startswith("| ") or section in ("Run", "Warnings", "Plots", "Glossary"):
            continue
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        if cells[0] in ("metric", "group", "field"):
            continue
        if section.startswith("Model latency"):
            rows[(section, f"{cells[0]} {cells[1]}")] = (cells[2], cells[3])
        elif section.startswith("Cost by"):
            rows[(section, cells[0])] = (cells[1], cells[3])
            rows[(section, f"{cells[0]} (paid)")] = (cells[2], cells[3])
        elif len(cells) == 5:  # metric, value, 95% CI, n, missing
            rows[(section, cells[0])] = (cells[1], cells[3], cells[4])
        elif len(cells) == 4:
            rows[(section, cells[0])] = (cells[1], cells[3])
        else:
            rows[(section, cells[0])] = (cells[1], cells[2])
    return rows


def _matches(cell: str, value: float) -> bool:
    """Whether ``value`` is what ``cell`` displays (same scale, rounded to the cell's decimals)."""
    found = _NUMBER.search(cell.replace("$", ""))
    assert found, cell
    text = found.group().replace(",", "")
    decimals = len(text.split(".")[1]) if "." in text else 0
    scaled = 100 * value if cell.endswith("%") else value
    return abs(scaled - float(text)) <= 0.5 * 10**-decimals + 1e-9


def _run(folder: Path, suite: Path) -> tuple[Path, str]:
    results = folder / "results"
    assert main(["run", str(suite), "--results", str(results), "--quiet", "--workers", "1"]) == 0
    run_id = runs_df(results)["run_id"].iloc[-1]
    return results, run_id


def _dataset_suite(folder: Path, kind: str, sample: str) -> Path:
    shutil.copy(SAMPLES / sample, folder / sample)
    path = folder / f"{kind}.toml"
    path.write_text(
        f'[suite]\nname = "{kind}-queries"\n[dataset]\nkind = "{kind}"\npath = "{sample}"\n'
        "[engine]\nobservation = { messageTokens = 300, bufferTokens = false }\n"
        "reflection = { observationTokens = 400 }\n"
        '[models.prices]\n"omlab/reader" = { input_per_mtok = 0.15, output_per_mtok = 0.6 }\n'
        '"omlab/judge" = { input_per_mtok = 2.5, output_per_mtok = 10.0 }\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module", params=["synthetic", "locomo", "jsonl"])
def run(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    if request.param == "synthetic":
        suite = write_suite(folder)
    elif request.param == "locomo":
        suite = _dataset_suite(folder, "locomo", "locomo_sample.json")
    else:
        suite = _dataset_suite(folder, "jsonl", "conversations.jsonl")
    results, run_id = _run(folder, suite)
    report = write_report(results, run_id).read_text(encoding="utf-8")
    return results, run_id, report


def test_every_query_gives_the_reports_figure_and_the_stored_metric(run):
    results, run_id, report = run
    rows = _report_rows(report)
    metrics = metrics_df(results, run_id).set_index(["name", "group_key"])
    covered: set[tuple[str, str]] = set()
    connection = duckdb.connect(str(results / "runs" / f"{run_id}.duckdb"), read_only=True)
    try:
        for view in _VIEW.findall(DOC.read_text(encoding="utf-8")):
            connection.execute(view)
        for section, label, metric, sql in _queries():
            name, _, fixed_group = metric.partition(" ")
            result = connection.sql(sql).df()
            for record in result.to_dict("records"):
                key = label if label != "*" else record["key"]
                group = record["group_key"] if label == "*" else fixed_group or "all"
                if (section, key) not in rows:
                    assert (
                        record["value"] is None
                        or record["value"] != record["value"]
                        or name
                        in (
                            "accuracy",
                            "task_averaged_accuracy",
                            "f1",
                            "retention",
                            "evidence_retention",
                            "compression_observation",
                            "compression_observation_per_cycle",
                            "compression_reflection",
                            "compression_reflection_per_cycle",
                            "compression_context",
                        )
                    ), f"{section} / {key}: the query gives a figure the report does not show"
                    continue
                value_cell, n_cell, *missing_cell = rows[(section, key)]
                value = float(record["value"])
                assert _matches(value_cell, value), f"{section} / {key}: query {value!r}, report {value_cell!r}"
                if "n" in record and n_cell:
                    assert int(record["n"]) == int(n_cell.replace(",", "")), f"{section} / {key}: n"
                if "n_missing" in record:
                    shown = missing_cell[0].split(";")[0] if missing_cell else ""
                    assert shown, f"{section} / {key}: the report has no missing count"
                    assert int(record["n_missing"]) == int(shown.replace(",", "")), f"{section} / {key}: missing"
                    stored_missing = metrics.loc[(name, group), "n_missing"]
                    assert int(record["n_missing"]) == int(stored_missing), f"{name} [{group}] n_missing"
                stored = metrics.loc[(name, group), "value"]
                assert value == pytest.approx(stored, rel=1e-12, abs=1e-12), f"{name} [{group}]"
                covered.add((section, key))
    finally:
        connection.close()
    assert set(rows) - covered == set(), "report figures without a query in docs/results-queries.md"


def test_the_doc_names_only_report_sections_that_exist():
    sections = {section for section, _, _, _ in _queries()}
    assert sections == {
        "Headline",
        "Accuracy by question type",
        "F1 by LoCoMo category",
        "Retention by question type",
        "Cost by role, model and tier (USD)",
        "Compression and context size",
        "Blocking and activations",
        "Model latency (s, calls actually made)",
    }


_OFFICIAL = re.compile(
    r'<!-- report \(aggregation = "official"\): (.+?) \| (.+?) \| (.+?) -->\n```sql\n(.*?)```', re.DOTALL
)


def _official_queries() -> list[tuple[str, str, str, str]]:
    return _OFFICIAL.findall(DOC.read_text(encoding="utf-8"))


def test_the_official_f1_queries_round_ties_to_even_as_the_official_script_does():
    """0.0625 and 0.3125 are exact binary ties: Python's round (the official script) keeps the even
    digit, DuckDB's round does not."""
    from omlab.bench.scoring.locomo_protocol import aggregate_f1_values

    values = {"q1": 0.0625, "q2": 0.3125, "q3": 2 / 3, "q4": 0.1875}
    connection = duckdb.connect()
    try:
        connection.execute("CREATE TABLE answers (question_id VARCHAR, question_type VARCHAR, category INTEGER)")
        connection.execute("CREATE TABLE scores (question_id VARCHAR, scorer VARCHAR, value DOUBLE)")
        for question_id, value in values.items():
            connection.execute("INSERT INTO answers VALUES (?, 'single-hop', 4)", [question_id])
            connection.execute("INSERT INTO scores VALUES (?, 'f1', ?)", [question_id, value])
        expected = sum(aggregate_f1_values(values.values(), "official")) / len(values)
        queries = _official_queries()
        assert {(section, label) for section, label, _, _ in queries} == {
            ("Headline", "LoCoMo F1"),
            ("F1 by LoCoMo category", "*"),
        }
        for _, _, _, sql in queries:
            (value,) = connection.sql(sql).df()["value"]
            assert value == expected, sql  # full precision: the same rounded values, the same mean
    finally:
        connection.close()


@pytest.fixture(scope="module")
def official_locomo_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("locomo-official-f1")
    suite = _dataset_suite(folder, "locomo", "locomo_sample.json")
    suite.write_text(suite.read_text(encoding="utf-8") + '[scoring]\naggregation = "official"\n', encoding="utf-8")
    return _run(folder, suite)


def test_the_official_f1_queries_give_the_stored_metrics_at_full_precision(official_locomo_run):
    results, run_id = official_locomo_run
    metrics = metrics_df(results, run_id).set_index(["name", "group_key"])["value"]
    connection = duckdb.connect(str(results / "runs" / f"{run_id}.duckdb"), read_only=True)
    try:
        for _, label, metric, sql in _official_queries():
            for record in connection.sql(sql).df().to_dict("records"):
                group = record["group_key"] if label == "*" else "all"
                assert record["value"] == pytest.approx(metrics[(metric, group)], rel=1e-15, abs=1e-15), group
    finally:
        connection.close()

"""docs/divergences.md stays true to the code: every reference-mode switch has its row, every row its reason."""

from __future__ import annotations

import re
from pathlib import Path

from omlab.engine import reference_mode

DOC = Path(__file__).resolve().parents[2] / "docs" / "divergences.md"


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start : end if end != -1 else len(text)]


def _rows(section: str) -> list[list[str]]:
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[2:]]  # past header and rule


def _label(text: str) -> str:
    return re.sub(r"[`*]", "", text).strip().lower()


def _switches() -> list[str]:
    return [_label(match) for match in re.findall(r"^\* ([^:]+):", reference_mode.__doc__, flags=re.MULTILINE)]


def test_every_reference_mode_switch_has_a_row_in_the_reference_mode_table():
    switches = _switches()
    assert len(switches) >= 11, switches
    rows = [_label(cells[0]) for cells in _rows(_section("## Reference mode"))]
    missing = [switch for switch in switches if not any(row.startswith(switch) for row in rows)]
    assert not missing, f"reference-mode switches without a row in docs/divergences.md: {missing}"
    unknown = [row for row in rows if not any(row.startswith(switch) for switch in switches)]
    assert not unknown, f"rows of the reference-mode table that name no switch of reference_mode.py: {unknown}"


def test_every_divergence_says_what_each_side_does_and_why():
    rows = _rows(DOC.read_text(encoding="utf-8").split("\n## ", 1)[0])
    assert len(rows) >= 20
    short = [cells[0] for cells in rows if len(cells) != 4 or not all(cells)]
    assert not short, f"rows without a reference, an omlab and a why cell: {short}"
    topics = [_label(cells[0]) for cells in rows]
    twice = sorted({topic for topic in topics if topics.count(topic) > 1})
    assert not twice, f"topics with two rows: {twice}"


def test_divergences_name_what_omlab_does_in_the_omlab_column():
    # the reference's own behaviours, as reference_mode.py reproduces them, belong in the reference column
    rows = {_label(cells[0]): cells for cells in _rows(DOC.read_text(encoding="utf-8").split("\n## ", 1)[0])}
    assert "merged" in rows["consecutive assistant messages (not documented before)"][1]
    assert "average" in rows["buffered-reflection slice"][1]
    assert "stranded on the retired record" in rows["buffered chunk on a reflection rollover"][1]
    assert "reflects up front" in rows["order of a step"][1]
    assert "pending count that op started at" in rows["later steps of a turn"][1]

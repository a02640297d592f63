"""What a reflection dropped of the evidence and what the Reflector wrote instead, read back from
the recorded runs' events (``data/golden_runs.json.gz``, see ``test_lineage_golden``).

``data/golden_drops.json`` pins :func:`reflection_drops` on those runs as first computed (the
offline Reflector shortens a line to its opening words, so the line it wrote instead is that
stub, e.g. "Random update …", at the same time). Any change to what the view shows for a
recorded run shows here."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from omlab.bench.lineage import lineage_frames
from omlab.bench.lineage.drops import DROP_COLUMNS, instead_of, reflection_drops
from omlab.bench.lineage.lines import Generation, words
from omlab.bench.lineage.trace import Reflection, reflections
from tests.bench_lineage.test_lineage_golden import CASES, GOLDEN, _answers, _conversation, _table_frame

EXPECTED = Path(__file__).parent / "data" / "golden_drops.json"


@pytest.fixture(scope="module")
def recorded() -> dict:
    golden = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    out = {}
    for case in CASES:
        run = golden[case]
        events = _table_frame(run["events"], "events")
        lineage, _ = lineage_frames(
            [_conversation(c) for c in run["conversations"]],
            _table_frame(run["steps"], "steps"),
            events,
            _answers(run["answers"]),
            n_message_tokens=run["n_message_tokens"],
        )
        out[case] = (lineage, events, reflection_drops(lineage, events))
    return out


def _plain(drops) -> list[dict]:
    return json.loads(drops.to_json(orient="records", force_ascii=False))


@pytest.mark.parametrize("case", CASES)
def test_drops_of_a_recorded_run_are_unchanged(recorded, case):
    _, _, drops = recorded[case]
    assert list(drops.columns) == list(DROP_COLUMNS)
    assert _plain(drops) == json.loads(EXPECTED.read_text(encoding="utf-8"))[case]


@pytest.mark.parametrize("case", CASES)
def test_every_dropped_evidence_row_has_its_lines_and_none_is_carried(recorded, case):
    lineage, events, drops = recorded[case]
    dropped = lineage[lineage["fate"] == "dropped"]
    assert len(dropped) >= 20
    keys = set(zip(drops["question_id"], drops["evidence_id"], strict=True))
    assert keys == set(zip(dropped["question_id"], dropped["evidence_id"], strict=True))
    by_generation = {r.generation: r for r in reflections(events.sort_values("seq"))}
    for drop in drops.itertuples():
        reflection = by_generation[drop.generation]
        assert drop.dropped in reflection.before  # a line the Reflector read
        assert Generation(reflection.after).carriers(drop.dropped) == []  # and did not carry
        assert drop.generation_lines == len(reflection.after)
        assert all(line in reflection.after for line in drop.instead)
        if drop.how == "closest":
            assert drop.shared == [sorted(words(drop.dropped) & words(line)) for line in drop.instead]
            assert all(0 < len(shared) < 0.5 * drop.n_words for shared in drop.shared)


def test_a_line_the_reflector_shortened_is_paired_with_the_stub_it_wrote(recorded):
    _, _, drops = recorded["sync"]
    [row] = drops[(drops["question_id"] == "syn1-q002") & (drops["generation"] == 2)].itertuples()
    assert row.dropped == "* 🔴 (09:30) User stated Random update: they accepted an offer to work as a urban planner."
    assert row.how == "closest"
    assert row.instead[0] == "* 🔴 (09:30) User stated Random update …"  # same time beats more shared words
    assert row.shared[0] == ["random", "update"]


def test_a_line_rewritten_before_it_was_dropped_shows_as_rewritten(recorded):
    lineage, _, drops = recorded["sync"]
    observed = lineage[(lineage["question_id"] == "syn1-q005") & (lineage["dropped_generation"] == 4)]
    assert "Fairphone 5 last week" in json.loads(observed["lines"].iloc[0])[0]
    [row] = drops[(drops["question_id"] == "syn1-q005") & (drops["generation"] == 4)].itertuples()
    assert row.dropped == "* 🔴 (09:19) User stated Something personal … (meaning Jan 1-7, 2024)"


def test_without_a_shared_word_the_lines_written_in_its_place_are_shown():
    reflection = Reflection(
        3,
        before=["* kept alpha beta", "* dog named biscuit", "* kept gamma delta"],
        after=["* kept alpha beta", "* pets discussed briefly", "* kept gamma delta"],
    )
    assert instead_of("* dog named biscuit", reflection) == ("in_its_place", ["* pets discussed briefly"], [[]])
    nothing = Reflection(3, before=reflection.before, after=["* kept alpha beta", "* kept gamma delta"])
    assert instead_of("* dog named biscuit", nothing) == ("none", [], [])


def test_a_run_without_the_reflection_parts_gives_no_rows(recorded):
    lineage, events, _ = recorded["sync"]
    observations_only = events[events["operation_type"] != "reflection"]
    assert reflection_drops(lineage, observations_only).empty
    assert reflection_drops(lineage.iloc[0:0], events).empty

"""The per-question view: the HTML page and the widget state, on a real offline run's frames."""

from __future__ import annotations

import html
import json
import re

import pandas as pd
import pytest

from omlab.bench.run.options import RunOptions
from omlab.bench.run.runner import run_suite
from omlab.viz.questions import filter_questions
from omlab.viz.run_report import write_report
from omlab.viz.widgets.questions_state import QuestionsState

SUITE = """
[suite]
name = "questions"
[dataset]
kind = "synthetic"
seeds = [1]
target_tokens = 12000
n_questions = 12
[engine]
observation = { messageTokens = 1500, bufferTokens = false }
reflection = { observationTokens = 900 }
[cache]
mode = "off"
[run]
workers = 1
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("questions")
    (folder / "s.toml").write_text(SUITE, encoding="utf-8")
    [summary] = run_suite(folder / "s.toml", RunOptions(results_dir=folder / "results", progress=False))
    return folder / "results", summary.run_id


def test_html_report_writes_a_questions_page_with_evidence_highlighted(run):
    results, run_id = run
    report = write_report(results, run_id, fmt="html")
    assert "href='questions.html'" in report.read_text(encoding="utf-8")
    page = (report.parent / "questions.html").read_text(encoding="utf-8")
    sections = re.findall(r"<section class='omlab-question'[^>]*>", page)
    assert len(sections) == 12
    assert all("data-verdict=" in s and "data-cause=" in s and "data-type=" in s for s in sections)
    assert "class='omlab-line omlab-evidence'" in page
    assert "<ol class='omlab-timeline'>" in page and "omlabFilter()" in page


def test_state_filters_by_type_verdict_and_cause(run):
    results, run_id = run
    state = QuestionsState.from_run(results, run_id)
    table = state.frames.questions
    assert len(state.shown()) == len(table) == 12
    cause = table["loss_cause"].iloc[0]
    state.set_filters(cause=cause)
    assert set(state.shown()["loss_cause"]) == {cause}
    assert state.question_id in set(state.shown()["question_id"])
    state.set_filters(cause=None, verdict="right")
    assert set(state.shown()["verdict"]) <= {"right"}
    state.set_filters(verdict=None, type="multi-session")
    assert list(state.shown()["question_id"]) == list(filter_questions(table, type="multi-session")["question_id"])
    with pytest.raises(ValueError, match="cause must be one of"):
        state.set_filters(cause="forgotten")


def test_selected_question_shows_its_whole_context_with_evidence(run):
    results, run_id = run
    state = QuestionsState.from_run(results, run_id)
    present = state.frames.questions[state.frames.questions["n_in_context"] > 0]
    state.select(present["question_id"].iloc[0])
    page = state.html()
    assert "omlab-evidence" in page and "… " not in page.split("omlab-context")[1].split("omlab-evidence")[0]


def test_view_follows_its_dropdowns_and_leaves_a_static_rendering(run):
    from omlab.viz.widgets.questions import QuestionsView

    results, run_id = run
    view = QuestionsView(QuestionsState.from_run(results, run_id))
    cause = view.cause.options[1][1]
    view.cause.value = cause
    assert view.state.cause == cause
    assert all(qid in set(view.state.shown()["question_id"]) for _, qid in view.question.options)
    assert f"data-cause='{cause}'" in view.detail.value
    static = view.static()
    assert static.data.count("<section class='omlab-question'") == len(view.state.shown())


def test_the_live_view_opens_on_the_evidence_not_on_line_one(run):
    from omlab.viz.widgets.questions import QuestionsView

    results, run_id = run
    state = QuestionsState.from_run(results, run_id)
    deep = state.frames.questions[state.frames.questions["n_in_context"] > 0]
    view = QuestionsView(state)
    view.question.value = deep["question_id"].iloc[-1]
    context = view.detail.value.split("omlab-context")[1]
    lines = re.findall(r"<div class='omlab-(line[^']*|gap)'", context)
    first_evidence = next(i for i, css in enumerate(lines) if "omlab-evidence" in css)
    assert first_evidence <= 4, lines[:10]  # at most a gap and three lines of context before it
    view.context.value = "whole log"
    assert view.detail.value == state.html(window=None)
    view.context.value = "around the evidence"
    assert view.detail.value == state.html(window=3)


def test_the_static_copy_is_collapsed_cards_styled_inline(run):
    """JupyterLab drops <style> from HTML it does not trust: the copy carries its styles inline."""
    from omlab.viz.widgets.questions import QuestionsView

    results, run_id = run
    view = QuestionsView(QuestionsState.from_run(results, run_id))
    static = view.static().data
    assert "<style" not in static
    assert static.startswith("<details class='omlab-static'>")
    cards = re.findall(r"<details class='omlab-card'[^>]*>", static)
    assert len(cards) == len(view.state.shown()) and not any(" open" in card for card in cards)
    assert re.search(r"<summary[^>]*><h3 style='display:inline", static), "a card's summary is not its heading"
    for timeline in re.findall(r"<ol class='omlab-timeline'[^>]*>", static):
        assert "list-style:none" in timeline and "display:flex" in timeline
    for chip in re.findall(r"<li[^>]*>", static):
        assert "margin:0 4px 4px 0" in chip
    assert all("text-align:left" in cell for cell in re.findall(r"<td[^>]*>", static))


def test_a_question_lost_at_reflection_shows_the_dropped_line_and_what_the_reflector_wrote(run):
    results, run_id = run
    state = QuestionsState.from_run(results, run_id)
    lost = state.frames.questions[state.frames.questions["loss_cause"] == "lost_at_reflection"]
    assert len(lost), "the suite reflects: some evidence is dropped"
    question_id = lost["question_id"].iloc[0]
    state.set_filters(cause="lost_at_reflection")
    state.select(question_id)
    page = state.html(window=3)
    dropped = state.frames.lineage[
        (state.frames.lineage["question_id"] == question_id) & (state.frames.lineage["fate"] == "dropped")
    ]
    block = page.split("<div class='omlab-drop'", 1)[1].split("<details", 1)[0]
    generation = next(g for g in json.loads(dropped["generations"].iloc[0]) if g["fate"] == "dropped")
    assert f"gen {generation['generation']} (step {generation['step']}) dropped this line" in block
    dropped_text = re.search(r"<div class='omlab-dropped'>− (.*?)</div>", block).group(1)
    assert html.unescape(dropped_text).startswith("* ")  # an observation line, not a chip
    instead = re.findall(r"<div class='omlab-instead'>\+ (.*?)<span class='omlab-shared'>shares (\d+) of its", block)
    assert instead and all(int(shared) > 0 for _, shared in instead)
    assert "the Reflector wrote instead" in block


def test_the_questions_page_and_the_static_copy_show_the_dropped_lines(run):
    from omlab.viz.widgets.questions import QuestionsView

    results, run_id = run
    report = write_report(results, run_id, fmt="html")
    page = (report.parent / "questions.html").read_text(encoding="utf-8")
    lost = page.count("data-cause='lost_at_reflection'")
    assert lost and page.count("<div class='omlab-drop'") >= lost
    view = QuestionsView(QuestionsState.from_run(results, run_id))
    view.cause.value = "lost_at_reflection"
    assert "<div class='omlab-dropped'>" in view.detail.value
    assert "<div class='omlab-dropped'" in view.static().data


def test_a_line_two_turns_were_merged_into_is_shown_once_and_named_for_the_second():
    from omlab.viz.questions import QuestionFrames, question_html

    merged = "* 🔴 (09:25) User stated they donated 2 bags of old clothes"
    questions = pd.DataFrame(
        [{"question_id": "q1", "conversation_id": "c1", "question_type": "multi-session", "verdict": "wrong"}]
    )
    lineage = pd.DataFrame(
        [
            {
                "question_id": "q1",
                "evidence_id": turn,
                "ingest_step": 3,
                "cycle_id": "cy",
                "cycle_kind": "observation",
                "buffered_step": None,
                "observed_step": 4,
                "observed_generation": 0,
                "match": "message_id",
                "lines": json.dumps([line]),
                "generations": json.dumps(
                    [{"generation": 1, "step": 9, "fate": "merged"}, {"generation": 2, "step": 12, "fate": "dropped"}]
                ),
                "final_lines": "[]",
                "evidence_text": "",
                "in_context": False,
                "in_context_as": None,
            }
            for turn, line in (("s1:1", "* donated 2 bags"), ("s2:1", "* donated 14 more bags"))
        ]
    )
    drops = pd.DataFrame(
        [
            {
                "question_id": "q1",
                "evidence_id": turn,
                "generation": 2,
                "step": 12,
                "dropped": merged,
                "n_words": 5,
                "how": "closest",
                "instead": ["* 🔴 (09:25) User stated they donated …"],
                "shared": [["donated"]],
                "generation_lines": 30,
            }
            for turn in ("s1:1", "s2:1")
        ]
    )
    page = question_html(QuestionFrames(questions, lineage, {"c1": []}, drops), "q1")
    assert page.count("<div class='omlab-dropped'>") == 1
    assert "shares 1 of its 5 words: donated" in page
    assert "gen 2 (step 12) dropped the same line as for turn s1:1 (above)" in page

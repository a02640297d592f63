"""ExplorerState: step placement of events, the observation log and the raw messages at every step,
checked against the engine's own state captured step by step."""

from __future__ import annotations

import asyncio
import html
import json
import re
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from omlab import ObservationalMemory
from omlab.bench.datasets import generate_synthetic
from omlab.engine.clock import VirtualClock
from omlab.engine.messages import Message
from omlab.engine.observation_text import MESSAGE_BOUNDARY_RE
from omlab.engine.scheduler import FixedLatency, PerModelLatency, VirtualScheduler
from omlab.viz.simulate import SIMULATION_RUN_ID, engine_options, simulate
from omlab.viz.widgets import ExplorerState
from omlab.viz.widgets.explorer_state import event_steps, log_changes, observation_log, unobserved_suffix
from tests.viz_widgets.samples import SMALL, small_sample, write_simulation

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def lines(text: str) -> list[str]:
    """Non-empty lines, with the engine's message-boundary delimiters taken out."""
    return [line for line in MESSAGE_BOUNDARY_RE.sub("\n\n", text).splitlines() if line.strip()]


@pytest.fixture(scope="module")
def result():
    return simulate(small_sample(), **SMALL)


@pytest.fixture(scope="module")
def truth():
    """The engine's observation log and unobserved message ids after every step (same run)."""
    sample = small_sample()
    options = engine_options(
        buffer_tokens=0.2,
        buffer_activation=0.8,
        block_after=1.2,
        message_tokens=SMALL["message_tokens"],
        observation_tokens=SMALL["observation_tokens"],
    )

    async def run() -> list[tuple[str, list[str]]]:
        clock = VirtualClock(sample.messages[0].created_at)
        seconds = SMALL["observer_latency_s"]
        latency = PerModelLatency({"observer": FixedLatency(seconds), "reflector": FixedLatency(seconds)})
        memory = ObservationalMemory(options, scheduler=VirtualScheduler(clock, latency))
        states = []
        for message in sample.messages:
            clock.set(message.created_at)
            await memory.add_messages("t", [Message.of(message.role, message.text, message.created_at, id=message.id)])
            states.append(
                (await memory.get_observations("t"), [m.id for m in await memory.get_unobserved_messages("t")])
            )
        await memory.finalize("t")
        states.append((await memory.get_observations("t"), [m.id for m in await memory.get_unobserved_messages("t")]))
        return states

    return asyncio.run(run())


@pytest.fixture()
def state(result):
    sample = small_sample()
    explorer = ExplorerState(result, messages={sample.conversation_id: sample.messages})
    explorer.select()
    return explorer


def event(type_: str, operation: str | None = None, observations: str | None = None, ts: datetime = T0) -> dict:
    payload = {} if observations is None else {"observations": observations}
    return {"type": type_, "operation_type": operation, "payload": json.dumps(payload), "ts": ts}


# ---------------------------------------------------------------------------- pure pieces


def test_events_are_placed_on_the_step_their_status_part_closes():
    steps = pd.DataFrame({"step": [1, 2, 3, 4], "ts": [T0] * 4})
    events = pd.DataFrame(
        [
            event("data-om-buffering-start"),
            event("data-om-status"),
            event("data-om-status"),
            event("data-om-activation", "observation"),
            event("data-om-status"),
            event("data-om-observation-end", "observation"),
        ]
    )
    # three status parts close steps 1-3; what follows belongs to the finalize row (step 4)
    assert event_steps(steps, events).tolist() == [1, 1, 2, 3, 3, 4]


def test_events_are_placed_by_time_without_status_parts():
    steps = pd.DataFrame({"step": [1, 2, 3], "ts": [T0, T0 + timedelta(seconds=10), T0 + timedelta(seconds=20)]})
    events = pd.DataFrame(
        [
            event("x", ts=T0 - timedelta(seconds=5)),
            event("x", ts=T0 + timedelta(seconds=10)),
            event("x", ts=T0 + timedelta(seconds=15)),
            event("x", ts=T0 + timedelta(seconds=99)),
        ]
    )
    assert event_steps(steps, events).tolist() == [1, 2, 2, 3]


def test_observation_log_appends_observations_and_reflections_replace():
    events = pd.DataFrame(
        [
            event("data-om-observation-end", "observation", "A"),
            event("data-om-buffering-end", "observation", "not active yet"),
            event("data-om-activation", "observation", "B"),
            event("data-om-observation-end", "reflection", "R"),
            event("data-om-activation", "observation", "C"),
            event("data-om-status"),
        ]
    )
    assert observation_log(events.iloc[:3]) == "A\n\nB"
    assert observation_log(events) == "R\n\nC"
    assert observation_log(events.iloc[0:0]) == ""


def content(texts: list[str]) -> list[str]:
    """``texts`` without the engine's message-boundary delimiter lines."""
    return [text for text in texts if not text.startswith("--- message boundary (")]


def kept(changes) -> list[str]:
    return [line.text for line in changes.lines if line.text.strip() and not line.added]


def test_log_changes_marks_an_appended_chunk_as_added():
    before = "Date: May 1\n* A\n* B"
    changes = log_changes(before, before + "\n\nDate: May 1\n* C\n* D")
    assert changes.added == ("Date: May 1", "* C", "* D")  # the repeated header is the new chunk's
    assert [line.added for line in changes.lines] == [False, False, False, False, True, True, True]
    assert kept(changes) == ["Date: May 1", "* A", "* B"]
    assert changes.removed == ()


def test_log_changes_lists_removed_lines():
    changes = log_changes("* A\n* B\n* C\n* B", "* A\n* C")
    assert changes.added == ()
    assert changes.removed == ("* B", "* B")
    assert kept(changes) == ["* A", "* C"]
    # one copy of a repeated line gone: the later one is reported removed
    assert log_changes("* x\n* y\n* x", "* x\n* y").removed == ("* x",)


def test_log_changes_of_an_unchanged_log_is_empty():
    log = "Date: May 1\n* A\n\n* B"
    changes = log_changes(log, log)
    assert changes.added == () and changes.removed == ()
    assert [line.text for line in changes.lines] == log.splitlines()
    assert log_changes("", "").lines == ()


def test_log_changes_of_a_reflection_that_rewrites_most_lines():
    before = "Date: May 1\n* A likes tea\n* A moved to Lyon\n\nDate: May 2\n* A has a dog\n* A sold the car"
    after = "Date: May 1\n* A likes tea and lives in Lyon\n* A has a dog named Rex"
    changes = log_changes(before, after)
    assert changes.added == ("* A likes tea and lives in Lyon", "* A has a dog named Rex")
    assert kept(changes) == ["Date: May 1"]
    assert changes.removed == ("* A likes tea", "* A moved to Lyon", "Date: May 2", "* A has a dog", "* A sold the car")
    # a line a reflection only moved is kept; whitespace around a line does not matter
    moved = log_changes("* a\n* b", "  * b\n* a ")
    assert moved.added == () and moved.removed == ()


def test_log_changes_from_nothing_adds_every_line_but_blanks():
    changes = log_changes("", "* A\n\n* B")
    assert changes.added == ("* A", "* B")
    assert [line.added for line in changes.lines] == [True, False, True]


def test_unobserved_suffix_is_the_tail_that_adds_up_to_pending():
    messages = [Message.of("user", f"m{i}", T0, id=f"m{i}") for i in range(5)]
    counts = [10, 20, 30, 40, 50]
    # pending = the unobserved messages' counts + 24 (the engine's once-per-conversation overhead)
    assert [m.id for m in unobserved_suffix(messages, counts, 3, 70 + 24)] == ["m2", "m3"]
    assert [m.id for m in unobserved_suffix(messages, counts, 3, 40 + 24)] == ["m3"]
    assert [m.id for m in unobserved_suffix(messages, counts, 4, 0)] == []
    assert [m.id for m in unobserved_suffix(messages, counts, 4, 150 + 24)] == ["m0", "m1", "m2", "m3", "m4"]


# ---------------------------------------------------------------------------- against the engine


def test_observation_text_matches_the_engine_at_every_step(state, truth):
    first, last = state.step_range()
    assert (first, last) == (1, len(truth))
    for step in range(first, last + 1):
        state.set_step(step)
        assert lines(state.observation_text()) == lines(truth[step - 1][0]), f"step {step}"


def test_messages_in_context_match_the_engine_at_every_step(state, truth):
    for step in range(1, len(truth) + 1):
        state.set_step(step)
        in_context = state.messages_in_context()
        assert [m.id for m in in_context] == truth[step - 1][1], f"step {step}"
        counts = small_sample().token_counts
        pending = state.step_row()["pending_tokens"]
        assert sum(counts[m.id] for m in in_context) + (24 if in_context else 0) == pending


def test_observation_changes_follow_the_log_from_step_to_step(state, truth):
    grew = shrank = 0
    for step in range(1, len(truth) + 1):
        state.set_step(step)
        changes = state.observation_changes()
        now = lines(truth[step - 1][0])
        before = lines(truth[step - 2][0]) if step > 1 else []
        assert lines("\n".join(line.text for line in changes.lines)) == now, f"step {step}"
        assert sorted(content(kept(changes) + list(changes.added))) == sorted(now), f"step {step}"
        assert sorted(content(kept(changes) + list(changes.removed))) == sorted(before), f"step {step}"
        if now == before:
            assert changes.added == () and changes.removed == (), f"step {step}"
        grew += bool(changes.added)
        shrank += bool(changes.removed)
    assert grew > 3 and shrank > 0  # observations appended and reflections rewrote the log


def test_previous_and_next_event_steps(state):
    with_events = state.steps_with_events()
    everything = state.events_near(len(state.steps))
    assert with_events == sorted(set(everything["step"].tolist()))
    assert 1 < len(with_events) < len(state.steps)  # most steps only add a message
    first, last = state.step_range()
    assert first not in with_events and last in with_events  # the finalize row observes the rest
    state.set_step(first)
    assert state.previous_event_step() is None
    assert state.next_event_step() == with_events[0]
    i = len(with_events) // 2
    state.set_step(with_events[i])  # on an event step: its neighbours
    assert (state.previous_event_step(), state.next_event_step()) == (with_events[i - 1], with_events[i + 1])
    quiet = next(s for s in range(with_events[i] + 1, last) if s not in with_events)
    state.set_step(quiet)  # between event steps: the ones either side
    before = max(s for s in with_events if s < quiet)
    after = min(s for s in with_events if s > quiet)
    assert (state.previous_event_step(), state.next_event_step()) == (before, after)
    state.set_step(last)
    assert state.next_event_step() is None
    assert state.previous_event_step() == with_events[-2]


def test_events_near_lists_the_window_without_status_parts(state, result):
    state.set_step(60)
    near = state.events_near(3)
    assert near["step"].between(57, 63).all()
    assert not (near["type"] == "data-om-status").any()
    everything = result.events.assign(step=event_steps(result.steps, result.events))
    expected = everything[everything["step"].between(57, 63) & (everything["type"] != "data-om-status")]
    assert near["seq"].tolist() == expected["seq"].tolist()
    assert len(state.events_near(3, include_status=True)) == len(near) + 7  # one status part per step
    with pytest.raises(ValueError, match="window"):
        state.events_near(-1)


def test_timeline_frame_marks_the_selected_step(state):
    state.set_step(42)
    frame = state.timeline_frame()
    assert frame.loc[frame["selected"], "step"].tolist() == [42]
    assert len(frame) == len(small_sample().messages) + 1


# ---------------------------------------------------------------------------- selection


def test_selection_defaults_and_errors(result):
    explorer = ExplorerState(result)
    with pytest.raises(ValueError, match="nothing selected"):
        explorer.observation_text()
    assert explorer.runs()["run_id"].tolist() == [SIMULATION_RUN_ID]
    assert explorer.runs()["label"].tolist() == [f"{SIMULATION_RUN_ID} · finished"]
    explorer.select()
    assert explorer.run_id == SIMULATION_RUN_ID
    assert explorer.conversation_id == small_sample().conversation_id
    assert explorer.step == explorer.step_range()[1]  # starts at the end: the whole memory
    assert explorer.messages_in_context() is None  # no messages given
    with pytest.raises(ValueError, match="outside"):
        explorer.set_step(0)
    with pytest.raises(ValueError, match="no run"):
        explorer.select("nope")
    with pytest.raises(ValueError, match="no conversation"):
        explorer.select(SIMULATION_RUN_ID, "nope")
    with pytest.raises(ValueError, match="needs"):
        ExplorerState({"steps": result.steps})
    with pytest.raises(TypeError, match="source"):
        ExplorerState(42)


def test_reads_runs_from_a_results_directory(tmp_path, result):
    write_simulation(tmp_path, "20250101T000000-aaaaaa", result, "small")
    conversation = generate_synthetic(3, 8_000, n_questions=5, turn_pace=1.0, session_tokens=40_000)
    explorer = ExplorerState(tmp_path, messages=[conversation])
    runs = explorer.runs()
    assert runs["run_id"].tolist() == ["20250101T000000-aaaaaa"]
    assert runs["label"].tolist() == ["20250101T000000-aaaaaa · what-if-tests [small] · finished"]
    explorer.select()
    from_frames = ExplorerState(result)
    from_frames.select()
    for step in (30, 90, len(result.steps)):
        explorer.set_step(step)
        from_frames.set_step(step)
        assert explorer.observation_text() == from_frames.observation_text()
        assert explorer.messages_in_context() is not None
    assert explorer.conversations() == [conversation.id]


def test_runs_are_listed_newest_first_with_suite_and_config(tmp_path, result):
    short = simulate(list(small_sample().messages[:30]), **SMALL)
    for run_id, name in (("20250101T000000-aaaaaa", "oldest"), ("20250102T000000-bbbbbb", "middle")):
        write_simulation(tmp_path, run_id, short, name)
    write_simulation(tmp_path, "20250103T000000-cccccc", short, "newest")
    explorer = ExplorerState(tmp_path)
    runs = explorer.runs()
    assert runs["run_id"].tolist() == ["20250103T000000-cccccc", "20250102T000000-bbbbbb", "20250101T000000-aaaaaa"]
    assert runs["label"].tolist() == [
        "20250103T000000-cccccc · what-if-tests [newest] · finished",
        "20250102T000000-bbbbbb · what-if-tests [middle] · finished",
        "20250101T000000-aaaaaa · what-if-tests [oldest] · finished",
    ]
    explorer.select()
    assert explorer.run_id == "20250103T000000-cccccc"

    from omlab.viz.widgets.explorer import ExplorerView

    view = ExplorerView(explorer)
    assert [label for label, _ in view.run.options] == runs["label"].tolist()
    assert view.run.value == "20250103T000000-cccccc"


def test_runs_from_frames_are_newest_first():
    steps = pd.DataFrame({"run_id": ["20250101T000000-aaaaaa", "20250301T000000-cccccc", "20250201T000000-bbbbbb"]})
    explorer = ExplorerState({"steps": steps, "events": pd.DataFrame()})
    assert explorer.runs()["run_id"].tolist() == [
        "20250301T000000-cccccc",
        "20250201T000000-bbbbbb",
        "20250101T000000-aaaaaa",
    ]


# ---------------------------------------------------------------------------- view


def test_view_follows_the_step_slider(state):
    from omlab.viz.widgets.explorer import ExplorerView

    view = ExplorerView(state)
    assert view.step.min == 1 and view.step.max == len(small_sample().messages) + 1
    assert view.step.value == view.step.max
    end_png, end_text = view.timeline.value, view.observations.value
    assert end_png[:4] == b"\x89PNG"
    view.step.value = 60
    assert state.step == 60
    assert view.timeline.value != end_png  # the step marker moved
    assert view.observations.value != end_text
    assert "step 60:" in view.info.value
    in_context = state.messages_in_context()
    assert f"[{in_context[-1].role}]" in view.messages.value
    assert "data-om-" in view.events.value or "nothing here" in view.events.value


def test_view_switches_runs_and_conversations(tmp_path, result):
    from omlab.viz.widgets.explorer import explore

    short = simulate(list(small_sample().messages[:50]), **SMALL)
    write_simulation(tmp_path, "20250101T000000-aaaaaa", result, "full")
    write_simulation(tmp_path, "20250102T000000-bbbbbb", short, "short")
    view = explore(tmp_path)
    assert view.state.run_id == "20250102T000000-bbbbbb"  # the newest run
    assert view.step.max == 51
    assert "not available" in view.messages.value
    view.run.value = "20250101T000000-aaaaaa"
    assert view.state.run_id == "20250101T000000-aaaaaa"
    assert view.conversation.value == small_sample().conversation_id
    assert view.step.max == len(small_sample().messages) + 1 and view.step.value == view.step.max


def test_view_highlights_added_lines_and_lists_removed_ones(state):
    from omlab.viz.widgets.explorer import ADDED_CLASS, REMOVED_CLASS, ExplorerView

    view = ExplorerView(state)
    seen_added = seen_removed = False
    for step in state.steps_with_events():
        view.step.value = step
        changes = state.observation_changes()
        shown = view.observations.value
        assert shown.count(f"class='{ADDED_CLASS}'") == len(changes.added), f"step {step}"
        assert shown.count(f"class='{REMOVED_CLASS}'") == len(changes.removed), f"step {step}"
        for text in changes.added:
            assert f"class='{ADDED_CLASS}' style='padding-left:6px;border-left:3px solid #2E7D32;" in shown
            assert html.escape(text) in shown
        assert f"+{len(changes.added)}</b> line" in shown
        seen_added |= bool(changes.added)
        seen_removed |= bool(changes.removed)
    assert seen_added and seen_removed
    # a step with no events changes nothing
    quiet = next(s for s in range(1, state.step_range()[1]) if s not in state.steps_with_events())
    view.step.value = quiet
    assert ADDED_CLASS not in view.observations.value and REMOVED_CLASS not in view.observations.value
    assert "no events at this step" in view.info.value


def test_event_buttons_step_through_events_and_stop_at_the_ends(state):
    from omlab.viz.widgets.explorer import ExplorerView

    view = ExplorerView(state)
    with_events = state.steps_with_events()
    first, last = state.step_range()
    assert view.step.value == last
    assert view.next_event.disabled and not view.previous_event.disabled  # at the end
    backward = []
    while not view.previous_event.disabled:
        view.previous_event.click()
        backward.append(view.step.value)
        assert state.step == view.step.value == view.play.value
        assert "events at this step: data-om-" in view.info.value
    assert backward == with_events[-2::-1]
    assert not view.next_event.disabled
    view.step.value = first  # before the first event
    assert view.previous_event.disabled and not view.next_event.disabled
    forward = []
    while not view.next_event.disabled:
        view.next_event.click()
        forward.append(view.step.value)
    assert forward == with_events
    assert view.step.value == last and not view.previous_event.disabled


def test_play_is_linked_to_the_step_slider(tmp_path, result):
    from omlab.viz.widgets.explorer import explore

    short = simulate(list(small_sample().messages[:50]), **SMALL)
    write_simulation(tmp_path, "20250101T000000-aaaaaa", result, "full")
    write_simulation(tmp_path, "20250102T000000-bbbbbb", short, "short")
    view = explore(tmp_path)
    assert (view.play.min, view.play.max, view.play.value) == (1, 51, 51)
    view.play.value = 10  # what the front end sends while playing
    assert view.step.value == 10 and view.state.step == 10
    assert "step 10:" in view.info.value
    view.step.value = 20
    assert view.play.value == 20
    view.run.value = "20250101T000000-aaaaaa"
    assert view.play.max == len(small_sample().messages) + 1 == view.play.value


def test_text_wraps_between_words_only(state):
    from omlab.viz.widgets.explorer import ExplorerView

    view = ExplorerView(state)
    view.step.value = 80
    assert state.observation_text() and state.messages_in_context()
    for name in ("observations", "messages", "events"):
        shown = getattr(view, name).value
        assert "break-all" not in shown and "anywhere" not in shown, name
        # JupyterLab gives a <pre> in an output word-break: break-all: each must undo it
        for pre in re.findall(r"<pre[^>]*>", shown):
            assert "white-space:pre-wrap" in pre and "overflow-wrap:break-word" in pre, name
            assert "word-break:normal" in pre, name
    log_blocks = re.findall(
        r"<div style='([^']*)'>(?:<div class='omlab-log-added'|<div style='padding)", view.observations.value
    )
    assert log_blocks and all(
        "white-space:pre-wrap" in style and "overflow-wrap:break-word" in style and "word-break:normal" in style
        for style in log_blocks
    )
    # event types and cycle ids break at their hyphens in a wrapping table cell
    assert view.events.value.startswith("<div style='white-space:nowrap;overflow-x:auto'>")

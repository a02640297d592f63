"""ExplorerState: step placement of events, the observation log and the raw messages at every step,
checked against the engine's own state captured step by step."""

from __future__ import annotations

import asyncio
import json
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
from omlab.viz.widgets.explorer_state import event_steps, observation_log, unobserved_suffix
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
    assert runs["label"].tolist() == ["small (what-if-tests)"]
    explorer.select()
    from_frames = ExplorerState(result)
    from_frames.select()
    for step in (30, 90, len(result.steps)):
        explorer.set_step(step)
        from_frames.set_step(step)
        assert explorer.observation_text() == from_frames.observation_text()
        assert explorer.messages_in_context() is not None
    assert explorer.conversations() == [conversation.id]


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

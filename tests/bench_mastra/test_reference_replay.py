"""A replay of a recorded production thread with the same settings, ``compat = "reference"``,
reproduces the observation log ``@mastra/memory`` 1.31.0 stored, byte for byte.

The database was written by ``scripts/record_mastra_db.sh`` (Mastra's own engine and
``@mastra/libsql``, a deterministic mock model). The replay reads the thread with the importer,
takes the thresholds from the stored OM record's ``config`` column, runs omlab's replay with the
agent's stepping (``ingest = "turn"``) and the same mock models, and compares the logs.
"""

from __future__ import annotations

import pytest
import recorder_mock

import omlab.bench.run.replay as replay_module
from omlab.bench.datasets.mastra import engine_options_of, load_mastra, read_mastra
from omlab.bench.run.replay import replay_conversation
from omlab.engine.scheduler import FixedLatency
from omlab.llm.client import ModelClient


async def _replay(recorded, monkeypatch, ingest: str):
    imported = read_mastra(recorded, threads="support-1")
    stored = max(imported.om_records, key=lambda r: r["generationCount"])
    options, batches = recorder_mock.mock_models({**engine_options_of(stored), "compat": "reference"})
    engine_class = replay_module.ObservationalMemory

    class CapturingMemory(engine_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            recorder_mock.capture_batches(self, batches)

    monkeypatch.setattr(replay_module, "ObservationalMemory", CapturingMemory)
    _, [conversation] = load_mastra(recorded, threads="support-1")
    result = await replay_conversation(
        conversation,
        options,
        make_client=lambda on_call: ModelClient(on_call=on_call),
        latency=FixedLatency(0.0),
        ingest=ingest,
    )
    log = await result.memory.get_observations(result.thread_id)
    return log, stored, result


async def test_reference_replay_reproduces_the_stored_log_byte_for_byte(recorded, monkeypatch):
    log, stored, result = await _replay(recorded, monkeypatch, "turn")
    assert stored["generationCount"] == 2  # two reflections happened in production
    assert result.rows.steps[-2]["generation"] == 2
    assert log == stored["activeObservations"]


async def test_stepping_at_every_message_observes_elsewhere(recorded, monkeypatch):
    """The agent's stepping matters: stepping after each reply (``ingest = "message"``) observes
    one message earlier and leaves another log."""
    log, stored, _ = await _replay(recorded, monkeypatch, "message")
    assert log != stored["activeObservations"]


@pytest.mark.parametrize("thread", ["support-2", "support-3"])
def test_the_recorded_tool_threads_have_settings_and_a_log(recorded, thread):
    record = read_mastra(recorded, threads=thread).om_records[-1]
    assert engine_options_of(record)["observation"]["messageTokens"] == 3000 and record["activeObservations"]

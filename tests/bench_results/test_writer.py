"""RunWriter: round trips, batching, header-last status, validation, secrets, resume."""

from __future__ import annotations

import json
import multiprocessing
import threading
import time
from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest

from omlab.bench.results import (
    ResultsCatalog,
    ResultsSchemaError,
    RowError,
    RunLockedError,
    RunWriter,
    answers_df,
    calls_df,
    conversations_df,
    events_df,
    metrics_df,
    runs_df,
    scores_df,
    steps_df,
)
from omlab.bench.results.layout import parts_path, run_path

from .samples import T0, crash_mid_run, event_rows, open_writer

RUN = "20240501T093000-abcdef"


def _read(tmp_path, table):
    return ResultsCatalog(tmp_path).read_table(table)


# ---------------------------------------------------------------- round trip


def test_every_table_round_trips(tmp_path):
    paris = timezone(timedelta(hours=2))
    with RunWriter(
        tmp_path,
        RUN,
        provenance={"git_commit": "abc123", "git_dirty": False, "host": "h"},
        run_info={
            "suite": "smoke",
            "config_name": "base",
            "config_hash": "cfg1",
            "config_json": {"observation": {"messageTokens": 30000}},
            "dataset": "longmemeval",
            "dataset_subset": "oracle",
            "dataset_revision": "rev1",
            "dataset_sha256": "f" * 64,
            "phases": ["prepare", "answer"],
            "notes": "n",
        },
    ) as writer:
        writer.add_steps(
            [
                {
                    "conversation_id": "c1",
                    "thread_id": "t1",
                    "step": 0,
                    "ts": T0,
                    "message_id": "m0",
                    "pending_tokens": 1200,
                    "threshold": 30000.0,
                    "observation_tokens": 0,
                    "reflect_threshold": 40000,
                    "block_after": 1.2,
                    "buffered_chunks": 1,
                    "buffered_message_tokens": 600,
                    "generation": 0,
                    "context_tokens": 1500,
                    "blocked_s": 0.25,
                    "observed": True,
                    "activated": np.bool_(True),
                },
                {"conversation_id": "c1", "step": np.int64(1), "ts": T0 + timedelta(seconds=5)},
            ]
        )
        writer.add_events(
            [
                {
                    "conversation_id": "c1",
                    "seq": 7,
                    "ts": datetime(2024, 5, 1, 11, 30, tzinfo=paris),
                    "type": "data-om-activation",
                    "cycle_id": "obs-1",
                    "operation_type": "observation",
                    "triggered_by": "threshold",
                    "tokens_in": 5000,
                    "tokens_out": 700,
                    "duration_ms": 12.5,
                    "record_id": "r1",
                    "thread_id": "t1",
                    "generation": 2,
                    "payload": {"type": "data-om-activation", "data": {"chunksActivated": 2}},
                }
            ]
        )
        writer.add_model_calls(
            [
                {
                    "conversation_id": "c1",
                    "call_id": "call-1",
                    "role": "observer",
                    "requested_model": "omlab/observer",
                    "resolved_model": "omlab/observer",
                    "tier": 8000,
                    "input_tokens": 5000,
                    "output_tokens": 700,
                    "cost_usd": 0.0125,
                    "latency_s": 1.5,
                    "started_at": 1714555800.25,
                    "attempts": 2,
                    "cached": True,
                    "error": None,
                    "cycle_id": "obs-1",
                }
            ]
        )
        writer.add_answers(
            [
                {
                    "conversation_id": "c1",
                    "question_id": "q1",
                    "question_type": "multi-session",
                    "is_abstention": False,
                    "category": 2,
                    "question": "Where?",
                    "gold": "Paris",
                    "hypothesis": "In Paris",
                    "question_date": "2024-05-02T10:00:00+00:00",
                    "context_tokens": 900,
                    "full_history_tokens": 90000,
                    "answer_model": "omlab/reader",
                    "status": "ok",
                    "error": None,
                }
            ]
        )
        writer.add_scores(
            [
                {"question_id": "q1", "scorer": "judge", "correct": True, "details": {"reply": "yes"}},
                {"question_id": "q1", "scorer": "f1", "value": 0.8},
            ]
        )
        writer.add_metrics(
            [
                {"name": "accuracy", "group_key": "multi-session", "value": 0.5, "lo": 0.1, "hi": 0.9, "n": 2},
                {"name": "accuracy", "value": 0.75},
            ]
        )
        writer.mark_conversation(
            "c1",
            "prepare",
            "done",
            started_at=T0,
            finished_at=T0 + timedelta(minutes=1),
            n_messages=40,
            n_message_tokens=12000,
        )

    runs = runs_df(tmp_path)
    assert len(runs) == 1
    run = runs.iloc[0]
    assert (run.run_id, run.suite, run.config_name, run.config_hash) == (RUN, "smoke", "base", "cfg1")
    assert json.loads(run.config_json) == {"observation": {"messageTokens": 30000}}
    assert json.loads(run.phases) == ["prepare", "answer"]
    assert (run.dataset, run.dataset_subset, run.dataset_revision, run.dataset_sha256) == (
        "longmemeval",
        "oracle",
        "rev1",
        "f" * 64,
    )
    assert (run.status, run.git_commit, run.git_dirty, run.host, run.notes) == ("finished", "abc123", False, "h", "n")
    assert pd.isna(run.error)
    assert run.started_at <= run.finished_at

    steps = steps_df(tmp_path)
    assert steps["step"].tolist() == [0, 1]
    first = steps.iloc[0]
    assert (first.pending_tokens, first.threshold, first.reflect_threshold, first.block_after) == (
        1200,
        30000.0,
        40000.0,
        1.2,
    )
    assert (first.buffered_chunks, first.buffered_message_tokens, first.context_tokens, first.blocked_s) == (
        1,
        600,
        1500,
        0.25,
    )
    assert steps["observed"].tolist() == [True, False]
    assert steps["activated"].tolist() == [True, False]
    assert steps["reflected"].tolist() == [False, False]
    assert steps["ts"].tolist() == [pd.Timestamp(T0), pd.Timestamp(T0 + timedelta(seconds=5))]
    assert pd.isna(steps.iloc[1].pending_tokens)

    event = events_df(tmp_path).iloc[0]
    assert event.ts == pd.Timestamp("2024-05-01T09:30:00Z")  # 11:30 at +02:00
    assert (event.seq, event.kind, event.type, event.operation_type, event.triggered_by) == (
        7,
        "data",
        "data-om-activation",
        "observation",
        "threshold",
    )
    assert (event.tokens_in, event.tokens_out, event.duration_ms, event.generation) == (5000, 700, 12.5, 2)
    assert json.loads(event.payload) == {"type": "data-om-activation", "data": {"chunksActivated": 2}}

    call = calls_df(tmp_path).iloc[0]
    assert (call.call_id, call.role, call.tier, call.input_tokens, call.output_tokens) == (
        "call-1",
        "observer",
        8000,
        5000,
        700,
    )
    assert (call.cost_usd, call.latency_s, call.attempts, call.cached) == (0.0125, 1.5, 2, True)
    assert call.started_at == pd.Timestamp("2024-05-01T09:30:00.25Z")

    answer = answers_df(tmp_path).iloc[0]
    assert (answer.question_id, answer.question_type, answer.is_abstention, answer.category) == (
        "q1",
        "multi-session",
        False,
        2,
    )
    assert (answer.gold, answer.hypothesis, answer.context_tokens, answer.full_history_tokens) == (
        "Paris",
        "In Paris",
        900,
        90000,
    )
    assert answer.question_date == pd.Timestamp("2024-05-02T10:00:00Z")
    assert (answer.judge_correct, answer.judge, answer.f1) == (True, 1.0, 0.8)

    scores = scores_df(tmp_path)
    assert scores[["scorer", "value"]].values.tolist() == [["f1", 0.8], ["judge", 1.0]]
    assert json.loads(scores.set_index("scorer").loc["judge", "details"]) == {"reply": "yes"}

    metrics = metrics_df(tmp_path)
    assert metrics[["group_key", "value", "n"]].astype(object).values.tolist() == [
        ["all", 0.75, pd.NA],
        ["multi-session", 0.5, 2],
    ]

    conversation = conversations_df(tmp_path).iloc[0]
    assert (conversation.conversation_id, conversation.phase, conversation.status) == ("c1", "prepare", "done")
    assert (conversation.n_messages, conversation.n_message_tokens) == (40, 12000)
    assert conversation.finished_at - conversation.started_at == pd.Timedelta(minutes=1)


def test_events_get_run_wide_seq_and_kind_when_left_out(tmp_path):
    with open_writer(tmp_path, RUN) as writer:
        writer.add_events([{"type": "data-om-status"}, {"type": "step_progress"}])
        writer.add_events([{"type": "data-om-status", "seq": 10}, {"type": "reflection_complete"}])
    events = events_df(tmp_path)
    assert events["seq"].tolist() == [0, 1, 10, 11]
    assert events["kind"].tolist() == ["data", "debug", "data", "debug"]


# ---------------------------------------------------------------- batching


def _record_appends(monkeypatch):
    appended: list[tuple[str, int]] = []
    original = RunWriter._append_batch

    def recording(self, table, batch):
        appended.append((table, batch.num_rows))
        return original(self, table, batch)

    monkeypatch.setattr(RunWriter, "_append_batch", recording)
    return appended


def test_rows_reach_duckdb_in_batches_not_one_by_one(tmp_path, monkeypatch):
    appended = _record_appends(monkeypatch)
    with open_writer(tmp_path, RUN, flush_rows=5000, flush_seconds=None) as writer:
        for row in event_rows(12_000):  # one row per call: the worst case for a naive writer
            writer.add_events([row])
    assert [n for table, n in appended if table == "events"] == [5000, 5000, 2000]
    assert len(_read(tmp_path, "events")) == 12_000


def test_one_flush_appends_one_batch_per_table(tmp_path, monkeypatch):
    appended = _record_appends(monkeypatch)
    with open_writer(tmp_path, RUN, flush_rows=1000, flush_seconds=None) as writer:
        appended.clear()
        writer.add_steps([{"conversation_id": "c", "step": i} for i in range(300)])
        writer.add_events(event_rows(400))
        writer.add_model_calls([{"role": "observer"} for _ in range(299)])
        assert appended == []  # 999 rows buffered: below flush_rows
        writer.add_answers([{"question_id": "q"}])
        assert sorted(appended) == [("answers", 1), ("events", 400), ("model_calls", 299), ("steps", 300)]


def test_rows_added_together_are_flushed_together(tmp_path, monkeypatch):
    appended = _record_appends(monkeypatch)
    with open_writer(tmp_path, RUN, flush_rows=3, flush_seconds=None) as writer:
        appended.clear()
        # 4 call rows alone would cross flush_rows; the answer still lands in the same flush
        writer.add_together(
            [
                ("model_calls", [{"role": "actor"} for _ in range(4)]),
                ("answers", [{"question_id": "q1", "status": "ok"}]),
            ]
        )
        assert sorted(appended) == [("answers", 1), ("model_calls", 4)]
        assert all(len(call_id) == 32 for call_id in _read(tmp_path, "model_calls")["call_id"])


def test_a_bad_row_keeps_nothing_of_its_unit(tmp_path):
    with open_writer(tmp_path, RUN, flush_rows=10_000, flush_seconds=None) as writer:
        with pytest.raises(RowError, match="answers"):
            writer.add_together(
                [("model_calls", [{"role": "actor"}]), ("answers", [{"question_id": "q1", "context_tokens": "many"}])]
            )
        with pytest.raises(ValueError, match="runs"):
            writer.add_together([("runs", [{"suite": "x"}])])
    assert _read(tmp_path, "model_calls").empty and _read(tmp_path, "answers").empty


def test_flush_seconds_flushes_an_idle_writer(tmp_path):
    with open_writer(tmp_path, RUN, flush_rows=10_000, flush_seconds=0.1) as writer:
        writer.add_events(event_rows(3))
        deadline = time.monotonic() + 5
        while not list((parts_path(tmp_path, RUN) / "events").glob("*.parquet")):
            assert time.monotonic() < deadline, "no background flush within 5 s"
            time.sleep(0.02)
        assert len(_read(tmp_path, "events")) == 3  # read from the live snapshot


def test_threads_can_share_a_writer(tmp_path):
    with open_writer(tmp_path, RUN, flush_rows=700, flush_seconds=0.01) as writer:

        def work(n):
            for batch in range(25):
                writer.add_events(event_rows(100, f"c{n}", start=batch * 100))

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    events = _read(tmp_path, "events")
    assert len(events) == 10_000
    assert sorted(events["seq"]) == list(range(10_000))
    assert events.groupby("conversation_id").size().tolist() == [2500] * 4


# ---------------------------------------------------------------- header-last status


def test_status_is_started_until_close(tmp_path):
    writer = open_writer(tmp_path, RUN)
    live = runs_df(tmp_path).iloc[0]
    assert live.status == "started" and pd.isna(live.finished_at)
    writer.close()
    assert runs_df(tmp_path).iloc[0].status == "finished"
    assert not parts_path(tmp_path, RUN).exists()
    writer.close()  # idempotent


def test_exception_marks_run_failed_and_propagates(tmp_path):
    with pytest.raises(ZeroDivisionError), open_writer(tmp_path, RUN) as writer:
        writer.add_events(event_rows(2))
        raise ZeroDivisionError("division by zero")
    run = runs_df(tmp_path).iloc[0]
    assert run.status == "failed"
    assert run.error == "ZeroDivisionError: division by zero"
    assert len(_read(tmp_path, "events")) == 2  # buffered rows were still flushed


def test_keyboard_interrupt_marks_run_interrupted(tmp_path):
    with pytest.raises(KeyboardInterrupt), open_writer(tmp_path, RUN):
        raise KeyboardInterrupt
    assert runs_df(tmp_path).iloc[0].status == "interrupted"


def test_update_run_sets_header_columns(tmp_path):
    with open_writer(tmp_path, RUN, run_info={"dataset": "d"}) as writer:
        writer.update_run(dataset_sha256="ab" * 32, notes="late")
        with pytest.raises(RowError, match="status"):
            writer.update_run(status="finished")
    run = runs_df(tmp_path).iloc[0]
    assert (run.dataset, run.dataset_sha256, run.notes, run.status) == ("d", "ab" * 32, "late", "finished")


def test_provenance_is_collected_by_default(tmp_path):
    with RunWriter(tmp_path, RUN):
        pass
    run = runs_df(tmp_path).iloc[0]
    assert run.duckdb_version and run.python_version and run.host
    assert run.litellm_version == "1.110.2"


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"type": "x", "colour": "red"}, "unknown column 'colour'"),
        ({"type": "x", "ts": datetime(2024, 1, 1)}, "events.ts must be timezone-aware"),
        ({"type": "x", "tokens_in": "12"}, "events.tokens_in must be an integer, got str"),
        ({"type": "x", "tokens_in": 1.5}, "events.tokens_in must be an integer"),
        ({"type": "x", "tokens_in": 2**63}, "events.tokens_in must be a 64-bit integer"),
        ({"type": "x", "duration_ms": True}, "events.duration_ms must be a number, got bool"),
        ({"type": 3}, "events.type must be a string, got int"),
        ({"seq": 1}, "missing required column 'type'"),
        ({"type": "x", "run_id": "other"}, "run_id 'other'"),
        ({"type": "x", "payload": "{not json"}, "events.payload is a string but not valid JSON"),
    ],
)
def test_bad_rows_are_refused_with_the_column_named(tmp_path, row, message):
    with open_writer(tmp_path, RUN) as writer:
        with pytest.raises(RowError, match=message):
            writer.add_events([row])
        with pytest.raises(TypeError, match="list of row dicts"):
            writer.add_events(row)
    assert len(_read(tmp_path, "events")) == 0


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="flush_rows"):
        RunWriter(tmp_path, RUN, flush_rows=0)
    with pytest.raises(ValueError, match="run_id"):
        RunWriter(tmp_path, "../escape")
    with open_writer(tmp_path, RUN) as writer:
        with pytest.raises(ValueError, match="phase"):
            writer.mark_conversation("c", "observe", "done")
        with pytest.raises(ValueError, match="status"):
            writer.mark_conversation("c", "prepare", "ok")
        with pytest.raises(ValueError, match="closes as one of"):
            writer.close("done")
    with pytest.raises(FileExistsError, match="open_existing"):
        open_writer(tmp_path, RUN)
    with pytest.raises(RuntimeError, match="closed"):
        writer.add_events([{"type": "x"}])


# ---------------------------------------------------------------- secrets


def test_secrets_never_reach_the_file(tmp_path):
    key = "sk-proj-" + "A1b2C3d4" * 4
    config = {
        "model": "openai/gpt-4o",
        "api_key": key,
        "apiKey": key,
        "provider_options": {
            "extra_headers": {"Authorization": f"Bearer {key}", "X-Api-Key": key},
            "access_token": "t",
            "hfToken": "t",
            "client_secret": "s",
            "max_tokens": 50,
            "token_count": 3,
        },
    }
    with open_writer(tmp_path, RUN, run_info={"config_json": config}) as writer:
        writer.add_events(
            [
                {
                    "type": "data-om-observation-end",
                    "payload": {
                        "tokensObserved": 10,
                        "input_tokens": 5,
                        "output_tokens": 2,
                        "token": "secret-ish",
                        "calls": [{"password": "p", "ok": 1}],
                        "text": f"echo {key}",
                    },
                }
            ]
        )
        writer.add_model_calls(
            [{"role": "observer", "error": f"AuthenticationError: Incorrect API key provided: {key}"}]
        )
        writer.add_scores(
            [
                {
                    "question_id": "q",
                    "scorer": "judge",
                    "correct": False,
                    "details": json.dumps({"reply": "no", "headers": {"authorization": "x"}}),
                }
            ]
        )

    stored_config = json.loads(runs_df(tmp_path).iloc[0].config_json)
    assert stored_config == {
        "model": "openai/gpt-4o",
        "provider_options": {"max_tokens": 50, "token_count": 3},  # every header is a credential: all dropped,
    }
    payload = json.loads(events_df(tmp_path).iloc[0].payload)
    assert payload == {
        "tokensObserved": 10,
        "input_tokens": 5,
        "output_tokens": 2,
        "calls": [{"ok": 1}],
        "text": "echo [redacted]",
    }
    assert calls_df(tmp_path).iloc[0].error == "AuthenticationError: Incorrect API key provided: [redacted]"
    assert json.loads(scores_df(tmp_path).iloc[0].details) == {"reply": "no"}  # headers dropped whole
    raw = run_path(tmp_path, RUN).read_bytes()
    assert key.encode() not in raw and b"A1b2C3d4A1b2C3d4" not in raw


# ---------------------------------------------------------------- resume


def _crash(tmp_path):
    process = multiprocessing.get_context("spawn").Process(target=crash_mid_run, args=(str(tmp_path), RUN))
    process.start()
    process.join(60)
    assert process.exitcode == 3


def test_resume_after_a_crash(tmp_path):
    _crash(tmp_path)
    crashed = runs_df(tmp_path).iloc[0]
    assert crashed.status == "started"  # header-last: a crashed run never says finished
    assert len(_read(tmp_path, "events")) == 7  # the 7 unflushed events are lost, nothing else

    with RunWriter.open_existing(tmp_path, RUN, flush_seconds=None) as writer:
        assert writer.completed("prepare") == {"c1"}
        assert writer.completed("answer") == set()
        assert writer.answered_questions() == {"q1"}  # q2 failed: to be answered again

        writer.discard_conversation("c2", "prepare")  # redo c2 from scratch
        live = ResultsCatalog(tmp_path)
        assert live.is_live(RUN)
        assert sorted(live.read_table("steps")["conversation_id"]) == ["c1"] * 3
        writer.add_steps([{"conversation_id": "c2", "step": i} for i in range(2)])
        writer.add_events(event_rows(3, "c2"))
        writer.mark_conversation("c2", "prepare", "done")

        writer.add_answers(
            [
                {"conversation_id": "c1", "question_id": "q2", "hypothesis": "b", "status": "ok"},
                {"conversation_id": "c1", "question_id": "q1", "hypothesis": "a2", "status": "ok"},
            ]
        )
        writer.add_answers([{"conversation_id": "c1", "question_id": "q1", "hypothesis": "a3", "status": "ok"}])
        writer.add_scores([{"question_id": "q1", "scorer": "f1", "value": 0.2}])
        writer.flush()
        writer.add_scores([{"question_id": "q1", "scorer": "f1", "value": 0.9}])
        assert writer.answered_questions() == {"q1", "q2"}
        assert writer.scored_questions("f1") == {"q1"}
        assert writer.completed("prepare") == {"c1", "c2"}
        mid = live.read_table("answers")  # the live snapshot also replaces, never duplicates
        assert mid.set_index("question_id")["hypothesis"].to_dict() == {"q1": "a3", "q2": "b"}

    runs = runs_df(tmp_path)
    assert runs["status"].tolist() == ["finished"]
    answers = answers_df(tmp_path).set_index("question_id")
    assert answers["hypothesis"].to_dict() == {"q1": "a3", "q2": "b"}
    assert answers.loc["q1", "f1"] == 0.9
    assert len(scores_df(tmp_path)) == 1
    events = events_df(tmp_path)
    assert events.groupby("conversation_id").size().to_dict() == {"c1": 4, "c2": 3}
    assert events["seq"].is_unique  # numbering continued after the stored events
    calls = calls_df(tmp_path)
    assert sorted(zip(calls["conversation_id"], calls["role"])) == [
        ("c1", "observer"),
        ("c2", "actor"),
    ]  # c2's observer call was discarded, its actor call kept
    assert sorted(steps_df(tmp_path)["conversation_id"]) == ["c1"] * 3 + ["c2"] * 2


def test_open_existing_refuses_missing_and_locked_runs(tmp_path):
    with pytest.raises(FileNotFoundError, match="no run file"):
        RunWriter.open_existing(tmp_path, RUN)
    with open_writer(tmp_path, RUN), pytest.raises(RunLockedError):
        RunWriter.open_existing(tmp_path, RUN, lock_timeout=0.2)
    reopened = RunWriter.open_existing(tmp_path, RUN)
    assert runs_df(tmp_path).iloc[0].status == "started"
    reopened.close("interrupted")
    run = runs_df(tmp_path).iloc[0]
    assert run.status == "interrupted"
    assert run.started_at < run.finished_at


# ---------------------------------------------------------------- older and newer files


def _set_schema(path, version: int, drop_question_id: bool) -> None:
    import duckdb

    connection = duckdb.connect(str(path))
    try:
        if drop_question_id:
            connection.execute("ALTER TABLE model_calls DROP COLUMN question_id")
        if version < 7:
            connection.execute("DROP TABLE call_texts")
        if version < 6:
            connection.execute("ALTER TABLE model_calls DROP COLUMN routing_tokens")
        if version < 5:
            connection.execute("ALTER TABLE metrics DROP COLUMN n_missing")
        if version < 4:  # columns an older omlab did not write
            connection.execute("ALTER TABLE model_calls DROP COLUMN cost_usd_paid")
            connection.execute("ALTER TABLE runs DROP COLUMN price_map")
        if version < 3:  # tables an older omlab did not create
            connection.execute("DROP TABLE lineage")
            connection.execute("DROP TABLE lineage_questions")
        connection.execute(f"UPDATE omlab_results_schema SET version = {version}")
    finally:
        connection.close()


def test_a_version_1_file_is_read_and_upgraded_when_resumed(tmp_path):
    with open_writer(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_model_calls([{"conversation_id": "c1", "role": "observer"}])
    _set_schema(run_path(tmp_path, RUN), 1, drop_question_id=True)  # as omlab wrote it before

    old = calls_df(tmp_path)
    assert len(old) == 1 and old["question_id"].isna().all()

    with RunWriter.open_existing(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_model_calls([{"conversation_id": "c1", "role": "actor", "question_id": "q1"}])
    calls = calls_df(tmp_path).set_index("role")
    assert calls.loc["actor", "question_id"] == "q1" and pd.isna(calls.loc["observer", "question_id"])


def test_a_version_2_file_reads_without_lineage_and_gets_it_when_resumed(tmp_path):
    from omlab.bench.results import lineage_df

    with open_writer(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_model_calls([{"conversation_id": "c1", "role": "observer"}])
    _set_schema(run_path(tmp_path, RUN), 2, drop_question_id=False)
    assert lineage_df(tmp_path).empty and list(lineage_df(tmp_path).columns)[:3] == [
        "run_id",
        "conversation_id",
        "question_id",
    ]
    with RunWriter.open_existing(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_lineage([{"conversation_id": "c1", "question_id": "q1", "evidence_id": "s1:1", "fate": "kept"}])
    assert list(lineage_df(tmp_path)["fate"]) == ["kept"]


def test_a_version_3_file_derives_the_paid_cost_and_gets_the_column_when_resumed(tmp_path):
    with open_writer(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_model_calls(
            [
                {"conversation_id": "c1", "call_id": "sent", "role": "observer", "cost_usd": 0.5},
                {"conversation_id": "c1", "call_id": "hit", "role": "observer", "cost_usd": 0.25, "cached": True},
            ]
        )
    _set_schema(run_path(tmp_path, RUN), 3, drop_question_id=False)
    # before version 4 a sent call paid its cost_usd and a cached one nothing
    assert calls_df(tmp_path).set_index("call_id")["cost_usd_paid"].to_dict() == {"sent": 0.5, "hit": 0.0}
    with RunWriter.open_existing(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_model_calls([{"conversation_id": "c1", "call_id": "new", "cost_usd": 0.1, "cost_usd_paid": 0.0}])
    paid = calls_df(tmp_path).set_index("call_id")["cost_usd_paid"].to_dict()
    assert paid == {"sent": 0.5, "hit": 0.0, "new": 0.0}


def test_a_version_4_file_reads_metrics_without_n_missing_and_gets_it_when_resumed(tmp_path):
    with open_writer(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_metrics([{"name": "accuracy", "group_key": "all", "value": 0.5, "n": 4}])
    _set_schema(run_path(tmp_path, RUN), 4, drop_question_id=False)
    old = metrics_df(tmp_path)
    assert list(old["value"]) == [0.5] and old["n_missing"].isna().all()
    with RunWriter.open_existing(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_metrics([{"name": "f1", "group_key": "all", "value": 0.25, "n": 3, "n_missing": 1}])
    missing = metrics_df(tmp_path).set_index("name")["n_missing"]
    assert pd.isna(missing["accuracy"]) and missing["f1"] == 1


def test_a_version_5_file_reads_calls_without_routing_tokens_and_gets_them_when_resumed(tmp_path):
    with open_writer(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_model_calls([{"conversation_id": "c1", "call_id": "old", "role": "observer", "tier": 1}])
    _set_schema(run_path(tmp_path, RUN), 5, drop_question_id=False)
    old = calls_df(tmp_path)
    assert list(old["call_id"]) == ["old"] and old["routing_tokens"].isna().all()
    with RunWriter.open_existing(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_model_calls([{"conversation_id": "c1", "call_id": "new", "tier": 1, "routing_tokens": 650}])
    routed = calls_df(tmp_path).set_index("call_id")["routing_tokens"]
    assert pd.isna(routed["old"]) and routed["new"] == 650


def test_a_version_6_file_has_no_call_texts_and_gets_the_table_when_resumed(tmp_path):
    from omlab.bench.results.browse import call_text

    with open_writer(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_model_calls([{"conversation_id": "c1", "call_id": "old", "role": "observer"}])
    _set_schema(run_path(tmp_path, RUN), 6, drop_question_id=False)
    assert call_text(tmp_path, RUN, "old") == (None, None)
    with RunWriter.open_existing(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_together(
            [
                ("model_calls", [{"conversation_id": "c1", "call_id": "new", "role": "actor"}]),
                ("call_texts", [{"conversation_id": "c1", "call_id": "new", "prompt": [], "response": "hi"}]),
            ]
        )
    assert call_text(tmp_path, RUN, "new") == ([], "hi")


def test_a_file_from_a_newer_omlab_is_refused(tmp_path):
    with open_writer(tmp_path, RUN, flush_seconds=None) as writer:
        writer.add_model_calls([{"conversation_id": "c1", "role": "observer"}])
    _set_schema(run_path(tmp_path, RUN), 99, drop_question_id=False)
    with pytest.warns(UserWarning, match="version 99.*upgrade omlab"):
        assert calls_df(tmp_path).empty
    with pytest.raises(ResultsSchemaError, match="upgrade omlab"):
        RunWriter.open_existing(tmp_path, RUN)

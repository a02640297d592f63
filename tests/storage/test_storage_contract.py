"""The storage protocol's contract, checked against every implementation (``store`` fixture)."""

from __future__ import annotations

import random
import threading
from datetime import datetime, timedelta, timezone

import pytest

from omlab.engine.messages import Message, Part
from omlab.engine.storage import Storage

from .samples import at, make_record, make_thread, rich_message, snapshot, text_message


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def test_implements_the_protocol(store):
    assert isinstance(store, Storage)


# ----------------------------------------------------------------- threads


def test_thread_save_get_and_upsert(store):
    assert store.get_thread("t1") is None
    thread = make_thread("t1", om={"currentTask": "plan the trip 🧳"})
    store.save_thread(thread)
    got = store.get_thread("t1")
    assert snapshot(got) == snapshot(thread)

    thread.title = "renamed"
    thread.om["suggestedResponse"] = "ask about dates"
    store.save_thread(thread)
    got = store.get_thread("t1")
    assert got.title == "renamed"
    assert got.om == {"currentTask": "plan the trip 🧳", "suggestedResponse": "ask about dates"}
    assert len(store.list_threads("r1")) == 1


def test_returned_thread_is_a_copy(store):
    store.save_thread(make_thread("t1", om={"currentTask": "a"}))
    got = store.get_thread("t1")
    got.om["currentTask"] = "changed without saving"
    got.title = "nope"
    again = store.get_thread("t1")
    assert again.om["currentTask"] == "a" and again.title == "thread t1"


def test_list_threads_by_resource_ordered_by_creation(store):
    store.save_thread(make_thread("t-late", seconds=50))
    store.save_thread(make_thread("t-b", seconds=10))
    store.save_thread(make_thread("t-a", seconds=10))
    store.save_thread(make_thread("t-other", resource_id="r2", seconds=0))
    store.save_thread(make_thread("t-none", resource_id=None, seconds=0))
    assert [t.id for t in store.list_threads("r1")] == ["t-a", "t-b", "t-late"]
    assert [t.id for t in store.list_threads("r2")] == ["t-other"]
    assert store.list_threads("nobody") == []


# ----------------------------------------------------------------- messages


def test_messages_come_back_ordered_by_created_at_then_id(store):
    store.save_messages([text_message("m3", 3), text_message("m1", 1), text_message("m2b", 2), text_message("m2a", 2)])
    store.save_messages([text_message("m0", 0), text_message("x1", 1, thread_id="t2")])
    assert ids(store.get_messages("t1")) == ["m0", "m1", "m2a", "m2b", "m3"]
    assert ids(store.get_messages("t2")) == ["x1"]
    assert store.get_messages("unknown") == []


def test_after_is_strictly_greater(store):
    store.save_messages([text_message(f"m{i}", i) for i in range(5)])
    assert ids(store.get_messages("t1", after=at(2))) == ["m3", "m4"]
    assert ids(store.get_messages("t1", after=at(2) - timedelta(microseconds=1))) == ["m2", "m3", "m4"]
    assert ids(store.get_messages("t1", after=at(4))) == []
    assert ids(store.get_messages("t1", after=at(-100))) == ["m0", "m1", "m2", "m3", "m4"]


def test_after_accepts_other_offsets_and_naive_utc(store):
    store.save_messages([text_message(f"m{i}", i) for i in range(4)])
    paris = at(1).astimezone(timezone(timedelta(hours=2)))
    assert ids(store.get_messages("t1", after=paris)) == ["m2", "m3"]
    naive = at(1).replace(tzinfo=None)
    assert ids(store.get_messages("t1", after=naive)) == ["m2", "m3"]


def test_limit_takes_the_oldest(store):
    store.save_messages([text_message(f"m{i}", i) for i in range(6)])
    assert ids(store.get_messages("t1", limit=2)) == ["m0", "m1"]
    assert ids(store.get_messages("t1", after=at(2), limit=2)) == ["m3", "m4"]
    assert ids(store.get_messages("t1", limit=100)) == [f"m{i}" for i in range(6)]
    assert store.get_messages("t1", limit=0) == []
    with pytest.raises(ValueError, match="limit"):
        store.get_messages("t1", limit=-1)


def test_upsert_replaces_by_id(store):
    store.save_messages([text_message("m1", 1, "first"), text_message("m2", 2)])
    store.save_messages([text_message("m1", 1, "second")])
    got = store.get_messages("t1")
    assert ids(got) == ["m1", "m2"]
    assert got[0].text == "second"
    assert store.get_message("m1").text == "second"


def test_upsert_moves_a_message_whose_created_at_changed(store):
    store.save_messages([text_message(f"m{i}", i) for i in range(4)])
    store.save_messages([text_message("m0", 10, "moved to the end")])
    assert ids(store.get_messages("t1")) == ["m1", "m2", "m3", "m0"]
    store.save_messages([text_message("m3", 0.5)])
    assert ids(store.get_messages("t1")) == ["m3", "m1", "m2", "m0"]
    assert ids(store.get_messages("t1", after=at(2))) == ["m0"]


def test_upsert_moves_a_message_to_another_thread(store):
    store.save_messages([text_message("m1", 1), text_message("m2", 2)])
    store.save_messages([text_message("m1", 1, thread_id="t2")])
    assert ids(store.get_messages("t1")) == ["m2"]
    assert ids(store.get_messages("t2")) == ["m1"]


def test_large_batch_upserts_like_small_ones(store):
    # big batches take a different write path in DuckDBStorage; the result must not differ
    store.save_messages([text_message(f"m{i:02d}", i) for i in range(40)])
    changed = [text_message(f"m{i:02d}", 100 + i, "moved") for i in range(0, 40, 2)]
    changed += [text_message(f"m{i:02d}", i, thread_id="t2") for i in range(1, 20, 2)]
    store.save_messages(changed)
    got = store.get_messages("t1")
    assert ids(got) == [f"m{i:02d}" for i in range(21, 40, 2)] + [f"m{i:02d}" for i in range(0, 40, 2)]
    assert [m.text for m in got[-20:]] == ["moved"] * 20
    assert ids(store.get_messages("t2")) == [f"m{i:02d}" for i in range(1, 20, 2)]
    assert ids(store.get_messages("t1", after=at(100), limit=3)) == ["m02", "m04", "m06"]


def test_last_duplicate_in_a_batch_wins(store):
    store.save_messages([text_message("m1", 1, "a"), text_message("m1", 5, "b")])
    got = store.get_messages("t1")
    assert ids(got) == ["m1"] and got[0].text == "b" and got[0].created_at == at(5)


def test_empty_batch_is_a_no_op(store):
    store.save_messages([])
    assert store.get_messages("t1") == []


def test_get_message(store):
    store.save_messages([text_message("m1", 1, "hello")])
    assert store.get_message("m1").text == "hello"
    assert store.get_message("missing") is None


def test_random_upserts_match_a_simple_model(store):
    rng = random.Random(7)
    model: dict[str, Message] = {}
    for _ in range(30):
        batch = [
            text_message(
                f"m{rng.randrange(25)}",
                rng.randrange(12),
                f"v{rng.random()}",
                thread_id=rng.choice(["t1", "t2"]),
            )
            for _ in range(rng.randrange(1, 6))
        ]
        store.save_messages(batch)
        for message in batch:
            model[message.id] = message
    for thread_id in ("t1", "t2"):
        expected = sorted((m for m in model.values() if m.thread_id == thread_id), key=lambda m: (m.created_at, m.id))
        got = store.get_messages(thread_id)
        assert ids(got) == ids(expected)
        assert [m.text for m in got] == [m.text for m in expected]
        cursor = at(5)
        assert ids(store.get_messages(thread_id, after=cursor, limit=3)) == ids(
            [m for m in expected if m.created_at > cursor][:3]
        )


def test_message_fidelity_for_every_part_type(store):
    message = rich_message()
    store.save_messages([message])
    assert snapshot(store.get_message(message.id)) == snapshot(message)
    (got,) = store.get_messages("t1")
    assert snapshot(got) == snapshot(message)
    assert got.parts[4].data == message.parts[4].data and isinstance(got.parts[4].data, bytes)
    assert got.parts[2].args["filters"] == {"days": [1, 2, 3], "exact": False}
    assert got.parts[0].text.startswith("Bonjour 👋")


def test_unicode_ids_sort_by_code_point(store):
    store.save_messages([text_message(i, 1) for i in ["é", "z", "Z", "😀", "a"]])
    assert ids(store.get_messages("t1")) == sorted(["é", "z", "Z", "😀", "a"])


# ----------------------------------------------------------------- records


def three_generations() -> list:
    return [
        make_record("rec-0", 0, superseded_by="rec-1"),
        make_record("rec-1", 1, superseded_by="rec-2"),
        make_record("rec-2", 2),
    ]


def test_three_generations_head_and_history(store):
    gen0, gen1, gen2 = three_generations()
    for record in (gen2, gen0, gen1):
        store.save_record(record)
    head = store.get_head_record("thread", "t1", "r1")
    assert head.id == "rec-2" and head.generation_count == 2
    assert snapshot(head) == snapshot(gen2)
    history = store.get_history("thread", "t1", "r1")
    assert [r.id for r in history] == ["rec-0", "rec-1", "rec-2"]
    assert [r.superseded_by for r in history] == ["rec-1", "rec-2", None]
    assert snapshot(history[0]) == snapshot(gen0)


def test_no_record_means_no_head(store):
    assert store.get_head_record("thread", "t1", None) is None
    assert store.get_history("resource", None, "r1") == []


def test_superseded_records_are_never_the_head(store):
    store.save_record(make_record("rec-0", 0))
    store.save_record(make_record("rec-1", 1, superseded_by="rec-x"))
    assert store.get_head_record("thread", "t1", None).id == "rec-0"
    store.save_record(make_record("rec-0", 0, superseded_by="rec-1"))
    assert store.get_head_record("thread", "t1", None) is None
    assert len(store.get_history("thread", "t1", None)) == 2


def test_head_ties_break_on_created_at_then_id(store):
    store.save_record(make_record("rec-b", 3, seconds=10))
    store.save_record(make_record("rec-c", 3, seconds=5))
    store.save_record(make_record("rec-a", 3, seconds=10))
    assert store.get_head_record("thread", "t1", None).id == "rec-c"
    store.clear("thread", "t1", None)
    store.save_record(make_record("rec-b", 3, seconds=10))
    store.save_record(make_record("rec-a", 3, seconds=10))
    assert store.get_head_record("thread", "t1", None).id == "rec-a"
    assert [r.id for r in store.get_history("thread", "t1", None)] == ["rec-a", "rec-b"]


def test_save_record_replaces_by_id(store):
    record = make_record("rec-0", 0)
    store.save_record(record)
    record.active_observations = "* 🟡 (10:00) updated"
    record.observation_token_count = 99
    store.save_record(record)
    history = store.get_history("thread", "t1", None)
    assert len(history) == 1
    assert history[0].active_observations == "* 🟡 (10:00) updated"
    assert history[0].observation_token_count == 99


def test_returned_record_is_a_copy(store):
    store.save_record(make_record("rec-0", 0))
    head = store.get_head_record("thread", "t1", None)
    head.active_observations = "mutated"
    head.buffered_chunks.clear()
    head.config["observation"]["messageTokens"] = 1
    again = store.get_head_record("thread", "t1", None)
    assert again.active_observations.startswith("Date: May 1, 2024")
    assert len(again.buffered_chunks) == 2
    assert again.config["observation"]["messageTokens"] == 30000


def test_saved_record_is_detached_from_the_caller(store):
    record = make_record("rec-0", 0)
    store.save_record(record)
    record.active_observations = "changed after save"
    assert store.get_head_record("thread", "t1", None).active_observations != "changed after save"


def test_scopes_and_keys_do_not_mix(store):
    store.save_record(make_record("thread-t1", 0, thread_id="t1", resource_id="r1"))
    store.save_record(make_record("thread-t2", 0, thread_id="t2", resource_id="r1"))
    store.save_record(make_record("res-r1", 0, scope="resource", thread_id=None, resource_id="r1"))
    store.save_record(make_record("res-r2", 0, scope="resource", thread_id=None, resource_id="r2"))
    assert store.get_head_record("thread", "t1", "r1").id == "thread-t1"
    assert store.get_head_record("thread", "t2", None).id == "thread-t2"
    assert store.get_head_record("resource", None, "r1").id == "res-r1"
    # in resource scope the thread id is not part of the key
    assert store.get_head_record("resource", "t1", "r1").id == "res-r1"
    assert [r.id for r in store.get_history("resource", None, "r2")] == ["res-r2"]


def test_clear_deletes_only_that_keys_records(store):
    store.save_thread(make_thread("t1"))
    store.save_messages([text_message("m1", 1)])
    for record in three_generations():
        store.save_record(record)
    store.save_record(make_record("other", 0, thread_id="t2"))
    store.save_record(make_record("res", 0, scope="resource", thread_id=None, resource_id="r1"))

    store.clear("thread", "t1", "r1")
    assert store.get_head_record("thread", "t1", "r1") is None
    assert store.get_history("thread", "t1", "r1") == []
    assert store.get_head_record("thread", "t2", None).id == "other"
    assert store.get_head_record("resource", None, "r1").id == "res"
    assert store.get_thread("t1") is not None
    assert ids(store.get_messages("t1")) == ["m1"]
    # saving again after a clear starts a fresh history
    store.save_record(make_record("rec-new", 0))
    assert [r.id for r in store.get_history("thread", "t1", None)] == ["rec-new"]


def test_bad_keys_are_rejected(store):
    with pytest.raises(ValueError, match="thread_id"):
        store.get_head_record("thread", None, "r1")
    with pytest.raises(ValueError, match="resource_id"):
        store.get_history("resource", "t1", None)
    with pytest.raises(ValueError, match="unknown record scope 'global'"):
        store.clear("global", "t1", "r1")
    with pytest.raises(ValueError, match="resource-scope record 'bad' has thread_id='t1'"):
        store.save_record(make_record("bad", 0, scope="resource", thread_id="t1"))
    with pytest.raises(ValueError, match="record 'bad2'.*thread_id"):
        store.save_record(make_record("bad2", 0, thread_id=None))


def test_values_json_cannot_hold_are_rejected(store):
    record = make_record("rec-0", 0)
    record.metadata = {"handle": object()}
    with pytest.raises(TypeError, match=r"metadata\['handle'\]"):
        store.save_record(record)
    assert store.get_head_record("thread", "t1", None) is None


def test_concurrent_writers(store):
    def write(worker: int) -> None:
        for i in range(10):
            store.save_messages([text_message(f"w{worker}-{i}", i, thread_id=f"t{worker}")])
            store.save_record(make_record(f"rec-{worker}-{i}", i, thread_id=f"t{worker}"))

    workers = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for w in range(4):
        assert len(store.get_messages(f"t{w}")) == 10
        assert store.get_head_record("thread", f"t{w}", None).id == f"rec-{w}-9"


def test_message_from_parts_constructor_keeps_timezone_normalised(store):
    local = datetime(2024, 5, 1, 11, 30, tzinfo=timezone(timedelta(hours=2)))
    message = Message(id="m", role="user", parts=[Part(type="text", text="x")], created_at=local, thread_id="t1")
    store.save_messages([message])
    got = store.get_message("m")
    assert got.created_at == at(0) and got.created_at.utcoffset() == timedelta(0)

"""What is particular to InMemoryStorage: shared message objects and the sorted index."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.storage import InMemoryStorage

from .samples import at, make_record, text_message


def test_messages_are_shared_not_copied():
    store = InMemoryStorage()
    message = text_message("m1", 1)
    store.save_messages([message])
    assert store.get_message("m1") is message
    assert store.get_messages("t1")[0] is message
    # the returned list is new: changing it does not change the store
    store.get_messages("t1").clear()
    assert len(store.get_messages("t1")) == 1


def test_resaving_a_mutated_message_refiles_it():
    # the store remembers where it filed each message, so an in-place change of created_at
    # followed by a save still leaves one copy in the right place
    store = InMemoryStorage()
    first, second = text_message("m1", 1), text_message("m2", 2)
    store.save_messages([first, second])
    first.created_at = at(3)
    store.save_messages([first])
    assert [m.id for m in store.get_messages("t1")] == ["m2", "m1"]
    assert [m.id for m in store.get_messages("t1", after=at(2))] == ["m1"]


def test_records_are_stored_as_copies():
    store = InMemoryStorage()
    record = make_record("rec-0", 0)
    store.save_record(record)
    assert store.get_head_record("thread", "t1", None) is not record


def test_close_and_context_manager_are_harmless():
    with InMemoryStorage() as store:
        store.save_messages([text_message("m1", 1)])
    store.close()
    assert len(store.get_messages("t1")) == 1
    assert "messages=1" in repr(store)


operations = st.lists(st.tuples(st.integers(0, 15), st.integers(0, 8), st.sampled_from(["t1", "t2"])), max_size=60)


@settings(max_examples=80, deadline=None)
@given(operations, st.integers(-1, 9), st.none() | st.integers(0, 5))
def test_sorted_index_matches_a_full_sort(ops, cursor_seconds, limit):
    store = InMemoryStorage()
    model = {}
    for number, seconds, thread_id in ops:
        message = text_message(f"m{number}", seconds, thread_id=thread_id)
        store.save_messages([message])
        model[message.id] = message
    for thread_id in ("t1", "t2"):
        expected = sorted((m for m in model.values() if m.thread_id == thread_id), key=lambda m: (m.created_at, m.id))
        assert store.get_messages(thread_id) == expected
        cursor = at(cursor_seconds)
        tail = [m for m in expected if m.created_at > cursor]
        assert store.get_messages(thread_id, after=cursor, limit=limit) == (tail if limit is None else tail[:limit])

"""The lookup key of an observation record: which records belong to one memory."""

from __future__ import annotations

from omlab.engine.record import ObservationRecord


def record_key(scope: str, thread_id: str | None, resource_id: str | None) -> tuple[str, str]:
    """Return ``(scope, id)`` for a record lookup.

    Thread scope is keyed by ``thread_id`` (``resource_id`` is ignored); resource scope by
    ``resource_id`` (``thread_id`` is ignored: resource-scope records have none).
    """
    if scope == "thread":
        if not thread_id:
            raise ValueError("thread-scope record lookup needs a thread_id (got None)")
        return scope, thread_id
    if scope == "resource":
        if not resource_id:
            raise ValueError("resource-scope record lookup needs a resource_id (got None)")
        return scope, resource_id
    raise ValueError(f"unknown record scope {scope!r} (expected 'thread' or 'resource')")


def key_of_record(record: ObservationRecord) -> tuple[str, str]:
    """The lookup key of ``record``, checking that its identity fields agree with its scope."""
    if record.scope == "resource" and record.thread_id is not None:
        raise ValueError(
            f"resource-scope record {record.id!r} has thread_id={record.thread_id!r}; "
            "resource-scope records must have thread_id None"
        )
    try:
        return record_key(record.scope, record.thread_id, record.resource_id)
    except ValueError as error:
        raise ValueError(f"record {record.id!r}: {error}") from None

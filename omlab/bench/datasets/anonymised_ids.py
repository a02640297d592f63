"""The anonymised ids a conversation's thread and messages carry inside the engine.

The thread is ``c-<10 hex>`` (a hash of the conversation id, so LongMemEval's ``_abs`` suffix or
``answer_…`` session ids can never reach a model) and messages are ``<thread>-m00042`` in
conversation order. The replay gives them; the lineage maps them back to the dataset's turns.
"""

from __future__ import annotations

import hashlib


def thread_key(conversation_id: str) -> str:
    """The neutral thread id of a conversation: ``c-`` + 10 hex digits of its id's sha256."""
    return "c-" + hashlib.sha256(conversation_id.encode("utf-8")).hexdigest()[:10]


def message_id(thread_id: str, index: int) -> str:
    """The anonymised id of the ``index``-th message (from 1) of thread ``thread_id``."""
    return f"{thread_id}-m{index:05d}"


__all__ = ["message_id", "thread_key"]

"""Where every message of a replayed conversation ended up (raw, pending, or observed with text)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from omlab.bench.results import events_df
from omlab.bench.run.prepared import PreparedStore
from omlab.bench.run.replay import conversation_messages
from omlab.bench.suite.dataset import load_conversations
from omlab.bench.suite.run_settings import PREPARED_DIR, cache_dir
from omlab.bench.suite.suite_file import load_suite

from .fault_server import LOOP_LINE, PHRASE_UNIT

_COMMITS = ("data-om-observation-end", "data-om-buffering-end", "data-om-activation")


@dataclass(slots=True)
class Accounting:
    """Message counts over every conversation of a run (see :func:`account_messages`)."""

    messages: int = 0
    raw: int = 0
    pending: int = 0
    observed: int = 0
    lost: int = 0
    empty_commits: int = 0
    garbage: int = 0
    """Messages committed with the fault server's loop text as their observations."""


def account_messages(suite_path: Path, results: Path, run_id: str) -> Accounting:
    """Every message must be raw (unobserved), pending in a buffered chunk, or behind the head
    record's observation cursor, and every commit that observed messages must carry observation
    text. ``lost`` counts messages in none of the three places; ``empty_commits`` the observation
    ends, buffered chunks and activations that committed messages without any text; ``garbage``
    the messages an observation end or buffered chunk committed with loop text."""
    suite = load_suite(suite_path)
    _, conversations = load_conversations(suite.dataset, suite.base_dir)
    store = PreparedStore(cache_dir(results) / PREPARED_DIR)
    prepared = {}
    for key_file in store.directory.glob("*/*.json.gz"):
        memory = store.load(key_file.name.removesuffix(".json.gz"))
        if memory is not None:
            prepared[memory.thread_id] = memory
    totals = Accounting()
    for conversation in conversations:
        messages = conversation_messages(conversation)
        memory = prepared[messages[0].thread_id]
        head = memory.records[-1]
        raw = {m.id for m in memory.unobserved}
        pending = {mid for chunk in head.buffered_chunks for mid in chunk.message_ids} - raw
        cursor = head.last_observed_at
        observed = {m.id for m in messages if cursor is not None and m.created_at <= cursor} - raw - pending
        totals.messages += len(messages)
        totals.raw += len(raw)
        totals.pending += len(pending)
        totals.observed += len(observed)
        totals.lost += len({m.id for m in messages} - raw - pending - observed)
    events = events_df(results, run_id)
    totals.empty_commits = _empty_commits(events)
    totals.garbage = _garbage_messages(events)
    return totals


_GARBAGE_COMMITS = ("data-om-observation-end", "data-om-buffering-end")


def _garbage_messages(events: pd.DataFrame) -> int:
    messages: set[str] = set()
    for kind, payload in zip(events["type"], events["payload"], strict=True):
        if kind not in _GARBAGE_COMMITS:
            continue
        data = json.loads(payload) if isinstance(payload, str) else (payload or {})
        data = data.get("data", data)
        text = str(data.get("observations") or "")
        if LOOP_LINE in text or PHRASE_UNIT.strip() in text:
            messages.update(data.get("messageIds") or [])
    return len(messages)


def _empty_commits(events: pd.DataFrame) -> int:
    count = 0
    for kind, payload in zip(events["type"], events["payload"], strict=True):
        if kind not in _COMMITS:
            continue
        data = json.loads(payload) if isinstance(payload, str) else (payload or {})
        data = data.get("data", data)
        if (
            data.get("operationType", "observation") == "observation"
            and not str(data.get("observations") or "").strip()
        ):
            count += 1
    return count

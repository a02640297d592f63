"""Print, for every recorded reference trace in tests/fixtures/mastra, how many steps omlab agrees
with ``@mastra/memory`` 1.31.0 on, in the default mode and in ``compat="reference"``.

A step agrees when every field the trace's replay test compares after that message is equal (the
replays and fields of tests/engine/test_mastra_oracle.py, test_mastra_reference_mode.py and
test_mastra_resource_scope.py). Offline and deterministic (the mock models of those tests).

    python scripts/mastra_agreement.py            # all traces
    python scripts/mastra_agreement.py sync_trace # only these
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "engine")]

import test_mastra_oracle as sync_oracle
import test_mastra_resource_scope as resource
from test_mastra_oracle_buffered import replay as buffered_replay
from test_mastra_reference_mode import _actual, _expected

FIXTURES = ROOT / "tests" / "fixtures" / "mastra"
MODES = ("omlab", "reference")


def _sync_pairs(trace: dict[str, Any]) -> list[bool]:
    replayed = asyncio.run(sync_oracle.replay(trace))
    return [
        (
            a.pending_tokens,
            a.observation_tokens,
            a.generation_count,
            a.last_observed_at,
            a.observed_message_ids,
            a.reflections,
        )
        == (
            e["pendingTokens"],
            e["observationTokens"],
            e["generationCount"],
            e["lastObservedAt"],
            e.get("observedMessageIds", []),
            e.get("reflections", []),
        )
        for e, a in zip(trace["steps"], replayed.steps, strict=True)
    ]


def _buffered_pairs(trace: dict[str, Any]) -> list[bool]:
    replayed = asyncio.run(buffered_replay(trace))
    return [_actual(a) == _expected(e) for e, a in zip(trace["steps"], replayed, strict=True)]


def _resource_pairs(trace: dict[str, Any]) -> list[bool]:
    _, steps = asyncio.run(resource.replay_threads(trace))
    return [resource.expected_step(e) == resource.actual_step(a) for e, a in zip(trace["steps"], steps, strict=True)]


def agreement(name: str, mode: str) -> tuple[int, int, int | None]:
    """(steps agreeing, steps, first step that does not agree) for one trace in one mode."""
    trace = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    trace = {**trace, "config": {**trace["config"], "compat": mode}}
    if name == "sync_trace":
        same = _sync_pairs(trace)
    elif trace["config"].get("scope") == "resource":
        same = _resource_pairs(trace)
    else:
        same = _buffered_pairs(trace)
    return sum(same), len(same), next((i for i, ok in enumerate(same) if not ok), None)


def main(argv: list[str]) -> None:
    names = argv or sorted(p.stem for p in FIXTURES.glob("*.json"))
    print(
        "| trace | steps | default mode: agree (first differing step) | reference mode: agree (first differing step) |"
    )
    print("|---|---|---|---|")
    for name in names:
        cells = []
        for mode in MODES:
            agree, total, first = agreement(name, mode)
            cells.append(f"{agree}/{total}" + ("" if first is None else f" (step {first})"))
        print(f"| {name} | {total} | {cells[0]} | {cells[1]} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

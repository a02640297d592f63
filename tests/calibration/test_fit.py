"""Calibration recovers the parameters of a model whose calls were drawn from known ones."""

from __future__ import annotations

import json
import math
import random

import pandas as pd
import pytest

from omlab.bench.calibration.fit import content_tokens_by_cycle, cycle_sizes, fit_role


def _text_of(tokens: int) -> str:
    """Observation text of exactly ``tokens`` tokens (tokenx counts each of these words as one)."""
    return " ".join(["item"] * tokens)


def _served_calls(n: int = 400, *, ratio: float = 5.0, base_s: float = 0.5, output_s: float = 0.01, sigma: float = 0.3):
    rng = random.Random(7)
    calls, events = [], []
    for i in range(n):
        content = rng.randint(200, 2000)
        output = round(content / ratio)
        mean = base_s + output * output_s
        latency = mean * math.exp(rng.gauss(0, sigma) - sigma**2 / 2)
        failed = i % 10 == 0
        calls.append(
            {
                "role": "observer",
                "resolved_model": "openai/served",
                "requested_model": "openai/served",
                "input_tokens": 3000 + content,
                "output_tokens": 0 if failed else output + 12,  # the reply: observations + 12 tokens of hints
                "latency_s": latency,
                "cached": False,
                "error": "boom" if failed else None,
                "attempts": 2 if i % 4 == 1 else 1,
                "cycle_id": f"c{i}",
            }
        )
        events.append(
            {
                "conversation_id": "a",
                "seq": 2 * i,
                "type": "data-om-buffering-start",
                "cycle_id": f"c{i}",
                "tokens_in": content,
                "payload": json.dumps({"tokensToBuffer": content}),
            }
        )
        if not failed:
            events.append(
                {
                    "conversation_id": "a",
                    "seq": 2 * i + 1,
                    "type": "data-om-buffering-end",
                    "cycle_id": f"c{i}",
                    "tokens_in": content + 999,
                    "payload": json.dumps({"observations": _text_of(output)}),
                }
            )
    return pd.DataFrame(calls), pd.DataFrame(events)


def test_fit_recovers_ratio_latency_and_failure_rate():
    calls, events = _served_calls()
    fit = fit_role(calls, cycle_sizes(events), "observer", "openai/served")
    assert fit.calls == 400
    assert fit.failure_rate == pytest.approx(0.1)
    assert fit.retry_rate == pytest.approx(0.25, abs=0.03)
    assert fit.compression is not None and fit.compression_calls == 360
    assert all(r == pytest.approx(5.0, rel=0.02) for r in fit.compression.ratios)
    assert fit.compression.output_tokens(1000) == pytest.approx(200, rel=0.02)
    assert fit.compression.overhead_tokens == 12
    assert fit.latency is not None
    assert fit.latency["base_s"] == pytest.approx(0.5, abs=0.15)
    assert fit.latency["output_s"] == pytest.approx(0.01, rel=0.1)
    assert fit.latency["sigma"] == pytest.approx(0.3, rel=0.15)


def test_content_tokens_come_from_the_first_marker_of_each_cycle():
    _, events = _served_calls(n=3)
    first = content_tokens_by_cycle(events.iloc[::-1])  # order by seq, not by row order
    assert first == {f"c{i}": int(events[events.cycle_id == f"c{i}"].tokens_in.min()) for i in range(3)}
    sizes = cycle_sizes(events)
    assert "c0" not in sizes  # a failed cycle has no end marker
    assert sizes["c1"][0] == first["c1"] and sizes["c1"][1] >= 1


def test_ratio_follows_content_size():
    """A model that compresses long inputs more: the curve's ratio grows with content."""
    rows = [(x, round(x / (2 + x / 500))) for x in range(100, 3000, 10)]
    calls = pd.DataFrame(
        {
            "role": "reflector",
            "resolved_model": "m",
            "requested_model": "m",
            "input_tokens": [x for x, _ in rows],
            "output_tokens": [y for _, y in rows],
            "latency_s": 1.0,
            "cached": False,
            "error": None,
            "attempts": 1,
            "cycle_id": [f"c{x}" for x, _ in rows],
        }
    )
    sizes = {f"c{x}": (x, y) for x, y in rows}
    fit = fit_role(calls, sizes, "reflector", "m")
    sizing = fit.compression
    assert sizing is not None and len(sizing.ratios) > 2
    assert list(sizing.ratios) == sorted(sizing.ratios)
    for x in (400, 1500, 2500):
        assert sizing.output_tokens(x) == pytest.approx(x / (2 + x / 500), rel=0.1)

"""Fit a model profile from a run's model calls (and the engine markers that say what each call
was given to compress).

Per role and answering model:

* **compression**: one pair per cycle (observation or reflection) the model answered: the
  content it was given, the first token count its markers report (``tokensToObserve`` /
  ``tokensToBuffer``: message tokens observed, or observation tokens reflected), and the tokens
  of the observation text the cycle produced (its ``data-om-observation-end`` /
  ``data-om-buffering-end`` marker's ``observations``: what the engine keeps, without the
  continuation hints and wrapper a call's output also holds; for a synchronous reflection, the log
  it left). Sorted by content and cut into up to :data:`MAX_BINS` bins of at least
  :data:`MIN_BIN_CALLS` cycles; each bin gives one point (median content, Σ content / Σ
  observation tokens), so the curve keeps the total it was fitted on. This is the compression
  ratio of the reports and of Mastra's markers. ``overhead_tokens`` is the median of what a reply
  holds beyond that text (its wrapper and continuation hints).
* **latency**: least squares of ``latency = base_s + input × input_s + output × output_s`` on the
  provider's reported usage, coefficients kept >= 0 (a negative one is dropped and the rest
  refitted); ``sigma`` is the spread of log(measured / fitted).
* **failures**: the share of calls that failed after every retry, and of calls that needed
  more than one attempt.

Response-cache hits and failed calls are left out of the size and latency fits (a cache hit's
latency is a lookup's).
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd

from omlab.bench.calibration.profile import RoleFit
from omlab.llm.offline.sizing import OutputSizing
from omlab.tokens.tokenx import estimate_token_count

MAX_BINS = 6
MIN_BIN_CALLS = 8
END_MARKERS = ("data-om-observation-end", "data-om-buffering-end")


class CalibrationError(ValueError):
    """A run that cannot be calibrated (names the run and the role)."""


def content_tokens_by_cycle(events: pd.DataFrame) -> dict[str, int]:
    """``{cycle_id: content tokens}``: the first ``tokens_in`` each cycle's markers report."""
    if events.empty or "cycle_id" not in events:
        return {}
    marked = events[events["cycle_id"].notna() & events["tokens_in"].notna()]
    if "seq" in marked:
        marked = marked.sort_values(["conversation_id", "seq"])
    first = marked.drop_duplicates("cycle_id", keep="first")
    return {str(c): int(t) for c, t in zip(first["cycle_id"], first["tokens_in"], strict=True)}


def cycle_sizes(events: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """``{cycle_id: (content tokens, observation tokens)}`` of every cycle whose end marker holds
    its observation text (see the module docstring)."""
    content = content_tokens_by_cycle(events)
    if not content:
        return {}
    ends = events[events["type"].isin(END_MARKERS) & events["cycle_id"].isin(list(content))]
    sizes = {}
    for cycle, payload in zip(ends["cycle_id"], ends["payload"], strict=True):
        data = json.loads(payload) if isinstance(payload, str) else payload
        text = data.get("observations") if isinstance(data, dict) else None
        if isinstance(text, str) and text.strip():
            sizes[str(cycle)] = (content[str(cycle)], estimate_token_count(text))
    return sizes


def fit_role(
    calls: pd.DataFrame, sizes: dict[str, tuple[int, int]], role: str, model: str, source: str = ""
) -> RoleFit:
    """The :class:`RoleFit` of ``calls`` (one role, one model); ``sizes`` from :func:`cycle_sizes`."""
    total = len(calls)
    failed = calls["error"].notna()
    attempts = pd.to_numeric(calls["attempts"], errors="coerce").fillna(1)
    usable = calls[~failed & ~calls["cached"].fillna(False).astype(bool)]
    usable = usable[pd.to_numeric(usable["output_tokens"], errors="coerce").fillna(0) > 0]
    output = pd.to_numeric(usable["output_tokens"], errors="coerce").to_numpy(dtype=float)
    sizing, sized_cycles = _compression(usable, sizes)
    if sizing is not None:
        sizing = replace(sizing, overhead_tokens=_overhead(usable, sizes))
    return RoleFit(
        role=role,
        model=model,
        calls=total,
        compression=sizing,
        compression_calls=sized_cycles,
        output_tokens=_quantiles(output),
        latency=_latency(usable),
        failure_rate=round(float(failed.mean()), 6) if total else None,
        retry_rate=round(float((attempts[~failed] > 1).mean()), 6) if (~failed).any() else None,
        source=source or None,
    )


def _compression(calls: pd.DataFrame, sizes: dict[str, tuple[int, int]]) -> tuple[OutputSizing | None, int]:
    cycles = {str(c) for c in calls.get("cycle_id", pd.Series(dtype=object)).dropna()}
    pairs = pd.DataFrame([sizes[c] for c in sorted(cycles) if c in sizes], columns=["x", "y"])
    pairs = pairs[(pairs["x"] > 0) & (pairs["y"] > 0)].sort_values("x", kind="stable")
    if pairs.empty:
        return None, 0
    bins = max(1, min(MAX_BINS, len(pairs) // MIN_BIN_CALLS))
    points: list[tuple[float, float]] = []
    for chunk in np.array_split(pairs.to_numpy(dtype=float), bins):
        at = float(np.median(chunk[:, 0]))
        ratio = float(chunk[:, 0].sum() / chunk[:, 1].sum())
        if points and at <= points[-1][0]:  # equal medians: merge into one point
            at, ratio = points[-1][0], (points[-1][1] + ratio) / 2
            points.pop()
        points.append((at, ratio))
    sizing = OutputSizing(
        tuple(round(p[0], 1) for p in points),
        tuple(round(p[1], 4) for p in points),
        min_output_tokens=max(1, int(pairs["y"].min())),
    )
    return sizing, len(pairs)


def _overhead(calls: pd.DataFrame, sizes: dict[str, tuple[int, int]]) -> int | None:
    """Median reply tokens beyond the observation text the cycle kept (wrapper, hints)."""
    extra = [
        out - sizes[str(cycle)][1]
        for cycle, out in zip(calls["cycle_id"], pd.to_numeric(calls["output_tokens"]), strict=True)
        if isinstance(cycle, str) and cycle in sizes
    ]
    return max(0, round(float(np.median(extra)))) if extra else None


def _latency(calls: pd.DataFrame) -> dict[str, float] | None:
    frame = pd.DataFrame(
        {
            "lat": pd.to_numeric(calls["latency_s"], errors="coerce"),
            "in": pd.to_numeric(calls["input_tokens"], errors="coerce"),
            "out": pd.to_numeric(calls["output_tokens"], errors="coerce"),
        }
    ).dropna()
    frame = frame[frame["lat"] > 0]
    if frame.empty:
        return None
    latency = frame["lat"].to_numpy(dtype=float)
    design = np.column_stack(
        [np.ones(len(frame)), frame["in"].to_numpy(dtype=float), frame["out"].to_numpy(dtype=float)]
    )
    coefficients = _non_negative_least_squares(design, latency)
    fitted = design @ coefficients
    ok = fitted > 0
    sigma = float(np.std(np.log(latency[ok] / fitted[ok]))) if ok.sum() > 1 else 0.0
    return {
        "base_s": round(float(coefficients[0]), 6),
        "input_s": float(f"{coefficients[1]:.6g}"),
        "output_s": float(f"{coefficients[2]:.6g}"),
        "sigma": round(sigma, 4),
        "p50_s": round(float(np.percentile(latency, 50)), 4),
        "p95_s": round(float(np.percentile(latency, 95)), 4),
        "calls": len(frame),
    }


def _non_negative_least_squares(design: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Least squares with every coefficient >= 0: drop the most negative column and refit until
    none is negative (three columns, so at most three rounds). Columns without variation beyond
    the intercept are dropped first (a constant input size says nothing about its rate)."""
    active = [0] + [j for j in range(1, design.shape[1]) if np.ptp(design[:, j]) > 0]
    while True:
        solution, *_ = np.linalg.lstsq(design[:, active], target, rcond=None)
        negative = [(value, column) for value, column in zip(solution, active, strict=True) if value < 0]
        if not negative:
            break
        active.remove(min(negative)[1])
        if not active:
            return np.zeros(design.shape[1])
    coefficients = np.zeros(design.shape[1])
    coefficients[active] = solution
    return coefficients


def _quantiles(values: np.ndarray) -> dict[str, float]:
    if not len(values):
        return {}
    return {
        "p5": float(np.percentile(values, 5)),
        "p50": float(np.percentile(values, 50)),
        "p95": float(np.percentile(values, 95)),
        "max": float(values.max()),
    }


__all__ = ["END_MARKERS", "CalibrationError", "content_tokens_by_cycle", "cycle_sizes", "fit_role"]

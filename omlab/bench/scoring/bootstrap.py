"""Confidence intervals for per-question scores: Wilson score intervals for proportions (a share
of correct answers), percentile bootstrap for other means (F1, task-averaged accuracy)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

# Caps the resample matrix (rows x values) held in memory at once.
_MAX_CELLS_PER_CHUNK = 4_000_000


class ConfidenceInterval(NamedTuple):
    """A mean with its confidence interval (unpacks as ``mean, lo, hi``)."""

    mean: float
    lo: float
    hi: float


def bootstrap_ci(
    values: Sequence[bool | float], *, n: int = 2000, alpha: float = 0.05, seed: int = 0
) -> ConfidenceInterval:
    """Mean of ``values`` and its ``1 - alpha`` percentile-bootstrap interval.

    Resamples ``values`` with replacement ``n`` times (numpy ``default_rng(seed)``, so the
    interval is reproducible) and takes the ``alpha/2`` and ``1 - alpha/2`` quantiles of the
    resampled means. Booleans count as 1/0.

    Raises:
        ValueError: Empty input, NaN values, ``n < 1`` or ``alpha`` outside (0, 1).
    """
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0:
        raise ValueError("bootstrap_ci needs a non-empty 1-D sequence of values")
    if np.isnan(data).any():
        raise ValueError("bootstrap_ci got NaN values; drop or score them first")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    rng = np.random.default_rng(seed)
    rows_per_chunk = max(1, _MAX_CELLS_PER_CHUNK // data.size)
    means = np.empty(n)
    for start in range(0, n, rows_per_chunk):
        rows = min(rows_per_chunk, n - start)
        picks = rng.integers(0, data.size, size=(rows, data.size))
        means[start : start + rows] = data[picks].mean(axis=1)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    mean = float(data.mean())
    # With very few resamples the quantiles can miss the mean; keep lo <= mean <= hi.
    return ConfidenceInterval(mean, min(float(lo), mean), max(float(hi), mean))


def wilson_ci(values: Sequence[bool | float], *, alpha: float = 0.05) -> ConfidenceInterval:
    """Share of true ``values`` and its ``1 - alpha`` Wilson score interval.

    Unlike a bootstrap, it never collapses to a zero-width interval for n > 0: 0 correct out of 6
    gives 0 % with an upper bound near 39 %, not "0.0 % - 0.0 %".

    Raises:
        ValueError: empty input, a value other than 0/1 (or NaN), or ``alpha`` outside (0, 1).
    """
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0:
        raise ValueError("wilson_ci needs a non-empty 1-D sequence of 0/1 values")
    if not np.isin(data, (0.0, 1.0)).all():
        raise ValueError("wilson_ci takes proportions only: every value must be 0/1 or a bool")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    n = data.size
    share = float(data.mean())
    z = NormalDist().inv_cdf(1 - alpha / 2)
    denominator = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return ConfidenceInterval(share, max(0.0, centre - half), min(1.0, centre + half))


def score_ci(
    values: Sequence[bool | float], *, n: int = 2000, alpha: float = 0.05, seed: int = 0
) -> tuple[ConfidenceInterval, str]:
    """``(interval, method)`` for per-question scores: the Wilson score interval when every value is
    0/1 (a share of correct answers: 6 out of 6 still gets an interval), the percentile bootstrap
    otherwise (F1 and other graded scores). ``method`` names it, for labels."""
    data = np.asarray(values, dtype=float)
    if data.ndim == 1 and data.size and np.isin(data, (0.0, 1.0)).all():
        return wilson_ci(values, alpha=alpha), "Wilson score"
    return bootstrap_ci(values, n=n, alpha=alpha, seed=seed), "percentile bootstrap"

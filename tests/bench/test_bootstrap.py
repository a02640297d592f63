import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omlab.bench.scoring.bootstrap import ConfidenceInterval, bootstrap_ci


def test_constant_values_have_a_degenerate_interval():
    assert bootstrap_ci([1, 1, 1]) == (1.0, 1.0, 1.0)
    assert bootstrap_ci([0.25]) == ConfidenceInterval(0.25, 0.25, 0.25)


def test_booleans_and_the_normal_approximation():
    values = [True, False] * 50  # mean 0.5, standard error 0.05 -> about 0.40..0.60
    mean, lo, hi = bootstrap_ci(values)
    assert mean == 0.5
    assert 0.38 < lo < 0.43 and 0.57 < hi < 0.62


def test_reproducible_for_a_seed_and_narrower_for_larger_alpha():
    values = np.random.default_rng(1).random(80).tolist()
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    assert bootstrap_ci(values, seed=3) != bootstrap_ci(values, seed=4)
    wide = bootstrap_ci(values, alpha=0.01)
    narrow = bootstrap_ci(values, alpha=0.5)
    assert wide.lo < narrow.lo <= narrow.mean <= narrow.hi < wide.hi


def test_large_inputs_are_resampled_in_chunks_quickly():
    values = np.random.default_rng(2).integers(0, 2, 5000).tolist()  # 2000 x 5000 cells > one chunk
    started = time.perf_counter()
    mean, lo, hi = bootstrap_ci(values)
    assert time.perf_counter() - started < 5
    assert lo < mean < hi and hi - lo < 0.04


@pytest.mark.parametrize(
    "values, kwargs, problem",
    [
        ([], {}, "non-empty"),
        ([0.5, math.nan], {}, "NaN"),
        ([1, 0], {"n": 0}, "n must be"),
        ([1, 0], {"alpha": 1.0}, "alpha"),
    ],
)
def test_bad_input(values, kwargs, problem):
    with pytest.raises(ValueError, match=problem):
        bootstrap_ci(values, **kwargs)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=60), st.integers(0, 1000))
def test_interval_brackets_the_mean_within_the_data_range(values, seed):
    mean, lo, hi = bootstrap_ci(values, n=200, seed=seed)
    assert min(values) - 1e-12 <= lo <= mean <= hi <= max(values) + 1e-12
    assert mean == pytest.approx(sum(values) / len(values))


def test_score_ci_picks_wilson_for_proportions_and_the_bootstrap_for_other_scores():
    from omlab.bench.scoring import score_ci

    interval, method = score_ci([1, 1, 1, 1, 1, 1], n=200, seed=0)
    assert method == "Wilson score" and interval.hi == 1.0 and interval.lo < 0.7
    interval, method = score_ci([0.2, 0.4, 0.9], n=200, seed=0)
    assert method == "percentile bootstrap" and interval.lo <= interval.mean <= interval.hi

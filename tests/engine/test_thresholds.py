"""The pure threshold arithmetic, checked against hand-computed values from om-reference §2.2-§2.8."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omlab.engine.thresholds import (
    ActivationChoice,
    TokenRange,
    activation_ratio,
    blocking_band,
    dynamic_threshold,
    js_round,
    max_threshold,
    min_buffer_tokens,
    min_remaining,
    projected_message_removal,
    reflection_lines_to_buffer,
    resolve_block_after,
    resolve_buffer_tokens,
    retention_floor,
    select_activation_boundary,
    should_start_buffered_reflection,
    should_trigger_buffer,
    stale_buffer_boundary,
)


def test_js_round_rounds_halves_up_like_javascript():
    assert [js_round(x) for x in (0.5, 1.5, 2.5, -0.5, 2.4999)] == [1, 2, 3, 0, 2]


# --- §2.2 dynamic threshold ---


def test_dynamic_threshold_number_is_unchanged():
    assert dynamic_threshold(30_000, 12_345) == 30_000


def test_dynamic_threshold_range_grows_into_unused_observation_space():
    budget = TokenRange(30_000, 70_000)
    assert dynamic_threshold(budget, 0) == 70_000
    assert dynamic_threshold(budget, 10_000) == 60_000
    assert dynamic_threshold(budget, 40_000) == 30_000
    assert dynamic_threshold(budget, 55_000) == 30_000  # never below min


def test_dynamic_threshold_rounds_like_the_reference():
    assert dynamic_threshold(TokenRange(10, 100), 10.5) == 90  # 89.5 -> 90


def test_token_range_rejects_min_above_max():
    with pytest.raises(ValueError, match="min"):
        TokenRange(5, 4)


def test_max_threshold():
    assert max_threshold(30_000) == 30_000
    assert max_threshold(TokenRange(20_000, 100_000)) == 100_000


# --- §2.5 buffer tokens / block after ---


@pytest.mark.parametrize(
    ("raw", "message_tokens", "expected"),
    [
        (0.2, 30_000, 6_000),
        (0.25, 30_000, 7_500),
        (0.25, 20_000, 5_000),
        (5_000, 30_000, 5_000),
        (1, 30_000, 1),  # 1 is absolute, not 100%
        (0.2, TokenRange(30_000, 70_000), 14_000),  # ratio of the range's max
        (False, 30_000, None),
        (None, 30_000, None),
    ],
)
def test_resolve_buffer_tokens(raw, message_tokens, expected):
    assert resolve_buffer_tokens(raw, message_tokens) == expected


@pytest.mark.parametrize(
    ("raw", "threshold", "expected"),
    [
        (1.2, 30_000, 36_000),
        (1.5, 30_000, 45_000),
        (1.2, 40_000, 48_000),
        (1, 30_000, 30_000),
        (99.99, 100, 9_999),  # still a multiplier just under 100
        (100, 30_000, 100),  # absolute from 100 on
        (45_000, 30_000, 45_000),
        (None, 30_000, None),
    ],
)
def test_resolve_block_after(raw, threshold, expected):
    assert resolve_block_after(raw, threshold) == expected


# --- §2.6 retention floor ---


def test_retention_floor_ratio_and_absolute():
    assert retention_floor(0.8, 30_000) == pytest.approx(6_000)
    assert retention_floor(0.7, 30_000) == pytest.approx(9_000)
    assert retention_floor(1.0, 30_000) == 0
    assert retention_floor(4_000, 30_000) == 4_000
    assert retention_floor(1_000, 30_000) == 1_000  # exactly at the absolute boundary


def test_min_remaining_is_min_of_1000_and_floor():
    assert min_remaining(0.8, 30_000) == 1_000
    assert min_remaining(0.99, 30_000) == pytest.approx(300)
    assert min_remaining(1.0, 30_000) == 0
    assert min_remaining(4_000, 30_000) == 1_000


def test_activation_ratio():
    assert activation_ratio(0.8, 30_000) == 0.8
    assert activation_ratio(6_000, 30_000) == pytest.approx(0.8)
    assert activation_ratio(40_000, 30_000) == 0.0  # clamped


# --- §2.5 interval trigger ---


def test_buffer_triggers_on_each_new_interval():
    # bufferTokens 6000, threshold 30000 -> ramp point 23400
    assert not should_trigger_buffer(5_999, 0, 30_000, 6_000)
    assert should_trigger_buffer(6_000, 0, 30_000, 6_000)
    assert not should_trigger_buffer(11_999, 6_000, 30_000, 6_000)
    assert should_trigger_buffer(12_000, 6_000, 30_000, 6_000)


def test_buffer_interval_halves_from_the_ramp_point():
    # below the ramp point (23400) the interval is 6000: 21000 and 23399 are in the same interval
    assert not should_trigger_buffer(23_399, 21_000, 30_000, 6_000)
    # at the ramp point the interval is 3000: floor(23400/3000) = 7 = floor(21000/3000)
    assert not should_trigger_buffer(23_400, 21_000, 30_000, 6_000)
    assert should_trigger_buffer(24_000, 21_000, 30_000, 6_000)  # 8 > 7
    # half intervals: 24100 -> 27000 crosses 27000/3000 = 9 > 8, but stays in 6000-interval 4
    assert should_trigger_buffer(27_000, 24_100, 30_000, 6_000)
    assert not should_trigger_buffer(27_000, 24_100, None, 6_000)  # no threshold, no ramp
    assert not should_trigger_buffer(26_999, 24_100, 30_000, 6_000)


def test_buffer_keeps_triggering_past_the_threshold():
    # omlab buffers in the band between the threshold and blockAfter (#22078)
    assert should_trigger_buffer(33_000, 30_000, 30_000, 6_000)
    assert not should_trigger_buffer(32_999, 30_000, 30_000, 6_000)


def test_buffer_trigger_rejects_zero_interval():
    with pytest.raises(ValueError):
        should_trigger_buffer(10, 0, 100, 0)


def test_min_buffer_tokens():
    assert min_buffer_tokens(6_000) == 3_000
    assert min_buffer_tokens(6_001) == 3_001  # 3000.5 rounded up keeps the >= check exact
    assert min_buffer_tokens(None) == 2_500


def test_stale_buffer_boundary_below_half():
    assert stale_buffer_boundary(2_999, 6_000)
    assert not stale_buffer_boundary(3_000, 6_000)
    assert not stale_buffer_boundary(0, 0)


# --- §2.6 activation selection ---


def choose(chunks, pending, activation=0.8, threshold=30_000, force_max=False):
    return select_activation_boundary(chunks, pending, activation, threshold, force_max=force_max)


def test_no_chunks_selects_nothing():
    assert choose([], 40_000) == ActivationChoice(0, 0, "none")
    assert projected_message_removal([], 40_000, 0.8, 30_000) == 0


def test_over_boundary_when_overshoot_small():
    # floor 6000, target 24000; cumulative 8k,16k,24k -> exactly target: over with zero overshoot
    assert choose([8_000, 8_000, 8_000, 6_000], 30_000) == ActivationChoice(3, 24_000, "over")


def test_overshoot_boundary_at_and_just_over_095_floor():
    # The 0.95 x floor rule only bites when floor > 20000 (otherwise min remaining decides first).
    # Absolute floor 25000 -> max overshoot 23750; pending 100000 -> target 75000.
    at_limit = choose([50_000, 48_750], 100_000, activation=25_000, threshold=100_000)
    assert at_limit == ActivationChoice(2, 98_750, "over")  # overshoot 23750, 1250 left
    just_over = choose([50_000, 48_751], 100_000, activation=25_000, threshold=100_000)
    assert just_over == ActivationChoice(1, 50_000, "under")  # overshoot 23751


def test_min_remaining_beats_a_small_overshoot():
    # ratio 0.8 -> floor 6000, max overshoot 5700: an overshoot of 5700 leaves only 300 < 1000
    assert choose([18_000, 11_700], 30_000) == ActivationChoice(1, 18_000, "under")


def test_over_refused_when_it_leaves_less_than_min_remaining():
    # floor 6000, pending 30000 -> target 24000; a single 29500 chunk overshoots 5500 (<= 5700)
    # but leaves 500 < 1000 -> no under exists -> over anyway as fallback
    assert choose([29_500], 30_000) == ActivationChoice(1, 29_500, "over-fallback")


def test_under_when_over_overshoots_too_much():
    # target 24000; chunks 10000, 20000 -> under 10000, over 30000 (overshoot 6000 > 5700)
    assert choose([10_000, 20_000], 30_000) == ActivationChoice(1, 10_000, "under")


def test_force_max_prefers_over_despite_large_overshoot():
    # absolute floor 25000: the over boundary overshoots 23751 > 0.95 x floor, so normally "under"
    chunks = [50_000, 48_751]
    forced = choose(chunks, 100_000, activation=25_000, threshold=100_000, force_max=True)
    assert forced == ActivationChoice(2, 98_751, "force-max-over")
    # but never below min remaining: 30000 of 30500 leaves 500 < 1000 -> normal rules -> under
    assert choose([10_000, 20_000], 30_500, force_max=True) == ActivationChoice(1, 10_000, "under")
    assert choose([10_000, 20_000], 32_000, force_max=True).rule == "force-max-over"


def test_ratio_one_activates_everything():
    # floor 0 -> min remaining 0, max overshoot 0; target = pending
    assert choose([5_000, 5_000, 5_000], 15_000, activation=1.0) == ActivationChoice(3, 15_000, "over")


def test_below_target_everywhere_takes_the_largest_under():
    # floor 6000, pending 50000 -> target 44000; all chunks sum to 30000 -> under = all 3
    assert choose([10_000, 10_000, 10_000], 50_000) == ActivationChoice(3, 30_000, "under")


def test_target_zero_takes_first_chunk_as_over():
    # pending below the floor -> target 0 -> the first boundary is "over" (overshoot 3000 <= 5700,
    # 2000 left >= 1000)
    assert choose([3_000, 3_000], 5_000) == ActivationChoice(1, 3_000, "over")
    # ... and with too little left it is still taken, as the fallback
    assert choose([4_500, 3_000], 5_000) == ActivationChoice(1, 4_500, "over-fallback")


def test_single_chunk_fallback_when_nothing_qualifies():
    # zero-size chunks never count as "under"; pending far above -> no over either
    assert choose([0, 0], 50_000) == ActivationChoice(1, 0, "first-chunk")


def test_absolute_activation_keeps_that_many_tokens():
    # keep 4000: pending 30000 -> target 26000; chunks of 6500 -> cumulative 26000 at 4 chunks
    assert choose([6_500] * 5, 30_000, activation=4_000) == ActivationChoice(4, 26_000, "over")


def test_projected_removal_ignores_force_max():
    chunks = [50_000, 48_751]
    assert projected_message_removal(chunks, 100_000, 25_000, 100_000) == 50_000
    assert choose(chunks, 100_000, activation=25_000, threshold=100_000, force_max=True).tokens == 98_751


@given(
    st.lists(st.integers(min_value=0, max_value=20_000), min_size=1, max_size=12),
    st.integers(min_value=0, max_value=200_000),
    st.one_of(st.floats(min_value=0.01, max_value=1.0), st.integers(min_value=1_000, max_value=29_999)),
    st.booleans(),
)
def test_selection_is_always_a_nonempty_prefix(chunks, pending, activation, force_max):
    choice = choose(chunks, pending, activation=activation, force_max=force_max)
    assert 1 <= choice.chunks <= len(chunks)
    assert choice.tokens == sum(chunks[: choice.chunks])


@given(
    st.lists(st.integers(min_value=1, max_value=20_000), min_size=1, max_size=12),
    st.integers(min_value=0, max_value=200_000),
    st.floats(min_value=0.01, max_value=1.0),
)
def test_force_max_never_activates_less(chunks, pending, activation):
    normal = choose(chunks, pending, activation=activation)
    forced = choose(chunks, pending, activation=activation, force_max=True)
    assert forced.chunks >= normal.chunks
    # whenever the over boundary leaves enough context, force_max takes it
    floor = retention_floor(activation, 30_000)
    target = max(0, pending - floor)
    cumulative = 0
    for index, tokens in enumerate(chunks):
        cumulative += tokens
        if cumulative >= target:
            if pending - cumulative >= min(1_000, floor):
                assert forced == ActivationChoice(index + 1, cumulative, "force-max-over")
            break


# --- blocking band ---


def test_blocking_band_edges():
    assert blocking_band(29_999, 30_000, 36_000) == "below"
    assert blocking_band(30_000, 30_000, 36_000) == "band"
    assert blocking_band(35_999, 30_000, 36_000) == "band"
    assert blocking_band(36_000, 30_000, 36_000) == "block"
    assert blocking_band(30_000, 30_000, None) == "block"  # no async: block at the threshold
    assert blocking_band(29_999, 30_000, None) == "below"


# --- §2.8 reflection ---


def test_reflection_lines_to_buffer():
    # 30000 tokens over 300 lines = 100/line; T*a = 20000 -> 200 lines
    assert reflection_lines_to_buffer(30_000, 300, 40_000, 0.5) == 200
    # fewer tokens than the activation point -> all lines
    assert reflection_lines_to_buffer(10_000, 100, 40_000, 0.5) == 100
    assert reflection_lines_to_buffer(0, 10, 40_000, 0.5) == 10
    assert reflection_lines_to_buffer(5_000, 0, 40_000, 0.5) == 0
    # floor: 20000 / 30 = 666.67 lines
    assert reflection_lines_to_buffer(30_000, 1_000, 40_000, 0.5) == 666


def test_should_start_buffered_reflection():
    assert not should_start_buffered_reflection(19_999, 40_000, 0.5)
    assert should_start_buffered_reflection(20_000, 40_000, 0.5)
    assert should_start_buffered_reflection(39_999, 40_000, 0.5)
    assert not should_start_buffered_reflection(40_000, 40_000, 0.5)  # at threshold: activate/sync instead
    assert not should_start_buffered_reflection(25_000, 40_000, None)
    assert not should_start_buffered_reflection(25_000, 40_000, 0.5, op_running=True)
    assert not should_start_buffered_reflection(25_000, 40_000, 0.5, boundary_set=True)
    assert not should_start_buffered_reflection(25_000, 40_000, 0.5, has_buffered_reflection=True)

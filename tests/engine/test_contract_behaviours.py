"""Documented behaviours of the engine contract (issue 13 §2), each pinned by a test."""

from __future__ import annotations

from omlab.engine.observation_text import parse_observer_output
from omlab.engine.thresholds import activation_ratio, projected_message_removal, retention_floor

# --- <current-task> ends only at a closing tag at the start (or end) of a line ---------------


def test_current_task_mentioning_its_closing_tag_inline_is_not_cut():
    reply = (
        "<observations>\n* 🔴 (10:00) User asked about XML parsing\n</observations>\n"
        "<current-task>\nPrimary: explain why a literal </current-task> inside text breaks naive parsers\n"
        "Secondary: waiting for user\n</current-task>\n"
        "<suggested-response>\nAsk which parser they use.\n</suggested-response>\n"
    )
    out = parse_observer_output(reply)
    assert out.current_task == (
        "Primary: explain why a literal </current-task> inside text breaks naive parsers\nSecondary: waiting for user"
    )
    assert out.suggested_response == "Ask which parser they use."


def test_one_line_current_task_still_parses():
    out = parse_observer_output(
        "<observations>\n* 🔴 (10:00) a\n</observations>\n<current-task>Fix the bug</current-task>\n"
    )
    assert out.current_task == "Fix the bug"


# --- projectedMessageRemoval and the pure threshold helpers ---------------------------------


def test_projected_removal_is_zero_below_the_retention_floor():
    # threshold 10k, ratio 0.8 -> floor 2,000; 1,500 pending tokens: nothing would be removed
    assert projected_message_removal([900, 400], 1_500, 0.8, 10_000) == 0
    assert projected_message_removal([900, 400], 1_990, 0.8, 10_000) == 0
    assert projected_message_removal([900, 400], 3_000, 0.8, 10_000) == 1_300


def test_threshold_helpers_clamp_ratios_and_floors():
    assert retention_floor(1.5, 10_000) == 0
    assert retention_floor(-0.5, 10_000) == 10_000
    assert retention_floor(50_000, 10_000) == 10_000  # an absolute floor never exceeds the threshold
    assert activation_ratio(1.7, 10_000) == 1.0
    assert activation_ratio(-0.2, 10_000) == 0.0
    assert activation_ratio(50_000, 10_000) == 0.0

"""Observation groups: wrapping, parsing, rendering for the actor, reconciling reflections."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omlab.engine.observation_groups import (
    ObservationGroup,
    combine_ranges,
    new_group_id,
    parse_observation_groups,
    parse_range,
    reconcile_reflection_groups,
    render_groups_for_context,
    wrap_observation_group,
)
from omlab.engine.observation_text import strip_observation_group_tags

OBS = "Date: Mar 4, 2025\n* 🔴 (10:00) User stated they live in Lisbon"


def test_wrap_format():
    assert wrap_observation_group(
        f"\n{OBS}\n\n", group_id="3f9c0a1b2c3d4e5f", start_message_id="m1", end_message_id="m9"
    ) == (f'<observation-group id="3f9c0a1b2c3d4e5f" range="m1:m9">\n{OBS}\n</observation-group>')
    assert wrap_observation_group("x", group_id="g", range="m1:m2,m5:m6", kind="reflection") == (
        '<observation-group id="g" range="m1:m2,m5:m6" kind="reflection">\nx\n</observation-group>'
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"group_id": "", "start_message_id": "a", "end_message_id": "b"},
        {"group_id": "g", "start_message_id": 'a"b', "end_message_id": "b"},
        {"group_id": "g", "start_message_id": "a", "end_message_id": "b>"},
        {"group_id": "g", "start_message_id": "a"},
        {"group_id": "g", "range": "a b"},
        {"group_id": "g", "start_message_id": "a", "end_message_id": "b", "kind": "x y"},
    ],
)
def test_wrap_rejects_malformed_ids(kwargs):
    with pytest.raises(ValueError, match="observation group"):
        wrap_observation_group("x", **kwargs)


def test_new_group_ids_are_16_hex_and_distinct():
    ids = {new_group_id() for _ in range(200)}
    assert len(ids) == 200 and all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)


def test_parse_groups_in_order_with_kind_and_attribute_order():
    text = (
        "preamble\n"
        + wrap_observation_group("first", group_id="a1", start_message_id="m1", end_message_id="m4")
        + "\n\n--- message boundary (2025-03-04T10:00:00.000Z) ---\n\n"
        + '<observation-group kind="reflection" range="m5:m9" id="b2">\n second \n</observation-group>'
        + '\n<observation-group id="broken">no range</observation-group>'
    )
    assert parse_observation_groups(text) == [
        ObservationGroup("a1", "m1:m4", None, "first"),
        ObservationGroup("b2", "m5:m9", "reflection", "second"),
    ]
    group = parse_observation_groups(text)[1]
    assert (group.start_message_id, group.end_message_id, group.ranges) == ("m5", "m9", [("m5", "m9")])


def test_parse_range_handles_colons_inside_ids():
    assert parse_range("m1:m9") == ("m1", "m9")
    assert parse_range("s1:t3:s1:t9") == ("s1:t3", "s1:t9")
    assert parse_range("only") == ("only", "only")
    with pytest.raises(ValueError):
        parse_range("  ")


def test_render_for_context():
    text = "loose line\n" + wrap_observation_group(OBS, group_id="a1", start_message_id="m1", end_message_id="m4")
    assert render_groups_for_context(text) == f"loose line\n## Group `a1`\n_range: `m1:m4`_\n\n{OBS}"
    assert render_groups_for_context('<observation-group id="x">kept</observation-group>') == "kept"


def test_combine_ranges():
    assert combine_ranges(["3:7", "1:2", "10:12"]) == "1:12"
    assert combine_ranges(["m1:m4", "m5:m9", "m1:m4"]) == "m1:m4,m5:m9"
    assert combine_ranges(["m1:m4,m5:m9", "m10:m12"]) == "m1:m4,m5:m9,m10:m12"
    with pytest.raises(ValueError):
        combine_ranges([])


def _log(*groups: tuple[str, str, str]) -> str:
    return "\n\n".join(wrap_observation_group(t, group_id=g, range=r) for g, r, t in groups)


def test_reconcile_wraps_a_plain_reflection_in_one_reflection_group():
    source = _log(("a1", "m1:m4", "* one"), ("b2", "m5:m9", "* two"))
    reflection = "Date: Mar 4, 2025\n* 🔴 merged"
    wrapped = reconcile_reflection_groups(reflection, source, group_id="ffff000011112222")
    assert wrapped == (
        '<observation-group id="ffff000011112222" range="m1:m4,m5:m9" kind="reflection">\n'
        f"{reflection}\n</observation-group>"
    )
    numeric = _log(("a1", "1:4", "* one"), ("b2", "5:9", "* two"))
    assert parse_observation_groups(reconcile_reflection_groups(reflection, numeric))[0].range == "1:9"
    assert reconcile_reflection_groups(reflection, "no groups here") == reflection


def test_reconcile_keeps_sections_that_name_their_group():
    source = _log(("a1", "m1:m4", "* one"), ("b2", "m5:m9", "* two"))
    reflection = "## Group `b2`\n_range: `m5:m9`_\n\n* two, condensed\n\n## Group `zz`\n* invented section"
    groups = parse_observation_groups(reconcile_reflection_groups(reflection, source, group_id="c3"))
    assert groups == [
        ObservationGroup("b2", "m5:m9", "reflection", "* two, condensed"),
        ObservationGroup("c3", "m1:m4,m5:m9", "reflection", "* invented section"),
    ]


_ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)
_bodies = st.text(alphabet=st.characters(blacklist_characters="<>", blacklist_categories=("Cs",)), max_size=200)


@given(st.lists(st.tuples(_ids, _ids, _ids, _bodies), max_size=5))
def test_wrap_then_parse_round_trips(groups):
    text = "\n".join(
        wrap_observation_group(body, group_id=gid, start_message_id=start, end_message_id=end)
        for gid, start, end, body in groups
    )
    parsed = parse_observation_groups(text)
    assert [(g.id, g.range, g.text) for g in parsed] == [
        (gid, f"{start}:{end}", body.strip()) for gid, start, end, body in groups
    ]
    assert strip_observation_group_tags(text) == strip_observation_group_tags(
        "\n".join(body.strip() for *_, body in groups)
    )

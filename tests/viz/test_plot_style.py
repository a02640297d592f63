"""The shared style: fixed role colours, distinct colours for other names, number formats."""

from __future__ import annotations

from omlab.viz.plots import _format as fmt
from omlab.viz.style import PALETTE, ROLE_COLORS, categorical_colors, column_label


def test_roles_keep_their_colour_and_other_names_get_distinct_free_colours():
    colors = categorical_colors(["judge", "m/a", "observer", "m/b", "m/a"])
    assert colors["judge"] == ROLE_COLORS["judge"] and colors["observer"] == ROLE_COLORS["observer"]
    assert len(set(colors.values())) == 4
    assert {colors["m/a"], colors["m/b"]}.isdisjoint({ROLE_COLORS["judge"], ROLE_COLORS["observer"]})


def test_names_without_roles_take_the_palette_in_order():
    assert categorical_colors(["x", "y", "x"]) == {"x": PALETTE[0], "y": PALETTE[1]}


def test_number_formats():
    assert [fmt.tokens(v) for v in (950, 12_300, 1_250_000)] == ["950", "12.3k", "1.25M"]
    assert [fmt.usd(v) for v in (0, 0.0042, 0.25, 12.3, 1234)] == [
        "$0",
        "$0.0042",
        "$0.250",
        "$12.30",
        "$1,234",
    ]
    assert fmt.percent(0.625) == "62.5%"
    assert fmt.ratio(6.234) == "6.23×"


def test_column_labels_carry_units():
    assert column_label("blocked_s") == "blocked time (virtual s)"
    assert column_label("some_new_metric") == "some new metric"

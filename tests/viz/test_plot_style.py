"""The shared style: fixed role colours, distinct colours for other names, number formats."""

from __future__ import annotations

from omlab.viz.plots import _format as fmt
from omlab.viz.style import ROLE_COLORS, categorical_colors, column_label, name_color


def test_roles_keep_their_colour_and_other_names_get_distinct_free_colours():
    colors = categorical_colors(["judge", "m/a", "observer", "m/b", "m/a"])
    assert colors["judge"] == ROLE_COLORS["judge"] and colors["observer"] == ROLE_COLORS["observer"]
    assert len(set(colors.values())) == 4
    assert {colors["m/a"], colors["m/b"]}.isdisjoint({ROLE_COLORS["judge"], ROLE_COLORS["observer"]})


def test_a_name_keeps_its_colour_whatever_else_the_plot_shows():
    alone = categorical_colors(["google/gemini-2.5-flash"])["google/gemini-2.5-flash"]
    assert alone == name_color("google/gemini-2.5-flash")
    with_others = categorical_colors(["openai/gpt-4o", "observer", "google/gemini-2.5-flash"])
    assert with_others["google/gemini-2.5-flash"] == alone


def test_built_in_role_models_share_their_role_colour():
    # cost by role stacks by model, cost by model stacks by role: the reflector must look the same
    assert categorical_colors(["omlab/observer", "omlab/reflector"]) == {
        "omlab/observer": ROLE_COLORS["observer"],
        "omlab/reflector": ROLE_COLORS["reflector"],
    }


def test_colliding_names_still_get_distinct_colours_in_one_plot():
    names = [f"model-{i}" for i in range(6)]
    assert len(set(categorical_colors(names).values())) == 6


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

"""Style sheets copied into style attributes (what survives JupyterLab's sanitizer)."""

from __future__ import annotations

import pytest

from omlab.viz.inline_css import inline_styles

CSS = ".box{border:1px solid}.box h3{margin:0}.list li{color:red}.list li.lost,.x{color:blue}p.note{font-size:9px}"


def test_rules_land_on_the_elements_they_select_later_rules_winning():
    markup = (
        "<div class='box' data-q='1'><h3>a &amp; b</h3><ol class='list'><li>one</li>"
        "<li class='lost' style='font-weight:bold'>two</li></ol><br><p class='note'>&#955;</p></div><h3>free</h3>"
    )
    assert inline_styles(markup, CSS) == (
        "<div class='box' data-q='1' style='border:1px solid'><h3 style='margin:0'>a &amp; b</h3>"
        "<ol class='list'><li style='color:red'>one</li>"
        "<li class='lost' style='color:red;color:blue;font-weight:bold'>two</li></ol><br>"
        "<p class='note' style='font-size:9px'>&#955;</p></div><h3>free</h3>"
    )


def test_unknown_selectors_are_refused_by_name():
    with pytest.raises(ValueError, match="'.a .b .c'"):
        inline_styles("<p></p>", ".a .b .c{color:red}")

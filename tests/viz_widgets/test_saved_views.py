"""A saved notebook keeps omlab's static copies, never a live view whose model it does not save."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omlab.viz import saved_views
from omlab.viz.saved_views import LIVE_VIEW_KEY, STATE_MIME, VIEW_MIME, drop_orphaned_views, pre_save_hook

REPO = Path(__file__).resolve().parents[2]
STATIC = "<details class='omlab-static'><summary>what-if panel (static copy)</summary><img></details>"


def view(model_id: str, *, marked: bool = True) -> dict:
    return {
        "output_type": "display_data",
        "data": {VIEW_MIME: {"model_id": model_id, "version_major": 2, "version_minor": 0}, "text/plain": "VBox()"},
        "metadata": {LIVE_VIEW_KEY: True} if marked else {},
    }


def static(text=STATIC) -> dict:
    return {"output_type": "display_data", "data": {"text/html": text}, "metadata": {}}


def notebook(*cells: list[dict], saved: tuple[str, ...] = ()) -> dict:
    metadata = {"widgets": {STATE_MIME: {"state": {m: {} for m in saved}, "version_major": 2}}} if saved else {}
    return {
        "cells": [{"cell_type": "code", "source": "", "metadata": {}, "outputs": outputs} for outputs in cells],
        "metadata": metadata,
    }


def test_a_live_view_without_its_saved_model_leaves_its_static_copy_open():
    # after a kernel restart the saved state holds no model at all
    nb = notebook([view("a"), static()], [view("b"), static([STATIC[:20], STATIC[20:]])])
    assert drop_orphaned_views(nb) == 2
    for cell in nb["cells"]:
        assert [list(o["data"]) for o in cell["outputs"]] == [["text/html"]]
        assert cell["outputs"][0]["data"]["text/html"].startswith("<details class='omlab-static' open>")


def test_a_view_whose_model_is_saved_stays_and_other_widgets_are_left_alone():
    nb = notebook([view("a"), static()], [view("x", marked=False)], saved=("a",))
    assert drop_orphaned_views(nb) == 0
    assert VIEW_MIME in nb["cells"][0]["outputs"][0]["data"]
    assert nb["cells"][0]["outputs"][1]["data"]["text/html"] == STATIC
    assert VIEW_MIME in nb["cells"][1]["outputs"][0]["data"]


def test_the_save_hook_changes_notebooks_only():
    nb = notebook([view("a"), static()])
    pre_save_hook(model={"type": "notebook", "content": nb}, path="x.ipynb", contents_manager=None)
    assert len(nb["cells"][0]["outputs"]) == 1
    text = {"type": "file", "content": json.dumps(notebook([view("a")]))}
    pre_save_hook(model=dict(text), path="x.json", contents_manager=None)
    assert text["content"] == json.dumps(notebook([view("a")]))


def test_the_server_settings_enable_the_save_hook():
    settings = json.loads((REPO / "omlab" / "viz" / "jupyter_settings" / "server" / "omlab.json").read_text())
    assert settings["ServerApp"]["jpserver_extensions"] == {"omlab.viz.saved_views": True}
    assert saved_views._jupyter_server_extension_points() == [{"module": "omlab.viz.saved_views"}]
    hooks = []

    class Contents:
        register_pre_save_hook = staticmethod(hooks.append)

    class Server:
        contents_manager = Contents()

    saved_views._load_jupyter_server_extension(Server())
    assert hooks == [pre_save_hook]


def test_views_mark_their_live_output(monkeypatch):
    pytest.importorskip("ipywidgets")
    import IPython.display

    from omlab.viz.widgets._display import show

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kwargs: shown.append((obj, kwargs)))
    show("the widget", IPython.display.HTML(STATIC))
    assert shown[0] == ("the widget", {"metadata": {LIVE_VIEW_KEY: True}})
    assert shown[1][1] == {}

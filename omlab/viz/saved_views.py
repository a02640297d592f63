"""What a saved notebook keeps of omlab's live views: their static copies, never an orphaned view.

JupyterLab saves a live ipywidgets view as an output naming its widget model, and the models in the
notebook's widget state, but only the models of a connected kernel: after a kernel restart (or
when a reopened notebook is saved again) the saved state no longer holds them while the outputs
still name them, and the reopened notebook says "Error displaying widget: model not found" (with a
console error) in every view. Each omlab view displays its live output marked with
:data:`LIVE_VIEW_KEY` in the output's metadata and leaves a static copy beside it. This Jupyter
server extension (enabled by ``omlab/viz/jupyter_settings/server/omlab.json``, which installing
omlab puts in ``etc/jupyter/jupyter_server_config.d``; see :mod:`omlab.viz.jupyter_settings`) drops, at save time, every marked live view whose model the saved
state lacks and opens the static copies beside it, so the reopened notebook shows those copies.
A view whose model is saved stays: the notebook reopens with the view drawn from the saved state.
"""

from __future__ import annotations

from typing import Any

VIEW_MIME = "application/vnd.jupyter.widget-view+json"
STATE_MIME = "application/vnd.jupyter.widget-state+json"
LIVE_VIEW_KEY = "omlab_live_view"
"""Output metadata key of an omlab view's live output (its static copy is another output)."""
STATIC_OPENING = "<details class='omlab-static'>"
"""How a static copy begins (:func:`omlab.viz.widgets._display.static_html`); saved open when its
live view is dropped."""


def saved_models(notebook: dict[str, Any]) -> set[str]:
    """Ids of the widget models held in ``notebook``'s saved widget state."""
    widgets = (notebook.get("metadata") or {}).get("widgets") or {}
    return set((widgets.get(STATE_MIME) or {}).get("state") or {})


def drop_orphaned_views(notebook: dict[str, Any]) -> int:
    """Remove (in place) omlab's live-view outputs whose model ``notebook`` does not save, opening
    the static copies in the same cells; returns how many outputs were removed."""
    models = saved_models(notebook)
    dropped = 0
    for cell in notebook.get("cells") or []:
        outputs = cell.get("outputs")
        if not outputs:
            continue
        kept = [output for output in outputs if not _orphaned(output, models)]
        if len(kept) == len(outputs):
            continue
        dropped += len(outputs) - len(kept)
        for output in kept:
            _open_static(output)
        cell["outputs"] = kept
    return dropped


def pre_save_hook(model: dict[str, Any], **_kwargs: Any) -> None:
    """A Jupyter contents pre-save hook: :func:`drop_orphaned_views` on every saved notebook."""
    if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        drop_orphaned_views(model["content"])


def _orphaned(output: dict[str, Any], models: set[str]) -> bool:
    view = (output.get("data") or {}).get(VIEW_MIME)
    marked = bool((output.get("metadata") or {}).get(LIVE_VIEW_KEY))
    return marked and isinstance(view, dict) and view.get("model_id") not in models


def _open_static(output: dict[str, Any]) -> None:
    data = output.get("data") or {}
    text = data.get("text/html")
    if isinstance(text, list):
        text = "".join(text)
    if isinstance(text, str) and STATIC_OPENING in text:
        data["text/html"] = text.replace(STATIC_OPENING, STATIC_OPENING[:-1] + " open>", 1)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "omlab.viz.saved_views"}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    server_app.contents_manager.register_pre_save_hook(pre_save_hook)


__all__ = ["LIVE_VIEW_KEY", "drop_orphaned_views", "pre_save_hook", "saved_models"]

"""The notebooks in a real browser: JupyterLab + Chromium, every cell run, the widgets looked at.

Asserts what a reader sees rather than what the kernel holds: no "Error displaying widget", the
what-if plot changing after a slider move, the comparison's timelines wider than 300 screen pixels
each, the per-question view's highlighted evidence, and a saved notebook that reopens (on a new
kernel) with its views. Screenshots go to the test's temporary folder and to ``/tmp/omlab-screens``.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from tests.browser.conftest import SCREENS_COPY, Lab

pytestmark = pytest.mark.slow

WIDGET_ERROR = "Error displaying widget"
RUN_TIMEOUT_MS = 300_000
EVIDENCE_CLASS = "omlab-evidence"


def open_notebook(page, lab: Lab, name: str) -> None:
    """Open ``name`` alone and wait until its kernel is ready.

    JupyterLab's workspace would reopen the notebooks an earlier test left open (as hidden tabs
    whose cells stay in the page, and whose unsaved changes block closing them with a dialog), so
    the workspace is reset on load and every locator is scoped to :func:`notebook`.
    """
    page.goto(lab.open_url(f"{name}.ipynb") + "&reset")
    page.wait_for_function("() => window.jupyterapp && document.querySelector('.jp-Notebook')", timeout=120_000)
    page.evaluate(
        """async () => { const w = window.jupyterapp.shell.currentWidget;
        await w.context.ready; await w.sessionContext.ready; }"""
    )
    panels = page.evaluate("() => [...document.querySelectorAll('.jp-NotebookPanel')].length")
    assert panels == 1, f"opening {name} left {panels} notebooks open"
    current = page.evaluate("() => window.jupyterapp.shell.currentWidget.context.path")
    assert current.endswith(f"{name}.ipynb"), f"opened {name} but the current tab is {current}"


def notebook(page):
    """The notebook on screen (the current tab's), for locators that must not reach other tabs."""
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").first


def run_all(page, lab: Lab, name: str) -> None:
    """Open ``name``, run every cell and wait for the last to finish; fail on a cell error."""
    open_notebook(page, lab, name)
    page.set_default_timeout(RUN_TIMEOUT_MS)
    page.evaluate("async () => { await window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-InputPrompt')].every(p => !p.textContent.includes('*'))"""
    )
    page.wait_for_timeout(1500)  # widget views render after their output arrives
    errors = (
        notebook(page)
        .locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        .all_inner_texts()
    )
    tracebacks = [text for text in errors if "Traceback" in text or "Error" in text.splitlines()[-1:][0:1]]
    assert not notebook(page).locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']").count(), (
        f"{name}: a cell raised:\n"
        + "\n".join(notebook(page).locator(".jp-OutputArea-output").all_inner_texts())[-3000:]
    )
    assert not tracebacks, f"{name}: {tracebacks}"


def last_cell(page):
    return notebook(page).locator(".jp-Cell").last


def screenshot(page, lab: Lab, name: str, element=None) -> Path:
    """A 1440x900 screenshot (scrolled to ``element`` if given), kept and copied for the lead."""
    if element is not None:
        element.scroll_into_view_if_needed()
        element.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
    path = lab.screens / f"{name}.png"
    page.screenshot(path=str(path))
    SCREENS_COPY.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, SCREENS_COPY / path.name)
    return path


def assert_no_widget_error(page, name: str) -> None:
    count = notebook(page).get_by_text(WIDGET_ERROR).count()
    assert count == 0, f"{name}: {count} output(s) say {WIDGET_ERROR!r}"


def dark_runs(png: bytes, *, min_length: int) -> list[tuple[int, int, int]]:
    """Horizontal runs of near-black pixels at least ``min_length`` long: ``(row, start, length)``.

    An axes' bottom spine is such a run (the house style hides the top and right spines and its
    grid is light grey), so the runs measure each plot's on-screen axes width.
    """
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    width, height = image.size
    pixels = image.load()
    runs = []
    for row in range(height):
        start = None
        for column in range(width + 1):
            dark = column < width and pixels[column, row] < 90
            if dark and start is None:
                start = column
            elif not dark and start is not None:
                if column - start >= min_length:
                    runs.append((row, start, column - start))
                start = None
    return runs


def test_tune_buffering_heatmaps_and_what_if_slider(page, lab):
    run_all(page, lab, "02_tune_buffering")
    assert_no_widget_error(page, "02_tune_buffering")
    heatmaps = (
        notebook(page).locator(".jp-Cell").filter(has_text="plot_sweep_heatmap").locator(".jp-OutputArea-output img")
    )
    assert heatmaps.count() >= 1
    screenshot(page, lab, "02-heatmaps", heatmaps.first)

    panel = last_cell(page)
    image = panel.locator(".widget-image").first
    before = image.get_attribute("src")
    slider = panel.locator(".widget-slider").filter(has_text="blockAfter").first
    readout = slider.locator(".widget-readout")
    readout.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("2.5")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "([element, before]) => element.getAttribute('src') !== before", arg=[image.element_handle(), before]
    )
    screenshot(page, lab, "02-what-if-after-slider", panel)
    box = panel.locator(".widget-slider").first.bounding_box()
    image_box = image.bounding_box()
    # sliders and the plot on one 1440x900 screen
    assert image_box["y"] + image_box["height"] - box["y"] <= 900 - 60


def test_model_tiers_compare_view_has_wide_axes(page, lab):
    run_all(page, lab, "03_model_tiers")
    assert_no_widget_error(page, "03_model_tiers")
    view = last_cell(page)
    timelines = view.locator(".widget-image").first
    timelines.scroll_into_view_if_needed()
    png = timelines.screenshot()
    (lab.screens / "03-compare-timelines.png").write_bytes(png)
    screenshot(page, lab, "03-compare-view", view)
    runs = dark_runs(png, min_length=300)
    starts = {start // 50 for _, start, _ in runs}
    assert len(starts) >= 2, f"expected two axes over 300 px wide on screen, found spines {runs[:6]}"


def test_explore_events_and_the_per_question_view(page, lab):
    run_all(page, lab, "04_explore_events")
    assert_no_widget_error(page, "04_explore_events")
    # the explorer steps through events in the live kernel; an event that changes the memory
    # shows its new lines highlighted
    explorer = notebook(page).locator(".jp-Cell").filter(has_text="next event ▶")
    assert explorer.count() == 1, "the explorer has no next-event button"
    following = explorer.get_by_role("button", name="next event ▶")
    added = explorer.locator(".omlab-log-added")
    for _ in range(40):
        if added.count():
            break
        following.click()
        page.wait_for_timeout(400)
    assert added.count() >= 1, "no event step showed a highlighted (added) memory line"
    screenshot(page, lab, "04-explorer", added.first)
    evidence = notebook(page).locator(f".{EVIDENCE_CLASS}")
    assert evidence.count() >= 1, "the per-question view shows no highlighted evidence line"
    screenshot(page, lab, "04-per-question", evidence.first)


def test_saved_notebook_reopens_without_widget_errors(page, lab):
    name = "02_tune_buffering"
    run_all(page, lab, name)
    page.evaluate(
        """async () => { const app = window.jupyterapp; const w = app.shell.currentWidget;
        await app.commands.execute('docmanager:save'); await w.sessionContext.shutdown();
        await app.commands.execute('application:close-all'); }"""
    )
    saved = json.loads((lab.notebooks / f"{name}.ipynb").read_text())
    assert "application/vnd.jupyter.widget-state+json" in saved["metadata"].get("widgets", {})
    static = [
        output
        for cell in saved["cells"]
        for output in cell.get("outputs", [])
        if "omlab-static" in "".join(output.get("data", {}).get("text/html", ""))
    ]
    assert static, "the what-if panel left no static copy in the saved notebook"
    open_notebook(page, lab, name)
    page.wait_for_timeout(3000)
    assert_no_widget_error(page, f"{name} reopened")
    screenshot(page, lab, "02-reopened", last_cell(page))
    assert notebook(page).locator(".omlab-static").count() >= 1

"""The static site (``omlab report --format html`` over a results folder) in Chromium from file://,
with no server: open the list, filter it, sort it, open a run, filter its questions, open a
question, open a call (its prompt and response), compare two cells of a sweep. The folder holds
an offline run of a small synthetic suite and two hand-written cells of a sweep."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser.conftest import CHROMIUM, SCREENS_COPY, VIEWPORT
from tests.browser.test_view_in_browser import SMALL, _environment
from tests.viz_site.runs import write_run

pytestmark = pytest.mark.slow

CELLS = ("20250301T090000-cell01", "20250301T090100-cell02")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, Path]:
    pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]'")
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    root = tmp_path_factory.mktemp("static-site")
    (root / "home").mkdir()
    results = root / "results"
    suite = root / "view-small.toml"
    suite.write_text(SMALL)
    env = _environment(root)
    cli = [sys.executable, "-m", "omlab.cli.main"]
    subprocess.run([*cli, "run", str(suite), "--results", str(results)], env=env, check=True, capture_output=True)
    for run_id, tokens, accuracy in ((CELLS[0], 4000, 0.5), (CELLS[1], 8000, 0.75)):
        write_run(
            results,
            run_id,
            suite="hand",
            config_name=f"messageTokens={tokens}",
            config={"sweep_id": "hand-sweep", "engine": {"observation": {"messageTokens": tokens}}},
            metrics={"accuracy": accuracy},
        )
    out = root / "site"
    subprocess.run(
        [*cli, "report", "--format", "html", "--plots", "--results", str(results), "--out", str(out)],
        env=env,
        check=True,
        capture_output=True,
    )
    # the server's results folder is gone: the site stands alone
    shutil.rmtree(results)
    return out, root / "screens"


@pytest.fixture(scope="module")
def page(site):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        context = chromium.new_context(viewport=VIEWPORT)
        # no network: any request that is not a file of the site fails the test
        requests: list[str] = []
        context.route(re.compile(r"^(?!file://).*"), lambda route: (requests.append(route.request.url), route.abort()))
        try:
            yield context.new_page(), requests
        finally:
            context.close()
            chromium.close()


def _shot(page, screens: Path, name: str) -> None:
    screens.mkdir(parents=True, exist_ok=True)
    path = screens / f"static-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    SCREENS_COPY.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, SCREENS_COPY / path.name)


def test_list_filter_sort_run_question_call_and_compare_from_file(site, page):
    out, screens = site
    page, requests = page
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    index = (out / "index.html").as_uri()
    page.goto(index)
    rows = page.locator("table#runs tr[data-run]:visible")
    assert rows.count() == 3
    assert page.locator("tbody.sweep[data-sweep='hand-sweep'] tr[data-run]").count() == 2
    _shot(page, screens, "01-run-list")

    # filter: the suite select submits the form to the page, whose script hides the other rows
    with page.expect_navigation():
        page.select_option("select#filter-suite", "view-small")
    assert "suite=view-small" in page.url and page.url.startswith("file://")
    assert rows.count() == 1
    assert page.locator("#run-count").inner_text().startswith("1 of 3 runs (filtered)")
    assert page.locator("select#filter-suite").input_value() == "view-small"
    assert page.locator("tbody.sweep").is_hidden()
    _shot(page, screens, "02-filtered")

    # text filter, then sort on a headline number by its header (the filter is kept)
    page.goto(index + "?text=hand")
    assert rows.count() == 2
    page.click("th a[data-sort='m.accuracy']")
    page.wait_for_url(re.compile(r"sort=m\.accuracy"))
    assert "text=hand" in page.url
    assert [rows.nth(i).get_attribute("data-run") for i in range(2)] == [CELLS[1], CELLS[0]]
    assert "accuracy ▼" in page.locator("th a[data-sort='m.accuracy']").inner_text()
    page.click("th a[data-sort='m.accuracy']")
    page.wait_for_url(re.compile(r"desc=0"))
    assert [rows.nth(i).get_attribute("data-run") for i in range(2)] == [CELLS[0], CELLS[1]]

    # a run, its question filter, then one of its questions
    page.goto(index + "?suite=view-small")
    rows.first.locator("a").first.click()
    page.wait_for_url(re.compile(r"/run/[^/]+\.html"))
    assert page.locator("h2", has_text="Headline").count() == 1
    questions = page.locator("table#question-table tr[data-question]:visible")
    assert questions.count() == 6
    images = page.locator("#plots-link")
    assert images.count() == 1
    _shot(page, screens, "03-run")
    run_url = page.url
    with page.expect_navigation():
        page.select_option("select#filter-verdict", "wrong")
    wrong = questions.count()
    assert 0 < wrong < 6 and all(questions.nth(i).get_attribute("data-verdict") == "wrong" for i in range(wrong))
    questions.first.locator("a").click()
    page.wait_for_url(re.compile(r"/question/"))
    section = page.locator("section.omlab-question")
    assert section.count() == 1 and section.locator(".omlab-context").count() == 1
    assert page.locator("tr[data-call]").count() >= 1
    _shot(page, screens, "04-question")
    page.click("#whole-context")
    page.wait_for_url(re.compile(r"/context/"))
    assert page.locator("section.omlab-question .omlab-context").count() == 1

    # a model call of the question: its prompt and response
    page.locator("tr[data-call] a").first.click()
    page.wait_for_url(re.compile(r"/call/"))
    assert page.locator("h1").inner_text().split()[0] in ("actor", "judge")
    assert page.locator("pre.prompt").last.inner_text().strip()
    assert page.locator("pre#response").count() == 1
    _shot(page, screens, "05-call")

    # the run's plots, drawn into the site
    page.goto(run_url)
    page.click("#plots-link")
    page.wait_for_url(re.compile(r"/plots\.html$"))
    plots = page.locator("img.plot")
    assert plots.count() >= 1
    assert all(plots.nth(i).evaluate("img => img.complete && img.naturalWidth > 0") for i in range(plots.count()))

    # compare the two cells of the sweep, ticked in the list: the config diff beside the metric diff
    page.goto(index + "?sweep=hand-sweep")
    for run_id in CELLS:
        page.check(f"input[value='{run_id}']")
    page.click("#compare-button")
    page.wait_for_url(re.compile(r"/compare/.+--.+\.html$"))
    assert "engine.observation.messageTokens" in page.locator("table#config-diff").inner_text()
    assert "+0.250" in page.locator("table#metric-diff").inner_text()
    _shot(page, screens, "06-compare")

    assert not errors, errors
    assert not requests, requests

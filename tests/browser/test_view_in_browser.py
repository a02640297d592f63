"""``omlab view`` in Chromium: open the run list, filter it, open a run, a question, a call (its
prompt and response), and compare two runs. The server is the real command (``omlab view --port
N``) over a results folder holding an offline run of a small synthetic suite and two hand-written
runs of another suite. A question whose evidence a reflection dropped opens on that evidence: the
dropped line beside what the Reflector wrote instead, in the window (``question-evidence.png``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import CHROMIUM, REPO, SCREENS_COPY, VIEWPORT, free_port, wait_for_server
from tests.viz_site.runs import write_run

pytestmark = pytest.mark.slow

SUITE = (REPO / "benchmarks" / "quickstart.toml").read_text()
SMALL = (
    SUITE.replace("seeds = [1, 2, 3]", "seeds = [1]")
    .replace("target_tokens = 30000", "target_tokens = 12000")
    .replace("n_questions = 12", "n_questions = 6")
    .replace('name = "quickstart"', 'name = "view-small"')
    # reflect often, so some questions' evidence is lost at reflection
    .replace("reflection = { observationTokens = 6000 }", "reflection = { observationTokens = 600 }")
)


def _environment(root: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(root / "home"),
        "MPLCONFIGDIR": str(root / "mpl"),
        "MPLBACKEND": "Agg",
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    pytest.importorskip("playwright.sync_api", reason="pip install -e '.[browser]'")
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    root = tmp_path_factory.mktemp("view")
    (root / "home").mkdir()
    results = root / "results"
    suite = root / "view-small.toml"
    suite.write_text(SMALL)
    env = _environment(root)
    cli = [sys.executable, "-m", "omlab.cli.main"]
    subprocess.run([*cli, "run", str(suite), "--results", str(results)], env=env, check=True, capture_output=True)
    write_run(results, "20250301T090000-hand01", suite="hand", config_name="a", metrics={"accuracy": 0.5})
    write_run(
        results,
        "20250301T090100-hand02",
        suite="hand",
        config_name="b",
        config={"engine": {"observation": {"messageTokens": 8000}}},
        metrics={"accuracy": 0.75},
    )
    port = free_port()
    log = root / "view.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [*cli, "view", "--results", str(results), "--port", str(port)],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_for_server(server, url, log)
        yield url, root / "screens"
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.fixture(scope="module")
def page(site):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        context = chromium.new_context(viewport=VIEWPORT)
        try:
            yield context.new_page()
        finally:
            context.close()
            chromium.close()


def _shot(page, screens: Path, name: str) -> Path:
    screens.mkdir(parents=True, exist_ok=True)
    path = screens / f"view-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    SCREENS_COPY.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, SCREENS_COPY / path.name)
    return path


def test_list_filter_run_question_call_and_compare(site, page):
    url, screens = site
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(url)
    rows = page.locator("table#runs tr[data-run]")
    assert rows.count() == 3
    _shot(page, screens, "01-run-list")

    # filter: the suite select submits the form
    with page.expect_navigation():
        page.select_option("select#filter-suite", "view-small")
    assert "suite=view-small" in page.url
    assert rows.count() == 1
    assert page.locator("#run-count").inner_text().startswith("1 of 3 runs")
    _shot(page, screens, "02-filtered")

    # sort on a headline number by its column header
    page.goto(url)
    page.click("th a[data-sort='m.accuracy']")
    page.wait_for_url(re.compile(r"sort=m\.accuracy"))
    accuracies = [rows.nth(i).get_attribute("data-run")[-6:] for i in range(rows.count())]
    assert accuracies[:2] == ["hand02", "hand01"]

    # a run, then one of its questions
    page.goto(url + "?suite=view-small")
    page.locator("table#runs tr[data-run] a").first.click()
    page.wait_for_url(re.compile(r"/run/"))
    assert page.locator("h2", has_text="Headline").count() == 1
    questions = page.locator("table#question-table tr[data-question]")
    assert questions.count() == 6
    _shot(page, screens, "03-run")
    run_url = page.url
    questions.first.locator("a").click()
    page.wait_for_url(re.compile(r"/question/"))
    section = page.locator("section.omlab-question")
    assert section.count() == 1
    assert section.locator(".omlab-context").count() == 1
    assert page.locator("tr[data-call]").count() >= 1  # the actor and judge calls of the question
    _shot(page, screens, "04-question")

    # a model call, from the question's calls
    page.locator("tr[data-call] a").first.click()
    page.wait_for_url(re.compile(r"/call/"))
    assert page.locator("table#call-fields").inner_text().count("input_tokens") == 1
    assert page.locator("h1").inner_text().split()[0] in ("actor", "judge")
    assert page.locator("pre.prompt").count() >= 1 and page.locator("pre.prompt").last.inner_text().strip()
    assert page.locator("pre#response").count() == 1
    _shot(page, screens, "05-call")

    # plots of the run
    page.goto(run_url)
    page.click("#plots-link")
    page.wait_for_url(re.compile(r"/plots$"))
    images = page.locator("img.plot")
    assert images.count() >= 1
    assert all(images.nth(i).evaluate("img => img.naturalWidth > 0") for i in range(images.count()))

    # compare two runs: their config diff beside their metric diff
    page.goto(url + "?suite=hand")
    for run_id in ("20250301T090000-hand01", "20250301T090100-hand02"):
        page.check(f"input[value='{run_id}']")
    page.click("#compare-button")
    page.wait_for_url(re.compile(r"/compare"))
    assert "engine.observation.messageTokens" in page.locator("table#config-diff").inner_text()
    assert "+0.250" in page.locator("table#metric-diff").inner_text()
    _shot(page, screens, "06-compare")
    assert not errors, errors


def _in_window(page, locator) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 200) <= VIEWPORT["height"]


def test_a_question_lost_at_reflection_opens_on_its_evidence(site, page):
    url, screens = site
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(url + "?suite=view-small")
    page.locator("table#runs tr[data-run] a").first.click()
    page.wait_for_url(re.compile(r"/run/"))
    with page.expect_navigation():
        page.select_option("select[name='cause']", "lost_at_reflection")
    lost = page.locator("table#question-table tr[data-question]")
    assert lost.count() >= 1
    lost.first.locator("a").click()
    page.wait_for_url(re.compile(r"/question/"))
    page.wait_for_load_state("load")
    section = page.locator("section.omlab-question")
    assert section.get_attribute("data-cause") == "lost_at_reflection"
    drop = section.locator(".omlab-drop").first
    assert _in_window(page, drop), drop.bounding_box()
    dropped = drop.locator(".omlab-dropped").inner_text()
    assert dropped.startswith("− ") and len(dropped) > 20  # the observation line's text, not a chip
    instead = drop.locator(".omlab-instead")
    assert instead.count() >= 1 and instead.first.inner_text().startswith("+ ")
    assert "the Reflector wrote" in drop.inner_text()
    evidence = section.locator(".omlab-context .omlab-evidence")
    if evidence.count():  # an evidence turn still in the memory: its line is in view in its box
        assert _in_window(page, evidence.first), evidence.first.bounding_box()
    screens.mkdir(parents=True, exist_ok=True)
    path = screens / "question-evidence.png"
    page.screenshot(path=str(path))  # the window as opened, not the whole page
    SCREENS_COPY.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, SCREENS_COPY / path.name)
    assert not errors, errors

"""The run browser's pages, rendered and served: what each shows, filters, sort links, the diff."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from html.parser import HTMLParser

import pytest

from omlab.bench.results.browse import filter_runs, run_list, sort_runs
from omlab.viz.site import pages
from omlab.viz.site.server import start
from tests.viz_site.runs import write_run


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    write_run(folder, "20250301T090000-aaaaaa", suite="quick<b>", metrics={"accuracy": 0.5, "cost_usd": 0.25})
    for index, (buffer, accuracy) in enumerate(((0.1, 0.9), (0.3, 0.7))):
        write_run(
            folder,
            f"20250301T09010{index}-sweep{index}",
            suite="sweepy",
            config_name=f"bufferTokens={buffer}",
            config={"sweep_id": "s1", "engine": {"observation": {"bufferTokens": buffer}}},
            metrics={"accuracy": accuracy},
        )
    write_run(folder, "20250301T090300-dddddd", suite="quick", status="failed", metrics={"accuracy": 0.1})
    return folder


class _Rows(HTMLParser):
    """``data-run`` of each run row and ``data-sweep`` of each sweep group, in page order."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "tr" and "data-run" in values:
            self.order.append(values["data-run"][-6:])
        if tag == "tbody" and "data-sweep" in values:
            self.order.append("sweep:" + values["data-sweep"])


def _order(page: str) -> list[str]:
    parser = _Rows()
    parser.feed(page)
    return parser.order


def _list(results, **query) -> str:
    runs = run_list(results)
    q = pages.ListQuery(**query)
    return pages.runs_page(
        runs, sort_runs(filter_runs(runs, **q.filters()), q.sort, descending=q.desc), q, results_dir=str(results)
    )


def test_the_list_groups_a_sweeps_cells_where_its_first_cell_sorts(results):
    assert _order(_list(results)) == ["dddddd", "sweep:s1", "sweep1", "sweep0", "aaaaaa"]
    by_accuracy = _list(results, sort="m.accuracy", desc=True)
    assert _order(by_accuracy) == ["sweep:s1", "sweep0", "sweep1", "aaaaaa", "dddddd"]
    assert "accuracy ▼" in by_accuracy


def test_the_list_shows_headline_numbers_status_and_escapes_text(results):
    page = _list(results)
    assert "quick&lt;b&gt;" in page and "quick<b>" not in page
    assert "50.0%" in page and "$0.2500" in page
    assert "status-failed" in page


def test_filters_offer_the_values_present_and_keep_the_chosen_one(results):
    page = _list(results, suite="sweepy")
    assert _order(page) == ["sweep:s1", "sweep1", "sweep0"]
    assert '<option value="sweepy" selected>' in page
    assert '<option value="bufferTokens=0.3">' in page
    assert "3 of 5 runs" not in page and "2 of 4 runs (filtered)" in page


def test_sort_links_keep_the_filters_and_flip_the_current_direction(results):
    page = _list(results, suite="quick", sort="m.accuracy", desc=True)
    links = dict(re.findall(r'href="([^"]+)" data-sort="([^"]+)"', page))
    by_key = {key: href.replace("&amp;", "&") for href, key in links.items()}
    assert "suite=quick" in by_key["m.accuracy"] and "desc=0" in by_key["m.accuracy"]
    assert "sort=suite" in by_key["suite"] and "desc=1" in by_key["suite"]


def test_compare_page_shows_the_config_diff_beside_the_metric_diff(results):
    from omlab.bench.results.browse import compare_runs, run_header

    config, metrics = compare_runs(results, "20250301T090100-sweep0", "20250301T090101-sweep1")
    page = pages.compare_page(
        run_header(results, "20250301T090100-sweep0"),
        run_header(results, "20250301T090101-sweep1"),
        config,
        metrics,
        results_dir=str(results),
    )
    assert "engine.observation.bufferTokens" in page and "sweep_id" not in page
    assert re.search(
        r"<td>accuracy</td><td>all</td><td class=\"num\">0.900</td><td class=\"num\">0.700</td>"
        r"<td class=\"num delta-neg\">−0.200</td>",
        page,
    )


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_the_server_serves_list_run_question_call_and_compare(results):
    server = start(results)
    try:
        assert server.url.startswith("http://127.0.0.1:")
        status, page = _get(server.url + "?status=failed")
        assert status == 200 and _order(page) == ["dddddd"]
        status, page = _get(server.url + "run/20250301T090000-aaaaaa")
        assert status == 200 and 'data-question="q0"' in page and 'data-call="20250301T090000-aaaaaa-call1"' in page
        assert "Headline" in page
        status, page = _get(server.url + "run/20250301T090000-aaaaaa?verdict=wrong")
        assert 'data-question="q1"' in page and 'data-question="q0"' not in page
        status, page = _get(server.url + "run/20250301T090000-aaaaaa/question/q1")
        assert status == 200 and "What is fact 1?" in page and "no idea" in page
        # either way the page opens on the evidence (the browser test sees it in the window)
        assert "The memory context around the evidence lines" in page and "scrollIntoView" in page
        status, page = _get(server.url + "run/20250301T090000-aaaaaa/question/q1?context=all")
        assert "The whole memory context." in page and "scrollTop" in page
        assert (
            'data-call="20250301T090000-aaaaaa-call1"' in page
            and 'data-call="20250301T090000-aaaaaa-call0"' not in page
        )
        status, page = _get(server.url + "run/20250301T090000-aaaaaa/call/20250301T090000-aaaaaa-call1")
        assert status == 200 and "omlab/reader" in page and "actor call" in page
        status, page = _get(server.url + "compare?run=20250301T090100-sweep0&run=20250301T090101-sweep1")
        assert status == 200 and "bufferTokens" in page
        status, page = _get(server.url + "static/site.css")
        assert status == 200 and "tbody.sweep" in page
    finally:
        server.stop()


def test_the_server_says_what_is_missing_or_wrong(results):
    server = start(results)
    try:
        status, page = _get(server.url + "run/nosuchrun")
        assert status == 404 and "no run &#39;nosuchrun&#39;" in page
        status, page = _get(server.url + "run/20250301T090000-aaaaaa/question/q99")
        assert status == 404 and "no question" in page
        status, page = _get(server.url + "?sort=colour")
        assert status == 404 and "sort keys are" in page
        status, page = _get(server.url + "compare?run=20250301T090000-aaaaaa")
        assert status == 400 and "exactly two runs" in page
    finally:
        server.stop()

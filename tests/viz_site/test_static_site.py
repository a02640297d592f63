"""The run browser written as a static site (``omlab report --format html`` over a results folder):
every page ``omlab view`` serves that can be a file, from the same templates, linking only to files
of the site (relative paths, so it opens from file:// and can be moved), with no network."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from omlab.bench.results.browse import run_list
from omlab.cli.main import main
from omlab.viz.site.links import LIVE, Links, file_name
from omlab.viz.site.static_site import MARKER, compare_pairs, write_site
from tests.viz_site.runs import write_run

SINGLE = "20250301T090000-aaaaaa"
CELLS = [f"20250301T09010{i}-sweep{i}" for i in range(3)]
BROKEN = "20250301T100000-broken"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    write_run(folder, SINGLE, suite="quick<b>", metrics={"accuracy": 0.5, "cost_usd": 0.25}, questions=3)
    for index, run_id in enumerate(CELLS):
        write_run(
            folder,
            run_id,
            suite="sweepy",
            config_name=f"bufferTokens=0.{index + 1}",
            config={"sweep_id": "s1", "engine": {"observation": {"bufferTokens": index / 10}}},
            metrics={"accuracy": 0.9 - index / 10},
        )
    # a damaged run file: listed, and its page says what is wrong
    (folder / "runs" / f"{BROKEN}.duckdb").write_bytes(b"not a database at all" * 100)
    # a plot drawn earlier by `omlab report RUN --plots`: the site copies it
    reports = folder / "reports" / SINGLE
    reports.mkdir(parents=True)
    (reports / "quick-default-cost-by-role.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return folder


@pytest.fixture(scope="module")
def site(results, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "site"
    written = write_site(results, out)
    return out, written


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.forms: list[str] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        for name in ("href", "src"):
            if values.get(name):
                self.urls.append(values[name])
        if tag == "form" and values.get("action"):
            self.forms.append(values["action"])


def _links(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def test_every_page_of_the_site_is_written(site):
    out, written = site
    names = {path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file()}
    assert {"index.html", "compare.html", "static/site.css", "static/site.js", MARKER} <= names
    for run_id in [SINGLE, *CELLS]:
        assert f"run/{run_id}.html" in names and f"run/{run_id}/plots.html" in names
    for question in ("q0", "q1", "q2"):
        assert f"run/{SINGLE}/question/{question}.html" in names  # the lines around the evidence
        assert f"run/{SINGLE}/context/{question}.html" in names  # the whole memory context
    assert f"run/{SINGLE}/call/{SINGLE}-call2.html" in names
    assert "cannot be read" in (out / "run" / f"{BROKEN}.html").read_text()
    # the three cells of the sweep compared pairwise; the single run has no partner
    assert sorted(n for n in names if n.startswith("compare/")) == [
        f"compare/{a}--{b}.html" for a, b in [(CELLS[0], CELLS[1]), (CELLS[0], CELLS[2]), (CELLS[1], CELLS[2])]
    ]
    assert written.runs == 4 and written.comparisons == 3
    assert written.pages == sum(1 for n in names if n.endswith(".html"))


def test_every_link_and_form_of_every_page_names_a_file_of_the_site(site):
    out, _ = site
    checked = 0
    for page in out.rglob("*.html"):
        found = _links(page)
        for url in found.urls + found.forms:
            parts = urlsplit(url)
            assert not parts.scheme or parts.scheme == "data", f"{page.name}: {url} leaves the site"
            assert not url.startswith("/"), f"{page.name}: {url} is absolute (file:// needs relative links)"
            if parts.scheme == "data" or not parts.path:  # inline, or "?..." / "#...": the page itself
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            assert target.is_file(), f"{page.relative_to(out)} links to missing {url}"
            assert out.resolve() in target.parents, f"{page.name}: {url} is outside the site"
            checked += 1
    assert checked > 100


def test_the_run_list_carries_what_its_script_filters_and_sorts_on(site):
    out, _ = site
    page = (out / "index.html").read_text()
    assert (
        len(re.findall(r'<tr class="(?:run|cell)" data-run=', page)) == 5
        and 'tbody class="sweep" data-sweep="s1"' in page
    )
    row = re.search(rf'<tr class="run" data-run="{SINGLE}"[^>]*>', page).group(0)
    assert 'data-suite="quick&lt;b&gt;"' in row and 'data-status="finished"' in row and 'data-sweep=""' in row
    assert 'data-v="0.5"' in page  # the accuracy cell's sort value, beside its text (50.0%)
    assert '<script src="static/site.js" defer></script>' in page
    assert 'action="compare.html"' in page


def test_a_run_page_offers_only_the_runs_it_was_compared_with(site):
    out, _ = site
    cell = (out / "run" / f"{CELLS[0]}.html").read_text()
    options = re.findall(r'<option value="([^"]+)">2025', cell)
    assert sorted(options) == [CELLS[1], CELLS[2]]
    assert 'href="../index.html?sweep=s1&amp;' in cell  # the other cells of its sweep
    single = (out / "run" / f"{SINGLE}.html").read_text()
    assert 'id="compare-with"' not in single
    assert 'data-question="q1" data-type="single-session-user" data-verdict="wrong"' in single


def test_plots_drawn_before_are_copied_and_a_run_without_says_how_to_draw_them(site):
    out, written = site
    plots = (out / "run" / SINGLE / "plots.html").read_text()
    assert f'src="../../run/{SINGLE}/plot/quick-default-cost-by-role.png"' in plots
    assert (out / "run" / SINGLE / "plot" / "quick-default-cost-by-role.png").is_file()
    assert written.plots == 1
    assert "--plots" in (out / "run" / CELLS[0] / "plots.html").read_text()


def test_writing_again_replaces_the_site_and_never_a_folder_of_other_files(results, site, tmp_path):
    out, _ = site
    (out / "stale.html").write_text("old")
    write_site(results, out)
    assert not (out / "stale.html").exists() and (out / "index.html").is_file()
    foreign = tmp_path / "papers"
    foreign.mkdir()
    (foreign / "draft.tex").write_text("x")
    with pytest.raises(ValueError, match="holding other files"):
        write_site(results, foreign)
    assert (foreign / "draft.tex").read_text() == "x" and not (foreign / "index.html").exists()


def test_pairs_within_a_sweep_all_and_within_a_large_suite_each_with_the_one_before(results):
    runs = run_list(results)
    runs = runs[runs["problem"] == ""]  # the site compares only the runs it can read
    assert compare_pairs(runs) == [(CELLS[0], CELLS[1]), (CELLS[0], CELLS[2]), (CELLS[1], CELLS[2])]
    suite = runs.assign(sweep_id="", suite="one")
    ids = sorted(suite["run_id"])
    assert len(compare_pairs(suite)) == 6
    assert compare_pairs(suite, all_pairs_up_to=3) == [(ids[0], ids[1]), (ids[1], ids[2]), (ids[2], ids[3])]


def test_links_live_and_static_name_the_same_pages():
    assert (
        LIVE.run("r1") == "/run/r1" and LIVE.question("r1", "q 1", whole=True) == "/run/r1/question/q%201?context=all"
    )
    deep = Links.static_at(3)
    assert deep.run("r1") == "../../../run/r1.html"
    assert deep.question("r1", "q/1") == "../../../run/r1/question/q~2F1.html"
    assert deep.compare("b", "a") == "../../../compare/a--b.html" and LIVE.compare("b", "a") == "/compare?run=a&run=b"
    assert Links.static_at(0).runs(sweep="s1") == "index.html?sweep=s1" and Links.static_at(0).runs() == "index.html"
    assert file_name("a~b") == "a~7Eb" and file_name("..") != ".."


def test_report_without_a_run_writes_the_site_and_says_where(results, tmp_path, capsys):
    out = tmp_path / "cli-site"
    assert main(["report", "--format", "html", "--results", str(results), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"site: {out / 'index.html'} (4 runs" in printed and "no server needed" in printed
    assert (out / "index.html").is_file()


def test_report_without_a_run_in_markdown_says_what_to_name(results, capsys):
    assert main(["report", "--results", str(results)]) == 2
    assert "name a run (or 'latest')" in capsys.readouterr().err


def test_report_help_shows_the_site_example(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    assert "omlab report --format html " in capsys.readouterr().out

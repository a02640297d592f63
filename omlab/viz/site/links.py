"""Where each page of the run browser is: the live server's routes (``omlab view``) or the files
of a static site (``omlab report --format html`` over a results folder), so one set of templates
renders both.

The templates never spell a URL: they ask a :class:`Links` (``links.run(run_id)``,
``links.call(run_id, call_id)``...). :data:`LIVE` answers with the server's routes; a static
:class:`Links` answers with relative file paths (``../run/<id>.html``), right for the page it is
made for (:meth:`Links.static_at`), so the site opens from ``file://`` and can be moved or zipped.

Static layout (every path relative to the site folder)::

    index.html                          the run list (filters and sort read from ?query, in the page)
    compare.html                        the comparisons written, and ?run=A&run=B opens one
    compare/<a>--<b>.html               two runs compared (a sorts first)
    run/<run>.html                      a run
    run/<run>/plots.html, plot/<png>    its plots
    run/<run>/question/<q>.html         a question (the lines around its evidence)
    run/<run>/context/<q>.html          the same with the whole memory context
    run/<run>/call/<call>.html          a model call
    static/                             the style sheet and the list's script
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urlencode

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def file_name(identifier: str) -> str:
    """``identifier`` as one file name: letters, digits, ``.``, ``_``, ``-`` kept, any other
    character as ``~XX`` (its UTF-8 bytes in hex), so distinct ids stay distinct files."""
    text = _SAFE.sub(lambda m: "".join(f"~{byte:02X}" for byte in m.group().encode()), str(identifier))
    return text if text not in ("", ".", "..") else f"~{text.encode().hex()}"


@dataclass(frozen=True, slots=True)
class Links:
    """The URLs the pages link to, for the live server (``static=False``, absolute routes) or for
    one page of a static site (``root``: the relative way back to the site folder)."""

    root: str = "/"
    static: bool = False

    @classmethod
    def static_at(cls, depth: int) -> Links:
        """A static site's links for a page ``depth`` folders below the site folder."""
        return cls(root="../" * depth, static=True)

    def runs(self, **query: str) -> str:
        """The run list with these filters / sort (empty values left out)."""
        values = urlencode({k: v for k, v in query.items() if v != ""})
        page = f"{self.root}index.html" if self.static else self.root
        return f"{page}?{values}" if values or not self.static else page

    def run(self, run_id: str) -> str:
        """A run's page."""
        if self.static:
            return f"{self.root}run/{_part(run_id)}.html"
        return f"{self.root}run/{quote(run_id, safe='')}"

    def question(self, run_id: str, question_id: str, *, whole: bool = False) -> str:
        """A question's page (``whole``: with the whole memory context)."""
        if self.static:
            folder = "context" if whole else "question"
            return f"{self.root}run/{_part(run_id)}/{folder}/{_part(question_id)}.html"
        base = f"{self.root}run/{quote(run_id, safe='')}/question/{quote(question_id, safe='')}"
        return f"{base}?context=all" if whole else base

    def call(self, run_id: str, call_id: str) -> str:
        """A model call's page."""
        if self.static:
            return f"{self.root}run/{_part(run_id)}/call/{_part(call_id)}.html"
        return f"{self.root}run/{quote(run_id, safe='')}/call/{quote(call_id, safe='')}"

    def plots(self, run_id: str) -> str:
        """A run's plots page."""
        if self.static:
            return f"{self.root}run/{_part(run_id)}/plots.html"
        return f"{self.root}run/{quote(run_id, safe='')}/plots"

    def plot(self, run_id: str, name: str) -> str:
        """One PNG of a run's plots."""
        return f"{self.root}run/{_part(run_id) if self.static else quote(run_id, safe='')}/plot/{quote(name, safe='')}"

    def compare_form(self) -> str:
        """Where a form posting ``run=A&run=B`` goes (the server's route; a static site's page
        that opens the pair's file)."""
        return f"{self.root}compare.html" if self.static else f"{self.root}compare"

    def compare(self, run_a: str, run_b: str) -> str:
        """Two runs compared (in either order: the older is a)."""
        older, newer = sorted((run_a, run_b))
        if self.static:
            return f"{self.root}compare/{_part(older)}--{_part(newer)}.html"
        return f"{self.root}compare?{urlencode([('run', older), ('run', newer)])}"

    def asset(self, name: str) -> str:
        """A file of the browser's own (style sheet, script)."""
        return f"{self.root}static/{name}"


def _part(identifier: str) -> str:
    # the file name as it sits on disk, quoted for a URL ("~" is URL-safe, so nothing changes
    # today; quoting keeps a future character set honest)
    return quote(file_name(identifier), safe="~")


LIVE = Links()
"""The live server's routes."""

__all__ = ["LIVE", "Links", "file_name"]

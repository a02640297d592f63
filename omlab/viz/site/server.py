"""The run browser's web server (tornado): each request reads the results folder and renders a page.

Routes::

    /                                  the run list (?suite= &config= &status= &tag= &sweep= &text= &sort= &desc=)
    /run/<run>                         a run: report tables, questions, model calls (?calls=N, 0: all)
    /run/<run>/question/<question>     one question's answers, evidence lineage and memory context (?context=all)
    /run/<run>/call/<call>             one model call
    /run/<run>/plots                   the run's plots (drawn on first request into a temporary folder)
    /compare?run=A&run=B               the settings that differ and the metrics side by side

Nothing is written to the results folder; plots go to the server's own temporary folder. The
server binds 127.0.0.1 unless told otherwise: the pages show prompts and answers of the runs.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tornado.web
from tornado.httpserver import HTTPServer

from omlab.viz.site import pages, views

DEFAULT_PORT = 8750
CALLS_SHOWN = 200
"""Model calls listed on a run page unless ``?calls=0`` asks for all."""


class _Page(tornado.web.RequestHandler):
    """Base handler: the results folder, and refused input as a page that says what is wrong."""

    def initialize(self, results_dir: Path, plots_dir: Path) -> None:
        self.results_dir = results_dir
        self.plots_dir = plots_dir

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        error = kwargs.get("exc_info", (None, None))[1]
        message = str(error) if isinstance(error, ValueError) else self._reason
        title = "Not found" if status_code == 404 else f"Error {status_code}"
        self.finish(pages.error_page(title, message, results_dir=str(self.results_dir)))

    def _run(self, method: Callable[..., str], *args: Any) -> None:
        try:
            self.write(method(*args))
        except ValueError as error:  # an unknown run, call or filter: the user's to fix
            self.set_status(404)
            self.write(pages.error_page("Not found", str(error), results_dir=str(self.results_dir)))


class RunsHandler(_Page):
    def get(self) -> None:
        query = pages.ListQuery(
            **{name: self.get_argument(name, "") for name in ("suite", "config", "status", "tag", "sweep", "text")},
            sort=self.get_argument("sort", "started_at"),
            desc=self.get_argument("desc", "1") != "0",
        )
        self._run(views.runs_view, self.results_dir, query)


class RunHandler(_Page):
    def get(self, run_id: str) -> None:
        limit = int(self.get_argument("calls", str(CALLS_SHOWN)) or 0)
        filters = {name: self.get_argument(name, "") for name in ("type", "verdict", "cause")}
        self._run(views.run_view, self.results_dir, run_id, filters, limit)


class QuestionHandler(_Page):
    def get(self, run_id: str, question_id: str) -> None:
        whole = self.get_argument("context", "") == "all"
        self._run(views.question_view, self.results_dir, run_id, question_id, whole)


class CallHandler(_Page):
    def get(self, run_id: str, call_id: str) -> None:
        self._run(views.call_view, self.results_dir, run_id, call_id)


class CompareHandler(_Page):
    def get(self) -> None:
        runs = self.get_arguments("run")
        if len(runs) != 2:
            self.set_status(400)
            self.write(
                pages.error_page(
                    "Pick two runs",
                    f"compare needs exactly two runs (got {len(runs)}): tick two in the run list",
                    results_dir=str(self.results_dir),
                )
            )
            return
        # a is the older run (generated ids sort by start time): the deltas read as "what changed since"
        older, newer = sorted(runs)
        self._run(views.compare_view, self.results_dir, older, newer)


class PlotsHandler(_Page):
    def get(self, run_id: str) -> None:
        self._run(views.plots_view, self.results_dir, run_id, self.plots_dir / run_id)


def make_app(results_dir: str | Path, plots_dir: str | Path) -> tornado.web.Application:
    """The browser's tornado application over ``results_dir`` (plots drawn into ``plots_dir``)."""
    options = {"results_dir": Path(results_dir), "plots_dir": Path(plots_dir)}
    segment = r"([^/]+)"
    return tornado.web.Application(
        [
            (r"/", RunsHandler, options),
            (rf"/run/{segment}", RunHandler, options),
            (rf"/run/{segment}/question/{segment}", QuestionHandler, options),
            (rf"/run/{segment}/call/{segment}", CallHandler, options),
            (rf"/run/{segment}/plots", PlotsHandler, options),
            (rf"/run/{segment}/plot/(.+)", _PlotFile, {"path": str(plots_dir)}),
            (r"/compare", CompareHandler, options),
            (r"/static/(.*)", tornado.web.StaticFileHandler, {"path": str(Path(__file__).parent / "static")}),
        ]
    )


class _PlotFile(tornado.web.StaticFileHandler):
    """``/run/<run>/plot/<file>``: a PNG drawn into the run's plots folder."""

    def get(self, run_id: str, name: str, include_body: bool = True) -> Any:  # type: ignore[override]
        return super().get(f"{run_id}/{name}", include_body)


class Server:
    """A running browser: ``url``, and :meth:`stop`. Started by :func:`start` in a thread."""

    def __init__(self, results_dir: str | Path, host: str, port: int) -> None:
        self.results_dir = Path(results_dir)
        self.host = host
        self._plots = Path(tempfile.mkdtemp(prefix="omlab-view-plots-"))
        self._sockets = _bind(host, port)
        self.port = self._sockets[0].getsockname()[1]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Where the run list is."""
        return f"http://{self.host}:{self.port}/"

    def serve_forever(self) -> None:
        """Serve in this thread until :meth:`stop` (or Ctrl-C)."""
        asyncio.run(self._serve())

    def stop(self) -> None:
        """Stop serving and remove the plots folder."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)
        shutil.rmtree(self._plots, ignore_errors=True)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = HTTPServer(make_app(self.results_dir, self._plots))
        server.add_sockets(self._sockets)
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            server.stop()
            await server.close_all_connections()

    _stop: asyncio.Event | None = None


def start(results_dir: str | Path, *, host: str = "127.0.0.1", port: int = 0) -> Server:
    """Serve ``results_dir`` from a background thread (``port`` 0: a free one); returns the server."""
    server = Server(results_dir, host, port)
    server._thread = threading.Thread(target=server.serve_forever, name="omlab-view", daemon=True)
    server._thread.start()
    server._ready.wait(10)
    return server


def _bind(host: str, port: int) -> list[socket.socket]:
    from tornado.netutil import bind_sockets

    try:
        return bind_sockets(port, address=host)
    except OSError as error:
        raise ValueError(f"cannot listen on {host}:{port} ({error.strerror}); pick another --port") from error


__all__ = ["CALLS_SHOWN", "DEFAULT_PORT", "Server", "make_app", "start"]

"""The lifecycle the test servers share: a threaded HTTP server on 127.0.0.1 that stops when asked,
when its ``with`` block ends, or by itself after ``lifetime_s`` (so a crashed test leaves nothing)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LocalHTTPServer:
    """Serve ``handler`` on 127.0.0.1; subclasses give the handler and their own state."""

    name = "local-http-server"

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, lifetime_s: float, port: int = 0) -> None:
        self.lifetime_s = lifetime_s
        self._stopped = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        """The base URL to give litellm as ``api_base``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> Self:
        threading.Thread(target=self._server.serve_forever, name=self.name, daemon=True).start()
        threading.Thread(target=self._expire, name=f"{self.name}-timer", daemon=True).start()
        return self

    def stop(self) -> None:
        if not self._stopped.is_set():
            self._stopped.set()
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _expire(self) -> None:
        if not self._stopped.wait(self.lifetime_s):
            self.stop()


__all__ = ["LocalHTTPServer"]

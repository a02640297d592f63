"""A tiny scripted OpenAI-compatible server on 127.0.0.1 for tests (no network beyond loopback).

Each POST to ``/v1/chat/completions`` pops the next :class:`Reply` from the script (or answers with
``default`` once the script is empty) and records the request. Delays wait on an event that
``close()`` sets, so a test never waits for a sleeping handler at teardown.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Reply:
    """One scripted answer: an HTTP status, headers, a JSON (or raw text) body and a delay."""

    status: int = 200
    body: Any = None  # dict -> JSON; str -> sent verbatim; None -> a standard completion
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def completion_body(
    text: str = "hello from fake",
    *,
    prompt_tokens: int = 12,
    completion_tokens: int = 5,
    finish_reason: str = "stop",
    model: str = "fake",
) -> dict[str, Any]:
    """A well-formed chat.completion body with the given text and usage."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error_body(message: str, kind: str = "server_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": None, "param": None}}


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any


class FakeOpenAIServer:
    """Start with ``with FakeOpenAIServer() as server:``; ``server.api_base`` is the base URL."""

    def __init__(self, script: list[Reply] | None = None, *, default: Reply | None = None) -> None:
        self.script: deque[Reply] = deque(script or [])
        self.default = default or Reply()
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def is_running(self) -> bool:
        return self._thread.is_alive()

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def start(self) -> Self:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            return self.script.popleft() if self.script else self.default


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: FakeOpenAIServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except json.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        owner = self.server.owner
        request = RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(Reply(status=404, body=error_body(f"no route {self.path}", "not_found")))
            return
        reply = owner._next_reply(request)
        if reply.delay_s and owner._closing.wait(reply.delay_s):
            return  # the server is shutting down: drop the request
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        if reply.body is None:
            payload = json.dumps(completion_body()).encode()
        elif isinstance(reply.body, str):
            payload = reply.body.encode()
        else:
            payload = json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test): nothing to answer

    def log_message(self, format: str, *args: Any) -> None:
        pass

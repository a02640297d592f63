"""A local OpenAI-compatible server that answers with omlab's offline models and injects faults.

``FaultServer(rate=0.2, seed=1)`` listens on 127.0.0.1 (a free port, or ``port``) and serves
``POST …/chat/completions``: the request's ``model`` names an offline model (``observer``,
``reflector``, ``reader``, ``judge``) that writes the reply. With probability ``rate`` a request
gets a fault instead, drawn evenly from :data:`FAULTS`:

* ``429`` / ``503``: an error status with ``retry-after-ms`` (what providers send when busy);
* ``500``: an error status without a hint (the client backs off);
* ``hang``: no reply for ``hang_s`` seconds, then the connection is closed;
* ``malformed``: HTTP 200 with a body that is not JSON;
* ``empty``: HTTP 200 with an empty message content;
* ``loop``: HTTP 200 with a degenerate repetition loop (``loop_text``, or the texts of a tuple in
  turn: by default one line 400 times; :data:`BULLET_LOOP` and :data:`PHRASE_LOOP` are the shapes
  that used to pass);
* ``echo`` (only when asked for): HTTP 500 whose message repeats the request's headers and body,
  as careless providers do; ``echoed`` keeps every such message;
* ``echo_key`` (only when asked for): HTTP 401 whose message quotes the API key it was sent, bare
  (no ``Bearer``), as a provider rejecting a key may; ``echoed`` keeps these too.

``fault_models`` limits the faults to requests for those offline models (the others are always
answered). ``hold()`` keeps every request that arrives from then on waiting, unanswered, until
``release()`` (``held`` counts the ones waiting): a test freezes the clients mid-call this way.
``arrivals`` keeps the monotonic time each request started to be handled, so requests can be
counted from an instant (``requests_since``). Bounded: after ``max_requests`` requests every further one gets a 503, and the server shuts itself
down after ``lifetime_s`` seconds even if nobody stops it. ``requests`` and ``faults`` count what it
did (thread-safe). Seeded: the fault sequence depends only on ``seed`` and the request order.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler
from typing import Any

from omlab.llm.offline import get_offline_model
from tests.servers.local_http import LocalHTTPServer

FAULTS = ("429", "500", "503", "hang", "malformed", "empty", "loop")
LOOP_LINE = "- The user said the very same thing again, and again, and again."
LOOP_TEXT = f"{LOOP_LINE}\n" * 400
BULLET_LOOP = "<observations>\nDate: Jan 1, 2026\n" + "\n".join([LOOP_LINE] * 120) + "\n</observations>"
"""One bulleted line 120 times: 7.8k characters, under the 10,000-character collapse bound."""
PHRASE_UNIT = "and then the user said the trip to Lisbon was in May 2023, "
PHRASE_LOOP = PHRASE_UNIT * 120
"""A 7,080-character loop on one line with a 59-character period."""


class FaultServer(LocalHTTPServer):
    """See the module docstring. Use as a context manager, or ``start()`` / ``stop()``."""

    name = "fault-server"

    def __init__(
        self,
        *,
        rate: float = 0.2,
        seed: int = 0,
        faults: tuple[str, ...] = FAULTS,
        hang_s: float = 2.0,
        max_requests: int = 2_000,
        lifetime_s: float = 120.0,
        port: int = 0,
        loop_text: str | tuple[str, ...] = LOOP_TEXT,
        fault_models: tuple[str, ...] | None = None,
    ) -> None:
        self.rate = rate
        self.loop_texts = (loop_text,) if isinstance(loop_text, str) else loop_text
        self.fault_models = fault_models
        self.faults_enabled = faults
        self.hang_s = hang_s
        self.max_requests = max_requests
        self.requests = 0
        self.faults: Counter[str] = Counter()
        self.by_model: Counter[str] = Counter()
        self.echoed: list[str] = []
        self.arrivals: list[float] = []
        self.held = 0
        self._released = threading.Event()
        self._released.set()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        super().__init__(self._handler(), lifetime_s=lifetime_s, port=port)

    def hold(self) -> None:
        """Keep every request from now on waiting, unanswered, until :meth:`release`."""
        self._released.clear()

    def release(self) -> None:
        """Answer the held requests (and every later one) again."""
        self._released.set()

    def requests_since(self, instant: float) -> int:
        """Requests that arrived after ``instant`` (``time.monotonic()``)."""
        with self._lock:
            return sum(1 for arrival in self.arrivals if arrival > instant)

    def _wait_if_held(self) -> None:
        if self._released.is_set():
            return
        with self._lock:
            self.held += 1
        try:
            while not self._released.wait(0.05) and not self._stopped.is_set():
                pass
        finally:
            with self._lock:
                self.held -= 1

    def _draw(self, model: str) -> str | None:
        with self._lock:
            self.requests += 1
            self.by_model[model] += 1
            if self.requests > self.max_requests:
                self.faults["over-budget"] += 1
                return "503"
            if self.fault_models is not None and model not in self.fault_models:
                return None
            if self._rng.random() >= self.rate:
                return None
            fault = self._rng.choice(self.faults_enabled)
            self.faults[fault] += 1
            return fault

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:
                with server._lock:
                    server.arrivals.append(time.monotonic())
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                body = json.loads(raw or b"{}")
                model = str(body.get("model", "")).split("/")[-1]
                fault = server._draw(model)
                server._wait_if_held()
                if fault in ("429", "503"):
                    self._send(int(fault), {"error": {"message": f"fault {fault}"}}, {"retry-after-ms": "20"})
                elif fault == "echo":
                    message = f"cannot serve {dict(self.headers.items())} {raw.decode(errors='replace')}"
                    with server._lock:
                        server.echoed.append(message)
                    self._send(500, {"error": {"message": message}})
                elif fault == "echo_key":
                    key = str(self.headers.get("authorization", "")).removeprefix("Bearer ").strip()
                    message = f"Incorrect API key provided: {key}. You can find your API key in your account."
                    with server._lock:
                        server.echoed.append(message)
                    self._send(401, {"error": {"message": message, "type": "invalid_request_error"}})
                elif fault == "500":
                    self._send(500, {"error": {"message": "fault 500"}})
                elif fault == "hang":
                    server._stopped.wait(server.hang_s)
                    self.close_connection = True
                elif fault == "malformed":
                    self._raw(200, b'{"choices": [{"message": ')
                elif fault == "empty":
                    self._send(200, _completion(model, ""))
                elif fault == "loop":
                    with server._lock:
                        text = server.loop_texts[server.faults["loop"] % len(server.loop_texts)]
                    self._send(200, _completion(model, text))
                else:
                    result = get_offline_model(model).generate(
                        body.get("messages", []),
                        max_output_tokens=body.get("max_tokens"),
                        temperature=body.get("temperature"),
                    )
                    self._send(200, _completion(model, result.text, result.input_tokens, result.output_tokens))

            def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
                self._raw(status, json.dumps(payload).encode(), headers)

            def _raw(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

        return Handler


def _completion(model: str, text: str, input_tokens: int = 10, output_tokens: int = 1) -> dict[str, Any]:
    return {
        "id": f"fault-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
    }


def fault_suite(url: str, *, name: str = "faulty", seeds: str = "[11, 12]", timeout_s: float = 1.0) -> str:
    """A tiny suite whose four roles all go through the fault server at ``url`` (litellm's
    OpenAI provider), with a short per-request timeout so a hang costs little."""
    roles = {"observer": "observer", "reflector": "reflector", "actor": "reader", "judge": "judge"}
    models = "\n".join(
        f'{role} = {{ model = "openai/{offline}", modelSettings = {{ api_base = "{url}", api_key = "fault-key" }} }}'
        for role, offline in roles.items()
    )
    prices = "\n".join(
        f'"openai/{offline}" = {{ input_per_mtok = 0.3, output_per_mtok = 2.5 }}' for offline in roles.values()
    )
    return f"""
[suite]
name = "{name}"

[dataset]
kind = "synthetic"
seeds = {seeds}
target_tokens = 4000
n_questions = 4

[engine]
observation = {{ messageTokens = 1200, bufferTokens = 0.25, blockAfter = 1.2, failurePolicy = "continue" }}
reflection = {{ observationTokens = 1500 }}

[models]
{models}

[models.prices]
{prices}

[latency]
default = {{ kind = "fixed", seconds = 4 }}

[cache]
mode = "off"
prepared = true  # the final memory of each conversation, for the message accounting

[retry]
timeout = {timeout_s}
deadline = 60
backoff = 0.05
"""

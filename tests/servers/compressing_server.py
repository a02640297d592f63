"""An OpenAI-compatible Observer/Reflector on 127.0.0.1 with a set compression and latency.

``CompressingServer(observer_ratio=4, reflector_ratio=3, base_s=0.25, output_s=0.004, sigma=0.25)``
answers ``POST …/chat/completions`` for models whose name ends in ``observer`` or ``reflector``:

* **size**: the reply has ``round(content / ratio)`` tokens (tokenx), content being the tokens of
  the request's content section (the observer's ``## New Message History to Observe``, the
  reflector's ``## OBSERVATIONS TO REFLECT ON``). The observer copies history words into 🟡 lines
  under the history's first date; the reflector keeps the newest observation lines that fit.
  Both reply in the engine's ``<observations>`` format.
* **latency**: it waits ``(base_s + output tokens × output_s) × exp(N(0, sigma) − sigma²/2)``
  seconds (mean ``base_s + output × output_s``), drawn from a generator seeded with ``seed``.
* **usage**: prompt tokens are the tokenx estimate of every message's text (what the offline
  models report), completion tokens that of the reply.

Other models get a 404. ``calls`` keeps ``(role, content, output tokens, delay)`` per request.
Shuts itself down after ``lifetime_s`` even if nobody stops it.
"""

from __future__ import annotations

import json
import math
import random
import re
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from omlab.tokens.tokenx import estimate_token_count
from tests.servers.local_http import LocalHTTPServer

HISTORY_HEADER = "## New Message History to Observe"
TASK_HEADER = "## Your Task"
OBSERVATIONS_HEADER = "## OBSERVATIONS TO REFLECT ON"
_DATE_HEADER_RE = re.compile(r"^(?P<mon>[A-Z][a-z]{2}) (?P<day>\d{1,2}) (?P<year>\d{4}):$")
_ENTRY_RE = re.compile(r"^[A-Z][A-Za-z -]*(?: \((?P<time>[^)]*)\))?: (?P<text>.*)$")
_WORDS_PER_LINE = 14


class CompressingServer(LocalHTTPServer):
    """See the module docstring. Use as a context manager, or ``start()`` / ``stop()``."""

    name = "compressing-server"

    def __init__(
        self,
        *,
        observer_ratio: float = 4.0,
        reflector_ratio: float = 3.0,
        base_s: float = 0.25,
        output_s: float = 0.004,
        sigma: float = 0.25,
        seed: int = 0,
        lifetime_s: float = 1_800.0,
    ) -> None:
        self.ratios = {"observer": observer_ratio, "reflector": reflector_ratio}
        self.base_s, self.output_s, self.sigma = base_s, output_s, sigma
        self.calls: list[tuple[str, int, int, float]] = []
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        super().__init__(self._handler(), lifetime_s=lifetime_s)

    def reply(self, role: str, messages: list[dict[str, Any]]) -> tuple[str, int, int, float]:
        """``(text, content tokens, prompt tokens, delay)`` for a request (no waiting)."""
        prompt = next((_text(m) for m in reversed(messages) if m.get("role") == "user"), "")
        if role == "observer":
            section = _section(prompt, HISTORY_HEADER, TASK_HEADER)
            content = estimate_token_count(section)
            text = _observe(section, max(1, round(content / self.ratios[role])))
        else:
            section = _section(prompt, OBSERVATIONS_HEADER, "\n## ")
            content = estimate_token_count(section)
            text = _reflect(section, max(1, round(content / self.ratios[role])))
        output = estimate_token_count(text)
        with self._lock:
            noise = math.exp(self._rng.gauss(0.0, self.sigma) - self.sigma**2 / 2) if self.sigma else 1.0
            delay = (self.base_s + output * self.output_s) * noise
            self.calls.append((role, content, output, delay))
        prompt_tokens = sum(estimate_token_count(_text(m)) for m in messages)
        return text, content, prompt_tokens, delay

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                model = str(body.get("model", ""))
                role = next((r for r in ("observer", "reflector") if model.endswith(r)), None)
                if role is None:
                    self._send(
                        404, {"error": {"message": f"this server serves observer/reflector models, not {model}"}}
                    )
                    return
                text, _, prompt_tokens, delay = server.reply(role, body.get("messages", []))
                if server._stopped.wait(delay):
                    return
                usage = {"prompt_tokens": prompt_tokens, "completion_tokens": estimate_token_count(text)}
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                self._send(
                    200,
                    {
                        "id": f"cmpl-{time.monotonic_ns()}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                        ],
                        "usage": usage,
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _section(prompt: str, header: str, end: str) -> str:
    start = prompt.find(header)
    if start < 0:
        return ""
    body = prompt[start + len(header) :]
    stop = body.find(end)
    return (body if stop < 0 else body[:stop]).strip()


def _observe(history: str, target: int) -> str:
    """History words as 🟡 lines under the first date, about ``target`` tokens in all."""
    date_line, time_label, words = "Date: Jan 1, 2024", "00:00", []
    for line in history.splitlines():
        header = _DATE_HEADER_RE.match(line.strip())
        if header:
            if not words:
                date_line = f"Date: {header['mon']} {int(header['day'])}, {header['year']}"
            continue
        entry = _ENTRY_RE.match(line.strip())
        if entry and entry["time"] and not words:
            time_label = entry["time"]
        words.extend((entry["text"] if entry else line).split())
    lines = ["<observations>", date_line]
    size = estimate_token_count("\n".join([*lines, "</observations>"]))
    for start in range(0, len(words), _WORDS_PER_LINE):
        line = f"* 🟡 ({time_label}) " + " ".join(words[start : start + _WORDS_PER_LINE])
        cost = estimate_token_count(line)
        if size + cost > target and len(lines) > 2:
            break
        lines.append(line)
        size += cost
    return "\n".join([*lines, "</observations>"])


def _reflect(observations: str, target: int) -> str:
    """The newest observation lines (under their date lines) that fit in about ``target`` tokens."""
    lines = [
        line
        for line in observations.splitlines()
        if line.strip() and "observations>" not in line and not line.startswith("---")
    ]
    size = estimate_token_count("<observations>\n</observations>")
    keep: set[int] = set()
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith("Date:"):
            continue
        cost = estimate_token_count(lines[index])
        if size + cost > target and keep:
            break
        keep.add(index)
        size += cost
    out: list[str] = []
    date_line = None
    for index, line in enumerate(lines):
        if line.startswith("Date:"):
            date_line = line
        elif index in keep:
            if date_line is not None:
                out.append(date_line)
                date_line = None
            out.append(line)
    return "\n".join(["<observations>", *out, "</observations>"])

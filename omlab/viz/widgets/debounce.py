"""Coalesce bursts of calls: only the last call of a burst runs, ``delay_s`` after it.

Sliders fire on every change; a simulation takes about half a second. The what-if view passes
each change through a :class:`Debouncer`, so dragging several sliders quickly runs one simulation
with the final values. ``delay_s=0`` runs each call at once, in the caller's thread (tests).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Debouncer:
    """Run ``action(*args)`` of the latest :meth:`call` once no call came for ``delay_s`` seconds.

    Runs happen in a timer thread and never overlap: a call that arrives while ``action`` runs is
    run after it, with its own (newest) arguments.
    """

    def __init__(self, action: Callable[..., Any], delay_s: float = 0.3) -> None:
        if delay_s < 0:
            raise ValueError(f"Debouncer: delay_s must be >= 0, got {delay_s}")
        self.action = action
        self.delay_s = delay_s
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._running = threading.Lock()

    def call(self, *args: Any) -> None:
        """Schedule ``action(*args)``, replacing a call still waiting."""
        if self.delay_s == 0:
            with self._running:
                self.action(*args)
            return
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.delay_s, self._run, args)
            self._timer.daemon = True
            self._timer.start()

    def flush(self, timeout_s: float = 30.0) -> None:
        """Wait until a waiting call has run (or ``timeout_s`` passed)."""
        with self._lock:
            timer = self._timer
        if timer is not None:
            timer.join(timeout_s)
        if self._running.acquire(timeout=timeout_s):
            self._running.release()

    def _run(self, *args: Any) -> None:
        with self._running:
            self.action(*args)

"""A plain-text progress bar with rate and ETA that also works without a terminal.

The bar names what it counts: each phase with its unit (``prepare 2/3 conversations``) or, for a
single count, the unit (``4/9 cells``). It is drawn as soon as it starts (``with Progress(...)``),
before any work finishes, so a long first unit never leaves the screen silent. On a TTY the line is
redrawn in place (``\\r``) at most every ``interval_s`` seconds; otherwise (CI logs, pipes,
notebooks) a full line is printed at most every ``log_interval_s`` seconds, plus the final line.
Nothing is printed when ``enabled`` is False. The ETA extrapolates the average rate since the
first unit finished (a warm-up such as worker start-up does not count as work)::

    quickstart [default]  prepare 2/3 conversations · answer 10/24 questions · judge 0/24 questions  12/51  24%  1.9/s  elapsed 0:06  ETA 0:20
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import Self, TextIO


def format_duration(seconds: float) -> str:
    """``h:mm:ss`` or ``m:ss``."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Count units of work towards ``total`` and show rate and ETA.

    Args:
        total: Units expected (0 shows a counter without percentage or ETA).
        label: Printed first on the line.
        unit: What a unit is (``cells``), printed after the count when there are no ``phases``.
        phases: ``{phase: (units expected, unit name)}`` in display order; ``advance(phase=...)``
            counts towards one of them and the line shows each.
        stream: Where to write (default ``sys.stderr``).
        enabled: False makes every method a no-op.
        interval_s: Minimum seconds between redraws on a TTY.
        log_interval_s: Minimum seconds between lines when not on a TTY.
        clock: Injectable monotonic clock (tests).
    """

    def __init__(
        self,
        total: int,
        label: str = "",
        *,
        unit: str = "",
        phases: Mapping[str, tuple[int, str]] | None = None,
        stream: TextIO | None = None,
        enabled: bool = True,
        interval_s: float = 0.2,
        log_interval_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = max(0, int(total))
        self.label = label
        self.unit = unit
        self.phases = {name: (max(0, int(expected)), name_of) for name, (expected, name_of) in (phases or {}).items()}
        self.phase_done = dict.fromkeys(self.phases, 0)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._interval = interval_s if self._tty else log_interval_s
        self._clock = clock
        self._start = clock()
        self._first_done_at: float | None = None
        self._first_done_count = 0
        self._last_draw = float("-inf")
        self._closed = False

    def start(self) -> None:
        """Draw the line now, before any unit is done."""
        if self.enabled and not self._closed:
            self._draw(self._clock())

    def advance(self, units: int = 1, *, phase: str | None = None) -> None:
        """Record ``units`` more units done (of ``phase`` when given); redraw if it is time."""
        if units <= 0:
            return
        if phase is not None and phase in self.phase_done:
            self.phase_done[phase] += units
        if self._first_done_at is None:
            self._first_done_at = self._clock()
            self._first_done_count = units
        self.done += units
        now = self._clock()
        if now - self._last_draw >= self._interval:
            self._draw(now)

    def eta_s(self) -> float | None:
        """Seconds left at the average rate so far, or None before there is a rate."""
        rate = self.rate()
        if not self.total or rate is None or rate <= 0:
            return None
        return max(0.0, (self.total - self.done) / rate)

    def rate(self) -> float | None:
        """Units per second since the first unit finished (None before two measurements)."""
        if self._first_done_at is None:
            return None
        elapsed = self._clock() - self._first_done_at
        counted = self.done - self._first_done_count
        if elapsed <= 0 or counted <= 0:
            return None
        return counted / elapsed

    def line(self) -> str:
        """The current status line."""
        parts = [self.label] if self.label else []
        shown = [name for name, (expected, _) in self.phases.items() if expected]
        if shown:
            parts.append(
                " · ".join(
                    f"{name} {self.phase_done[name]}/{self.phases[name][0]} {self.phases[name][1]}" for name in shown
                )
            )
        unit = f" {self.unit}" if self.unit and not shown else ""
        if self.total:
            parts.append(f"{self.done}/{self.total}{unit}  {100 * self.done / self.total:3.0f}%")
        else:
            parts.append(f"{self.done}{unit}")
        rate = self.rate()
        if rate is not None:
            parts.append(f"{rate:.2f}/s" if rate < 10 else f"{rate:.0f}/s")
        parts.append(f"elapsed {format_duration(self._clock() - self._start)}")
        eta = self.eta_s()
        if eta is not None and self.done < self.total:
            parts.append(f"ETA {format_duration(eta)}")
        return "  ".join(parts)

    def close(self) -> None:
        """Print the final line (once)."""
        if self._closed:
            return
        self._closed = True
        if self.enabled:
            self._draw(self._clock(), final=True)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _draw(self, now: float, *, final: bool = False) -> None:
        if not self.enabled:
            return
        self._last_draw = now
        text = self.line()
        if self._tty:
            self.stream.write("\r\x1b[2K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


__all__ = ["Progress", "format_duration"]

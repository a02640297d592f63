"""The plain-text progress bar: rate, ETA, TTY redraws and log lines."""

from __future__ import annotations

import io

from omlab.bench.progress import Progress, format_duration


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_rate_and_eta_start_from_the_first_finished_unit():
    clock, out = FakeClock(), io.StringIO()
    progress = Progress(10, "run", stream=out, clock=clock, log_interval_s=1000)
    clock.t = 105.0  # five seconds of start-up before any work finishes
    progress.advance()
    assert progress.rate() is None and progress.eta_s() is None
    clock.t = 109.0
    progress.advance(2)  # 2 units in 4 s -> 0.5/s, 7 left -> 14 s
    assert progress.rate() == 0.5 and progress.eta_s() == 14.0
    assert progress.line() == "run  3/10   30%  0.50/s  elapsed 0:09  ETA 0:14"


def test_without_a_tty_it_prints_whole_lines_now_and_then():
    clock, out = FakeClock(), io.StringIO()
    progress = Progress(4, "x", stream=out, clock=clock, log_interval_s=10)
    for _ in range(3):
        clock.t += 1
        progress.advance()
    progress.close()
    progress.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and "\r" not in out.getvalue()  # first advance, then the final line only
    assert lines[-1].startswith("x  3/4   75%")


def test_on_a_tty_the_line_is_redrawn_in_place():
    clock, out = FakeClock(), Tty()
    with Progress(2, "y", stream=out, clock=clock, interval_s=0) as progress:
        progress.advance()
        clock.t += 1
        progress.advance()
    text = out.getvalue()
    assert text.count("\r") == 3 and text.endswith("\n") and "2/2  100%" in text


def test_disabled_prints_nothing():
    out = io.StringIO()
    with Progress(3, stream=out, enabled=False) as progress:
        progress.advance(3)
    assert out.getvalue() == ""


def test_format_duration():
    assert format_duration(0) == "0:00"
    assert format_duration(75.4) == "1:15"
    assert format_duration(3 * 3600 + 62) == "3:01:02"

"""The plain-text progress bar: rate, ETA, TTY redraws and log lines."""

from __future__ import annotations

import io

from omlab.bench.run.progress import Progress, format_duration


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
    assert text.count("\r") == 4 and text.endswith("\n") and "2/2  100%" in text  # start, 2 units, close


def test_disabled_prints_nothing():
    out = io.StringIO()
    with Progress(3, stream=out, enabled=False) as progress:
        progress.advance(3)
    assert out.getvalue() == ""


def test_format_duration():
    assert format_duration(0) == "0:00"
    assert format_duration(75.4) == "1:15"
    assert format_duration(3 * 3600 + 62) == "3:01:02"


def test_the_bar_is_drawn_as_soon_as_it_starts_before_any_unit_is_done():
    clock, out = FakeClock(), io.StringIO()
    with Progress(5, "run", unit="cells done", stream=out, clock=clock, log_interval_s=1000):
        assert out.getvalue() == "run  0/5 cells done    0%  elapsed 0:00\n"


def test_each_phase_is_named_with_its_unit():
    clock, out = FakeClock(), io.StringIO()
    phases = {"prepare": (2, "conversations"), "answer": (6, "questions"), "judge": (0, "questions")}
    progress = Progress(8, "qs [default]", phases=phases, stream=out, clock=clock, log_interval_s=1000)
    progress.advance(phase="prepare")
    progress.advance(3, phase="answer")
    assert progress.line().startswith("qs [default]  prepare 1/2 conversations · answer 3/6 questions  4/8   50%")
    assert "judge" not in progress.line()  # a phase with nothing to do is not shown


def test_a_run_shows_its_phases_from_the_start_and_counts_every_unit(tmp_path):
    from bench_runner.suites import write_suite
    from omlab.bench.run.options import RunOptions
    from omlab.bench.run.runner import run_suite

    out = io.StringIO()
    suite = write_suite(tmp_path, seeds="[11, 12]")
    (summary,) = run_suite(suite, RunOptions(results_dir=tmp_path / "results", workers=1, progress=True, stream=out))
    lines = out.getvalue().splitlines()
    questions = summary.n_questions
    first = f"prepare 0/2 conversations · answer 0/{questions} questions · judge 0/{questions} questions"
    assert first in lines[0] and "elapsed 0:00" in lines[0]  # drawn before anything finished
    last = f"prepare 2/2 conversations · answer {questions}/{questions} questions · judge {questions}/{questions} questions"
    assert last in lines[-1] and "100%" in lines[-1]

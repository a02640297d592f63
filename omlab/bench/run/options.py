"""What a run is asked (:class:`RunOptions`) and what it reports (:class:`RunSummary`).

The options never change a run's ``config_hash`` except ``limit``; the suite says what is measured,
these say where and how it runs. :mod:`omlab.bench.run.runner` takes the one and returns the other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import pandas as pd

from omlab.bench.run.failures import RunFailures

DEFAULT_RESULTS_DIR = "results"


class RunnerError(RuntimeError):
    """A run that cannot start as asked."""


@dataclass(slots=True)
class RunOptions:
    """How to run a suite (these never change a run's ``config_hash`` except ``limit``).

    Attributes:
        results_dir: Where run files, caches and reports go.
        resume: A run id to resume (must match the suite's configuration).
        auto_resume: Resume the latest unfinished run of the same suite and config hash.
        limit: At most this many conversations (on top of the suite's own ``limit``).
        cache_mode: Overrides ``[cache] mode`` (off, read, write, strict).
        reuse_prepared: Overrides ``[cache] prepared``.
        workers: Processes for offline runs (default: ``[run] workers``, else min(2, CPUs)).
        concurrency: Conversations in flight for provider-bound runs (default ``[run] concurrency``).
        progress: Show a progress bar on ``stream`` (default stderr).
        on_question: ``hook(phase, question_id)`` after each question is recorded (tests use it to
            stop a run half-way).
        sweep_id: Recorded in the runs row's notes, to group the runs of one sweep.
        executor: ``pool`` or ``ray`` (default ``[run] executor``, else ``pool``).
        address: The Ray cluster to join (default ``[run] address``, else a local Ray instance).
        timeout: ``--timeout``: ``{role or "": seconds per request}``, over the suite's ``[retry]``.
        deadline: ``--deadline``: ``{role or "": seconds per call}``, over the suite's ``[retry]``.
    """

    results_dir: str | Path = DEFAULT_RESULTS_DIR
    resume: str | None = None
    auto_resume: bool = True
    limit: int | None = None
    cache_mode: str | None = None
    reuse_prepared: bool | None = None
    workers: int | None = None
    concurrency: int | None = None
    progress: bool = True
    stream: TextIO | None = None
    on_question: Callable[[str, str], None] | None = None
    sweep_id: str | None = None
    executor: str | None = None
    address: str | None = None
    timeout: dict[str, float] | None = None
    deadline: dict[str, float] | None = None


@dataclass(slots=True)
class RunSummary:
    """What one run did."""

    run_id: str
    suite: str
    config_name: str
    config_hash: str
    status: str
    resumed: bool
    n_conversations: int
    n_questions: int
    wall_s: float
    metrics: pd.DataFrame = field(default_factory=pd.DataFrame)
    reused: bool = False
    """True when a continued sweep took this cell's finished run as it was (nothing ran)."""
    warnings: int = 0
    failures: RunFailures = field(default_factory=RunFailures)
    """Failed phases and questions; when any, ``status`` is ``incomplete`` and a resume retries them."""


__all__ = ["DEFAULT_RESULTS_DIR", "RunOptions", "RunSummary", "RunnerError"]

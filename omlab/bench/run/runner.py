"""Running a suite: one run per grid cell, resumable, with conversations in parallel.

:func:`run_suite` expands the suite's grid and runs each cell with :func:`run_cell`:

1. load the dataset (limits applied) and resolve the cell's :class:`RunSettings`;
2. pick the run: ``resume=RUN_ID``, else (``auto_resume``) the latest unfinished run of the same
   suite and ``config_hash``, else a new run (:mod:`omlab.bench.run.resume`);
3. open its :class:`~omlab.bench.results.RunWriter` (reopening a resumed run, after discarding
   half-written prepare phases), and build one job per conversation with what it still needs
   (``completed()``, ``answered_questions()``, ``scored_questions()``);
4. run the jobs (:mod:`omlab.bench.run.execution`): a process pool for offline runs, asyncio for
   provider-bound ones; the parent writes every row. With the ``ray`` executor
   (:mod:`omlab.bench.run.executors`) every cell's run file is opened by the driver and the jobs of
   all cells are Ray tasks (:func:`run_cells_on_cluster`);
5. compute the run's metrics from its frames (:mod:`omlab.bench.report.metrics`) and its evidence lineage
   (:mod:`omlab.bench.lineage`), write them, close the run.

A killed run resumed later repeats nothing that was checkpointed and duplicates no rows. With a
grid and several workers on an offline suite, cells run in parallel processes instead (each its
own run and writer).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from omlab.bench.datasets.checks import InputWarning, input_warnings
from omlab.bench.datasets.schema import Conversation, DatasetInfo
from omlab.bench.lineage import records as lineage_records
from omlab.bench.lineage import run_lineage
from omlab.bench.report.metrics import compute_metrics, load_run_frames, metrics_records
from omlab.bench.results import ResultsCatalog, RunLockedError, RunWriter
from omlab.bench.run.execution import (
    RecordSink,
    run_in_event_loop,
    run_in_processes,
    shared_provider_limits,
)
from omlab.bench.run.failures import collect_failures, judge_done
from omlab.bench.run.options import RunnerError, RunOptions, RunSummary
from omlab.bench.run.phases import ConversationJob
from omlab.bench.run.progress import Progress
from omlab.bench.run.resume import ResumeState, check_resume_target, find_resumable_run, read_resume_state
from omlab.bench.scoring.required_scorers import required_scorers
from omlab.bench.suite.dataset import caption_style, effective_limit, load_conversations
from omlab.bench.suite.preflight import Preflight, format_warnings, preflight, warning_metric_rows, warning_records
from omlab.bench.suite.run_settings import RunSettings
from omlab.bench.suite.suite_file import Suite, SuiteCell, expand_grid, load_suite
from omlab.bench.suite.tables import RunSpec


def run_suite(suite: Suite | str | Path, options: RunOptions | None = None) -> list[RunSummary]:
    """Run every cell of ``suite`` (a :class:`Suite` or a TOML path); one summary per cell."""
    suite = suite if isinstance(suite, Suite) else load_suite(suite)
    options = options or RunOptions()
    checked = preflight(suite, options.limit)  # before any model call; raises SuiteError
    cells = expand_grid(suite)
    if options.resume is not None and len(cells) > 1:
        cells = [_cell_of_run(cells, options)]
    return run_cells(cells, options, checked=checked)


def run_cells(
    cells: list[SuiteCell], options: RunOptions | None = None, *, checked: Preflight | None = None
) -> list[RunSummary]:
    """Run (or resume) these cells of one suite, in parallel processes when offline; one summary
    per cell, in the order given. ``checked``: the suite's :func:`~omlab.bench.suite.preflight.preflight`
    (made here when not given); its warnings are printed before anything runs."""
    options = options or RunOptions()
    if not cells:
        return []
    suite = cells[0].suite
    checked = checked or preflight(suite, options.limit)  # before any model call; raises SuiteError
    for line in format_warnings(checked.warnings):
        print(line, file=options.stream or sys.stderr)
    if executor_name(suite, options) == "ray":
        return run_cells_on_cluster(cells, options, checked=checked, warnings=checked.warnings)
    workers = _workers(suite, options)
    parallel_cells = len(cells) > 1 and workers > 1 and _offline(cells[0], options)
    if parallel_cells:
        return _run_cells_in_processes(cells, options, workers, checked.warnings)
    return [run_cell(cell, options, checked=checked) for cell in cells]


def run_cell(
    cell: SuiteCell,
    options: RunOptions | None = None,
    *,
    checked: Preflight | None = None,
    warnings: list[InputWarning] | None = None,
) -> RunSummary:
    """Run (or resume) one configuration of a suite; see the module docstring. ``checked`` is the
    suite's preflight (its dataset is reused); ``warnings`` replaces its warnings (default: the
    dataset's own, :func:`~omlab.bench.datasets.checks.input_warnings`)."""
    options = options or RunOptions()
    if executor_name(cell.suite, options) == "ray":
        return run_cells_on_cluster([cell], options, checked=checked, warnings=warnings)[0]
    opened = _open_cell(cell, options, checked, warnings)
    with opened.writer:
        total = sum(job.work_units() for job in opened.jobs)
        with Progress(
            total, opened.label, phases=_phase_units(opened.jobs), stream=options.stream, enabled=options.progress
        ) as progress:
            sink = RecordSink(opened.writer, progress, options.on_question)
            _execute(opened.pending_jobs(), sink, opened.settings, cell.suite, options)
        return _finish_cell(opened, options)


@dataclass(slots=True)
class _OpenCell:
    """A cell whose run file is open: what its jobs need and how to close it."""

    cell: SuiteCell
    settings: RunSettings
    config_hash: str
    writer: RunWriter
    resumed: bool
    jobs: list[ConversationJob]
    conversations: list[Conversation]
    warnings: list[InputWarning]
    started: float

    @property
    def label(self) -> str:
        return f"{self.cell.suite.name} [{self.cell.name}] {self.writer.run_id}"

    def pending_jobs(self) -> list[ConversationJob]:
        return [job for job in self.jobs if job.work_units() or _needs_marks(job)]


def _open_cell(
    cell: SuiteCell, options: RunOptions, checked: Preflight | None, warnings: list[InputWarning] | None
) -> _OpenCell:
    """Choose the cell's run (new or resumed), open its writer and build its jobs."""
    started = time.monotonic()
    suite = cell.suite
    results_dir = Path(options.results_dir)
    if checked is not None:
        info, conversations = checked.info, checked.conversations
    else:
        info, conversations = load_conversations(
            suite.dataset, suite.base_dir, options.limit, caption_style=caption_style(suite)
        )
    if warnings is None:
        warnings = checked.warnings if checked is not None else input_warnings(conversations)
    settings = _settings(cell, options)
    config_hash = _config_hash(cell, settings, info, options)
    run_id, resumed = _choose_run(results_dir, suite.name, config_hash, options)
    state, writer = ResumeState(), None
    if resumed:
        try:
            state, writer = _reopen(results_dir, run_id, explicit=options.resume is not None)
        except RunLockedError:
            if options.resume is not None:
                raise
            # another process auto-resumed this run first: this one makes its own (module resume)
            print(
                f"{suite.name}: run {run_id} is being resumed by another process; starting a new run",
                file=options.stream or sys.stderr,
            )
            resumed = False
    if writer is None:
        writer = RunWriter(results_dir, run_info=_run_info(suite, cell, settings, config_hash, info, options, warnings))
    try:
        jobs = _jobs(conversations, settings, writer, state)
    except BaseException:
        writer.close("failed")
        raise
    return _OpenCell(cell, settings, config_hash, writer, resumed, jobs, conversations, warnings, started)


# an auto-resume that finds the run held gives up quickly: a live writer holds it for the whole run
_AUTO_RESUME_LOCK_TIMEOUT_S = 2.0


def _reopen(results_dir: Path, run_id: str, *, explicit: bool) -> tuple[ResumeState, RunWriter]:
    """Read what run ``run_id`` holds and reopen its writer, discarding half-written prepares.

    Raises:
        RunLockedError: Another process holds the file (it resumed the run first)."""
    timeout = 10.0 if explicit else _AUTO_RESUME_LOCK_TIMEOUT_S
    state = read_resume_state(results_dir, run_id, lock_timeout=timeout)
    writer = RunWriter.open_existing(results_dir, run_id, lock_timeout=timeout)
    for conversation_id in sorted(state.orphaned_prepare):
        writer.discard_conversation(conversation_id, "prepare")
    return state, writer


def _finish_cell(opened: _OpenCell, options: RunOptions) -> RunSummary:
    """Compute and write the run's metrics and lineage, then close its writer as ``finished`` or,
    with failed phases or questions, ``incomplete``; the run's summary."""
    writer, settings, suite = opened.writer, opened.settings, opened.cell.suite
    writer.flush()
    catalog = ResultsCatalog(Path(options.results_dir), writers=[writer])  # reads the writer's own rows
    frames = load_run_frames(catalog, writer.run_id)
    failures = collect_failures(
        catalog.read_table("conversations", writer.run_id),
        frames.answers,
        frames.scores,
        [q for conversation in opened.conversations for q in conversation.questions],
        dataset_kind=settings.dataset_kind,
        judged="judge" in settings.phases,
    )
    metrics = compute_metrics(
        frames,
        dataset_kind=settings.dataset_kind,
        on_missing=suite.scoring.on_missing,
        judged="judge" in settings.phases,
        f1_aggregation=suite.scoring.f1_aggregation,
        protocol=suite.scoring.protocol,
    )
    extra = warning_metric_rows(opened.warnings) + failures.metric_rows()
    metrics = pd.concat([metrics, pd.DataFrame(extra)], ignore_index=True)
    writer.add_metrics(metrics_records(metrics))
    evidence, questions = run_lineage(catalog, writer.run_id, opened.conversations, scope=settings.replay.scope)
    writer.add_lineage(lineage_records(evidence), lineage_records(questions))
    status = "incomplete" if failures.incomplete else "finished"
    writer.close(status, error=failures.error_text())
    return RunSummary(
        run_id=writer.run_id,
        suite=suite.name,
        config_name=opened.cell.name,
        config_hash=opened.config_hash,
        status=status,
        resumed=opened.resumed,
        n_conversations=len(opened.conversations),
        n_questions=sum(len(c.questions) for c in opened.conversations),
        wall_s=time.monotonic() - opened.started,
        metrics=metrics,
        warnings=len(opened.warnings),
        failures=failures,
    )


def run_cells_on_cluster(
    cells: list[SuiteCell],
    options: RunOptions,
    *,
    checked: Preflight | None = None,
    warnings: list[InputWarning] | None = None,
) -> list[RunSummary]:
    """Run these cells on Ray: the driver opens every cell's run file and writes every row; the
    conversations of all cells are Ray tasks (:mod:`omlab.bench.run.tasks`), sharing a snapshot of the
    response cache and, for provider-bound runs, the cluster's rate limits. One progress bar."""
    from omlab.bench.run.executors import RayExecutor
    from omlab.bench.run.tasks import ConversationTask
    from omlab.llm.cache_snapshot import merge_entries

    suite = cells[0].suite
    offline = _offline(cells[0], options)
    workers = _workers(suite, options)
    concurrency = options.concurrency or suite.run.concurrency
    executor = RayExecutor(
        options.address or suite.run.address,
        workers=workers,
        task_cpus=1.0 if offline else 0.0,
        max_in_flight=None if offline else concurrency,
    )
    opened: list[_OpenCell] = []
    try:
        for cell in cells:
            opened.append(_open_cell(cell, options, checked, warnings))
        work = [(index, job) for index, cell_run in enumerate(opened) for job in cell_run.pending_jobs()]
        total = sum(job.work_units() for cell_run in opened for job in cell_run.jobs)
        label = opened[0].label if len(opened) == 1 else f"{suite.name}: {len(opened)} cells on ray"
        task = ConversationTask(
            cluster=True,
            cache_snapshot=_cache_snapshot(opened[0].settings),
            limits=None if offline else _cluster_limits(concurrency, suite.run),
            lifeline=executor.lifeline,
        )
        all_jobs = [job for cell_run in opened for job in cell_run.jobs]
        with Progress(
            total, label, phases=_phase_units(all_jobs), stream=options.stream, enabled=options.progress
        ) as progress:
            sinks = [RecordSink(cell_run.writer, progress, options.on_question) for cell_run in opened]
            driver_cache = _driver_cache(opened[0].settings)
            with closing(executor.run(task, [job for _, job in work])) as results:
                for index, result in results:
                    sink = sinks[work[index][0]]
                    for record in result.records:
                        sink(record)
                    if driver_cache is not None and result.cache_entries:
                        merge_entries(driver_cache, result.cache_entries)
        summaries = []
        for cell_run in opened:
            with cell_run.writer:
                summaries.append(_finish_cell(cell_run, options))
        return summaries
    except BaseException as error:
        for cell_run in opened:
            if not cell_run.writer.closed:
                cell_run.writer.__exit__(type(error), error, error.__traceback__)
        raise
    finally:
        executor.close()


def _cache_snapshot(settings: RunSettings) -> Any:
    """The driver's response cache as a Ray object (None when off or empty)."""
    if settings.cache_mode == "off" or settings.cache_path is None:
        return None
    import ray

    from omlab.llm.cache_snapshot import snapshot_bytes

    data = snapshot_bytes(settings.cache_path)
    return ray.put(data) if data is not None else None


def _driver_cache(settings: RunSettings) -> Any:
    """Where workers' new cache entries are merged (write mode only)."""
    if settings.cache_mode != "write" or settings.cache_path is None:
        return None
    from omlab.llm.cache import ResponseCache

    return ResponseCache(settings.cache_path, mode="write")


def _cluster_limits(concurrency: int, run: RunSpec) -> Any:
    from omlab.llm.cluster_limits import start_limits_actor

    return start_limits_actor(default=max(1, concurrency), **run.limits_options())


def _local_limits(concurrency: int, run: RunSpec) -> Any:
    """Provider limits for a provider-bound run in this process: the suite's per-provider
    concurrency, RPM and TPM when it sets any, else the plain concurrency limits."""
    if not any(run.limits_options().values()):
        return shared_provider_limits()
    from omlab.llm.cluster_limits import local_limits

    return local_limits(default=max(1, concurrency), **run.limits_options())


def executor_name(suite: Suite, options: RunOptions) -> str:
    """``pool`` or ``ray``: the option, else the suite's ``[run] executor``."""
    return options.executor or suite.run.executor


def cell_config_hash(cell: SuiteCell, options: RunOptions | None = None) -> str:
    """The ``config_hash`` a run of ``cell`` gets (it names the dataset, so this loads it)."""
    options = options or RunOptions()
    info, _ = load_conversations(cell.suite.dataset, cell.suite.base_dir, options.limit)
    return _config_hash(cell, _settings(cell, options), info, options)


def _settings(cell: SuiteCell, options: RunOptions) -> RunSettings:
    return RunSettings.from_cell(
        cell,
        results_dir=Path(options.results_dir),
        cache_mode=options.cache_mode,
        reuse_prepared=options.reuse_prepared,
        retry=cell.suite.retry.overridden(timeout=options.timeout, deadline=options.deadline),
    )


def _config_hash(cell: SuiteCell, settings: RunSettings, info: DatasetInfo, options: RunOptions) -> str:
    identity = {
        **cell.suite.dataset.identity(),
        "limit": effective_limit(cell.suite.dataset, options.limit),
        "sha256": info.sha256,
        "revision": info.revision,
    }
    return settings.run_hash(identity)


# --------------------------------------------------------------------------- run choice


def _choose_run(results_dir: Path, suite: str, config_hash: str, options: RunOptions) -> tuple[str | None, bool]:
    if options.resume is not None:
        check_resume_target(results_dir, options.resume, suite, config_hash)
        return options.resume, True
    if options.auto_resume:
        found = find_resumable_run(results_dir, suite, config_hash, prefer_sweep=options.sweep_id)
        if found is not None:
            return found, True
    return None, False


def _cell_of_run(cells: list[SuiteCell], options: RunOptions) -> SuiteCell:
    """The grid cell whose configuration made run ``options.resume``."""
    header = ResultsCatalog(options.results_dir).read_table("runs", options.resume)
    names = set(header["config_name"])
    for cell in cells:
        if cell.name in names:
            return cell
    raise RunnerError(f"run {options.resume!r} ({', '.join(map(str, names))}) is not a cell of this suite's grid")


def _run_info(
    suite: Suite,
    cell: SuiteCell,
    settings: RunSettings,
    config_hash: str,
    info: DatasetInfo,
    options: RunOptions,
    warnings: list[InputWarning],
) -> dict[str, Any]:
    return {
        "suite": suite.name,
        "config_name": cell.name,
        "config_hash": config_hash,
        "config_json": {
            **settings.describe(),
            "dataset": suite.dataset.identity(),
            "sweep_id": options.sweep_id,
            "suite_file": suite.source,
            "warnings": warning_records(warnings),
        },
        "dataset": info.name,
        "dataset_subset": info.subset,
        "dataset_revision": info.revision,
        "dataset_sha256": info.sha256,
        "phases": list(settings.phases),
        "price_map": settings.price_map(),
        "notes": f"sweep {options.sweep_id}" if options.sweep_id else None,
    }


# --------------------------------------------------------------------------- jobs


def _jobs(
    conversations: list[Conversation], settings: RunSettings, writer: RunWriter, state: ResumeState
) -> list[ConversationJob]:
    done = {phase: writer.completed(phase) for phase in settings.phases}
    answered = writer.answered_questions()
    scored = {"judge": judge_done(writer), "f1": writer.scored_questions("f1")}
    jobs = []
    for conversation in conversations:
        ids = {q.id for q in conversation.questions}
        judged = {
            q.id
            for q in conversation.questions
            if all(q.id in scored[scorer] for scorer in required_scorers(q, settings.dataset_kind))
        }
        jobs.append(
            ConversationJob(
                conversation=conversation,
                settings=settings,
                done_phases=frozenset(phase for phase in settings.phases if conversation.id in done[phase]),
                answered=frozenset(ids & answered),
                hypotheses={qid: state.hypotheses[qid] for qid in ids & answered if qid in state.hypotheses},
                judged=frozenset(judged),
            )
        )
    return jobs


def _phase_units(jobs: list[ConversationJob]) -> dict[str, tuple[int, str]]:
    """The progress bar's phases: units left in each and what a unit is."""
    left = {"prepare": 0, "answer": 0, "judge": 0}
    for job in jobs:
        for phase, units in job.work_by_phase().items():
            left[phase] += units
    return {
        "prepare": (left["prepare"], "conversations"),
        "answer": (left["answer"], "questions"),
        "judge": (left["judge"], "questions"),
    }


def _needs_marks(job: ConversationJob) -> bool:
    return any(phase not in job.done_phases for phase in job.settings.phases)


def _execute(
    jobs: list[ConversationJob], sink: RecordSink, settings: RunSettings, suite: Suite, options: RunOptions
) -> None:
    if not jobs:
        return
    workers = _workers(suite, options)
    if settings.all_models_offline() and workers > 1 and len(jobs) > 1:
        run_in_processes(jobs, sink, min(workers, len(jobs)), preload=_preload(settings))
    elif settings.all_models_offline():
        run_in_event_loop(jobs, sink, 1)
    else:
        concurrency = options.concurrency or suite.run.concurrency
        run_in_event_loop(jobs, sink, concurrency, _local_limits(concurrency, suite.run))


def _preload(settings: RunSettings) -> tuple[str, ...]:
    """``litellm`` when calls are priced from its price map (its import takes seconds per process)."""
    priced_as_real = any(isinstance(v, str) and not v.startswith("omlab/") for v in settings.prices.values())
    return ("litellm",) if priced_as_real else ()


def _workers(suite: Suite, options: RunOptions) -> int:
    return options.workers or suite.run.workers or min(2, os.cpu_count() or 1)


def _offline(cell: SuiteCell, options: RunOptions) -> bool:
    return RunSettings.from_cell(cell, results_dir=options.results_dir).all_models_offline()


# --------------------------------------------------------------------------- parallel cells


def _run_cells_in_processes(
    cells: list[SuiteCell], options: RunOptions, workers: int, warnings: list[InputWarning]
) -> list[RunSummary]:
    """Each cell in its own process (its own run, its own writer); progress per finished cell."""
    from omlab.bench.run.executors import PoolExecutor

    quiet = dataclasses.replace(options, workers=1, progress=False, stream=None, on_question=None)
    summaries: dict[int, RunSummary] = {}
    stream = options.stream or sys.stderr
    with Progress(
        len(cells), f"{cells[0].suite.name}: runs", unit="cells done", stream=stream, enabled=options.progress
    ) as progress:
        preload = _preload(RunSettings.from_cell(cells[0], results_dir=options.results_dir))
        pool = PoolExecutor(min(workers, len(cells)), preload=preload)
        with closing(pool.run(functools.partial(run_cell, options=quiet, warnings=warnings), cells)) as results:
            for index, summary in results:
                summaries[index] = summary
                progress.advance()
    return [summaries[index] for index in range(len(cells))]


__all__ = [
    "cell_config_hash",
    "executor_name",
    "run_cell",
    "run_cells",
    "run_cells_on_cluster",
    "run_suite",
]

"""Benchmark suites: a TOML file that names a dataset, an engine config, models and a grid.

A suite file (every table but ``[suite]`` and ``[dataset]`` is optional)::

    [suite]
    name = "quickstart"                 # required; runs are grouped by it
    description = "..."

    [dataset]
    kind = "synthetic"                  # synthetic | longmemeval | locomo | jsonl | mastra
    seeds = [1, 2]                      # synthetic: one conversation per seed
    target_tokens = 20000               # synthetic: size of each conversation
    n_questions = 10                    # synthetic
    path = "data/longmemeval_s.json"    # longmemeval / locomo / jsonl (relative to the suite file)
    subset = "s"                        # longmemeval: oracle | s | m
    limit = 5                           # first N conversations
    turn_pace_s = 30                    # seconds between turns when only session dates exist
    # mastra: path = a @mastra/libsql file or a @mastra/pg postgresql:// URL, read-only; optional
    # resource = "user-1", threads = ["t1"], since/until = 2025-03-01T00:00:00Z (messages' times)

    [engine]                            # an observationalMemory option object, pasted as-is
    observation = { messageTokens = 4000, bufferTokens = 0.2, blockAfter = 1.2 }
    reflection = { observationTokens = 6000 }

    [grid]                              # cartesian product; every cell is its own run
    "observation.bufferTokens" = [0.1, 0.2]
    "observation.blockAfter" = [1.2, 1.5]

    [models]                            # strings or {upTo = {...}} tables (ModelByInputTokens)
    observer = "omlab/observer"
    reflector = "omlab/reflector"
    actor = "omlab/reader"
    judge = "omlab/judge"
    [models.prices]                     # price offline models as real ones
    "omlab/observer" = "google/gemini-2.5-flash"
    [models.profiles]                   # offline observer/reflector sized and timed as a real model
    observer = "profiles/my-run.json"   # (omlab calibrate RUN writes one; see omlab.bench.calibration)

    [latency]                           # virtual latency of background/sync model calls
    default = { kind = "token-rate" }   # fixed | lognormal | token-rate | measured | calibrated
    observer = { kind = "lognormal", median_s = 4.0, sigma = 0.4 }
    seed = 0

    [replay]
    scope = "thread"                    # or "resource": a thread per session (set engine.scope too)
    ingest = "message"                  # message | pair (a user turn and its reply together) |
                                        # turn (step where a Mastra agent steps: each user message)
    timezone = "UTC"
    debug_payloads = "full"             # full | compact (drop transcripts from debug events)

    [phases]
    run = ["prepare", "answer", "judge"]

    [scoring]
    verdict = "parity"                  # parity | official | strict | lenient
    on_missing = "drop"                 # a question with no answer or verdict: drop (left out, counted in
                                        # the report's "missing" column) | wrong (counted as wrong, F1 0)
    judge_prompts = "prompts.json"      # optional: your own judge wording
    protocol = "official"               # omlab | official (LoCoMo: the official QA protocol)
    official_files = "locomo/task_eval/gpt_utils.py"  # your copy: the official wording
    aggregation = "official"            # LoCoMo F1: official (rounded to 3 decimals) | mean

    [cache]
    mode = "write"                      # off | read | write | strict (the response cache)
    prepared = true                     # reuse prepared memory across runs

    [run]
    workers = 2                         # processes for offline (CPU-bound) runs
    concurrency = 4                     # conversations in flight for provider-bound runs
    executor = "pool"                   # pool (local processes) | ray (a Ray cluster)
    address = "auto"                    # ray only: join this cluster (default: start a local one)
    provider_concurrency = { openai = 32 }  # requests in flight per provider (others: concurrency)
    rpm = { openai = 500 }              # requests per minute per provider, across every worker
    tpm = { openai = 200000 }           # tokens per minute per provider, across every worker

    [retry]                             # model-call timeouts (omlab.bench.suite.retry)
    timeout = 60                        # seconds per request, every role (--timeout)
    deadline = 300                      # seconds per call, retries included (--deadline)
    judge = { timeout = 20 }            # per role: observer, reflector, extractor, actor, judge

Precedence: code defaults < suite TOML < keyword arguments / CLI flags. ``[models]`` observer and
reflector win over models named in ``[engine]``; with neither, the offline ``omlab/observer`` and
``omlab/reflector`` are used (a benchmark never calls a paid model by accident).

Grid: keys are dotted paths into ``[engine]`` (``observation.bufferTokens``) or into ``[models]``
(``models.actor``). Every cell of the cartesian product is its own run with its own run file and
``config_name`` (``bufferTokens=0.1,blockAfter=1.2``): runs stay one config each, which keeps the
results tables simple and lets cells run in parallel processes (one writer per file). A sweep
groups its runs by suite name and sweep id.

Every problem raises :class:`SuiteError` naming the file and the key. A suite can be named instead
of its path (:func:`find_suite`: ``quickstart`` is ``benchmarks/quickstart.toml``). Before a run,
``omlab.bench.suite.preflight`` checks the suite against its dataset and models.
"""

from __future__ import annotations

import copy
import difflib
import itertools
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omlab.bench.calibration.profile import RoleFit
from omlab.bench.datasets.errors import DatasetError, decode_utf8
from omlab.bench.suite.profiles import (
    latency_with_profiles,
    parse_profiles,
    prices_with_profiles,
    profiled_engine,
)
from omlab.bench.suite.retry import RetrySpec, parse_retry
from omlab.bench.suite.tables import (
    CACHE_MODES,
    DATASET_KINDS,
    ENGINE_MODEL_KEYS,
    PHASE_ORDER,
    CacheSpec,
    DatasetSpec,
    ReplaySpec,
    RunSpec,
    ScoringSpec,
    SuiteError,
    check_model,
    known_keys,
    parse_cache,
    parse_dataset,
    parse_grid,
    parse_latency,
    parse_phases,
    parse_replay,
    parse_run,
    parse_scoring,
    table,
)

DEFAULT_MODELS = {
    "observer": "omlab/observer",
    "reflector": "omlab/reflector",
    "actor": "omlab/reader",
    "judge": "omlab/judge",
}

_TABLES = (
    "suite",
    "dataset",
    "engine",
    "grid",
    "models",
    "latency",
    "replay",
    "phases",
    "scoring",
    "cache",
    "run",
    "retry",
)


@dataclass(frozen=True, slots=True)
class Suite:
    """A parsed, validated suite file."""

    name: str
    source: str
    base_dir: str
    dataset: DatasetSpec
    engine: dict[str, Any]
    grid: dict[str, list[Any]]
    models: dict[str, Any]
    prices: dict[str, Any]
    latency: dict[str, Any]
    replay: ReplaySpec = field(default_factory=ReplaySpec)
    phases: tuple[str, ...] = PHASE_ORDER
    scoring: ScoringSpec = field(default_factory=ScoringSpec)
    cache: CacheSpec = field(default_factory=CacheSpec)
    run: RunSpec = field(default_factory=RunSpec)
    description: str = ""
    retry: RetrySpec = field(default_factory=RetrySpec)
    profiles: dict[str, RoleFit] = field(default_factory=dict)
    """``[models.profiles]``: the fit each profiled offline role follows."""


@dataclass(frozen=True, slots=True)
class SuiteCell:
    """One configuration of a suite: the suite with one grid point applied.

    ``engine`` holds the engine options with the observer and reflector models filled in;
    ``models`` the four roles; ``point`` the grid values of this cell (empty without a grid).
    """

    suite: Suite
    name: str
    point: dict[str, Any]
    engine: dict[str, Any]
    models: dict[str, Any]


def load_suite(path: str | Path) -> Suite:
    """Read and validate a suite TOML file (or a suite found by name, see :func:`find_suite`).

    Raises:
        SuiteError: Unreadable TOML, an unknown table or key, a bad value, or an engine config
            (in any grid cell) the engine refuses.
    """
    file = find_suite(path)
    source = str(file)
    try:
        data = tomllib.loads(decode_utf8(file.read_bytes(), source))
    except DatasetError as error:
        raise SuiteError(source, None, error.problem) from None
    except tomllib.TOMLDecodeError as error:
        raise SuiteError(source, None, f"invalid TOML: {error}") from None
    return parse_suite(data, source=source, base_dir=file.resolve().parent)


def find_suite(name: str | Path, folders: Sequence[str | Path] | None = None) -> Path:
    """The suite file ``name`` stands for: the file itself when it exists, else
    ``<folder>/<name>.toml`` or the file whose ``[suite] name`` is ``name``, in ``folders``
    (default :func:`suite_folders`).

    Raises:
        SuiteError: No such suite; the message lists the suites that exist.
    """
    file = Path(name).expanduser()
    if file.is_file():
        return file
    available = available_suites(folders)
    text = str(name)
    stem = file.stem if file.suffix == ".toml" else file.name
    for suite_name, path in available.items():
        if path.stem == stem or suite_name == stem:
            return path
    names = sorted(available)
    close = difflib.get_close_matches(stem, names + [p.stem for p in available.values()], n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    listed = ", ".join(names) if names else "none found"
    raise SuiteError(text, None, f"no such suite file or suite name; {hint}available suites: {listed}")


def suite_folders() -> list[Path]:
    """Where suites are found by name: ``./benchmarks`` and the ``benchmarks`` folder of the
    checkout omlab runs from (when there is one)."""
    folders = [Path.cwd() / "benchmarks", Path(__file__).resolve().parents[2] / "benchmarks"]
    unique: list[Path] = []
    for folder in folders:
        if folder.is_dir() and all(folder.resolve() != seen.resolve() for seen in unique):
            unique.append(folder)
    return unique


def available_suites(folders: Sequence[str | Path] | None = None) -> dict[str, Path]:
    """``{suite name: file}`` for every readable suite TOML in ``folders`` (first one wins)."""
    found: dict[str, Path] = {}
    for folder in folders if folders is not None else suite_folders():
        for path in sorted(Path(folder).glob("*.toml")):
            try:
                name = tomllib.loads(path.read_text(encoding="utf-8")).get("suite", {}).get("name")
            except (OSError, tomllib.TOMLDecodeError, AttributeError):
                continue
            if isinstance(name, str):
                found.setdefault(name, path)
    return found


def parse_suite(data: Mapping[str, Any], *, source: str = "<suite>", base_dir: str | Path = ".") -> Suite:
    """Validate an already-parsed suite mapping (what :func:`load_suite` reads from TOML)."""
    unknown = sorted(set(data) - set(_TABLES))
    if unknown:
        raise SuiteError(source, unknown[0], f"unknown table; suite tables are {', '.join(_TABLES)}")
    head = table(data, "suite", source, required=True)
    known_keys(head, ("name", "description"), "suite", source)
    name = head.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise SuiteError(source, "suite.name", f"must be a name of letters, digits, '.', '_' or '-', got {name!r}")
    models_table = dict(table(data, "models", source))
    prices = models_table.pop("prices", {})
    if not isinstance(prices, Mapping):
        raise SuiteError(
            source,
            "models.prices",
            "must be a table of model = priced-as model or {input_per_mtok, output_per_mtok}",
        )
    profiles = parse_profiles(models_table.pop("profiles", None), source, base_dir)
    known_keys(models_table, tuple(DEFAULT_MODELS), "models", source)
    for role, spec in models_table.items():
        check_model(spec, f"models.{role}", source)
    suite = Suite(
        name=name,
        source=source,
        base_dir=str(base_dir),
        description=str(head.get("description", "")),
        dataset=parse_dataset(table(data, "dataset", source, required=True), source),
        engine=copy.deepcopy(dict(table(data, "engine", source))),
        grid=parse_grid(table(data, "grid", source), source),
        models=dict(models_table),
        prices=prices_with_profiles(prices, profiles),
        latency=latency_with_profiles(parse_latency(table(data, "latency", source), source), profiles, source),
        profiles=profiles,
        replay=parse_replay(table(data, "replay", source), source),
        phases=parse_phases(table(data, "phases", source), source),
        scoring=parse_scoring(table(data, "scoring", source), source),
        cache=parse_cache(table(data, "cache", source), source),
        run=parse_run(table(data, "run", source), source),
        retry=parse_retry(table(data, "retry", source), source),
    )
    for section in ("observation", "reflection"):
        if section in suite.engine and not isinstance(suite.engine[section], Mapping):
            raise SuiteError(source, f"engine.{section}", "must be a table")
    for key in ENGINE_MODEL_KEYS:
        section, _, option = key.rpartition(".")
        given = (suite.engine.get(section) or {}) if section else suite.engine
        if given.get(option) not in (None, "default"):
            check_model(given[option], f"engine.{key}", source)
    for cell in expand_grid(suite):
        for role in ("actor", "judge"):
            check_model(cell.models[role], f"models.{role}", source)
        _check_engine(cell, source)
    return suite


def expand_grid(suite: Suite) -> list[SuiteCell]:
    """Every configuration of ``suite``: the cartesian product of ``[grid]`` (one cell without a grid),
    in the file's key order, the last key varying fastest."""
    keys = list(suite.grid)
    cells = []
    for values in itertools.product(*(suite.grid[key] for key in keys)) if keys else [()]:
        point = dict(zip(keys, values, strict=True))
        engine = copy.deepcopy(suite.engine)
        models = {**DEFAULT_MODELS, **suite.models}
        for key, value in point.items():
            if key.startswith("models."):
                models[key.split(".", 1)[1]] = copy.deepcopy(value)
            else:
                _set_path(engine, key.split("."), copy.deepcopy(value))
        explicit = {role: role in suite.models or f"models.{role}" in point for role in ("observer", "reflector")}
        engine = _with_models(engine, models, explicit)
        profiled_engine(engine, suite.profiles, suite.source)
        cells.append(SuiteCell(suite=suite, name=cell_name(point), point=point, engine=engine, models=models))
    return cells


def cell_name(point: Mapping[str, Any]) -> str:
    """``bufferTokens=0.1,blockAfter=1.2`` (last path segments); ``default`` without a grid."""
    if not point:
        return "default"
    return ",".join(f"{key.split('.')[-1]}={_label(value)}" for key, value in point.items())


def _check_engine(cell: SuiteCell, source: str) -> None:
    from omlab.engine.config import OMConfig
    from omlab.engine.errors import ConfigError

    try:
        config = OMConfig.from_options(cell.engine)
    except ConfigError as error:
        key = _grid_key_for(error.option, cell) or f"engine.{error.option}"
        cell_note = f" (grid cell {cell.name})" if cell.point else ""
        raise SuiteError(source, key, f"{error.detail}{cell_note}") from None
    if config.scope != cell.suite.replay.scope:
        raise SuiteError(
            source,
            "replay.scope",
            f"the engine's scope is {config.scope!r} but [replay] scope is {cell.suite.replay.scope!r}: set both "
            "(resource = one thread per session in one resource, as in the published LongMemEval setup)",
        )


def _grid_key_for(option: str, cell: SuiteCell) -> str | None:
    wanted = _snake(option)
    for key in cell.point:
        if _snake(key) == wanted:
            return f"grid.{key}"
    return None


# --------------------------------------------------------------------------- engine options


def _with_models(engine: dict[str, Any], models: Mapping[str, Any], explicit: Mapping[str, bool]) -> dict[str, Any]:
    """Engine options with explicit observation.model and reflection.model (see the precedence).
    ``model`` beside ``observation.model`` or ``reflection.model`` is left for the engine to refuse,
    as it refuses it from Python."""
    observation = _section(engine, "observation")
    reflection = _section(engine, "reflection")
    if engine.get("model") is not None and (
        observation.get("model") is not None or reflection.get("model") is not None
    ):
        return engine
    top = engine.pop("model", None)
    given_obs = observation.pop("model", None)
    given_refl = reflection.pop("model", None)
    engine_observer = next((m for m in (top, given_obs, given_refl) if m is not None), None)
    engine_reflector = next((m for m in (top, given_refl, given_obs) if m is not None), None)
    observation["model"] = models["observer"] if explicit["observer"] or engine_observer is None else engine_observer
    reflection["model"] = models["reflector"] if explicit["reflector"] or engine_reflector is None else engine_reflector
    return engine


def _section(engine: dict[str, Any], name: str) -> dict[str, Any]:
    section = engine.get(name)
    if section is None:
        section = engine[name] = {}
    if not isinstance(section, dict):
        raise TypeError(f"engine.{name} must be a table")
    return section


def _set_path(options: dict[str, Any], path: list[str], value: Any) -> None:
    """Set ``a.b.c`` in nested options, replacing the same option spelt in the other case style."""
    node = options
    for part in path[:-1]:
        match = _same_option(node, part)
        child = node.get(match) if match else None
        if not isinstance(child, dict):
            child = {}
        if match and match != part:
            del node[match]
        node[part] = child
        node = child
    leaf = path[-1]
    match = _same_option(node, leaf)
    if match and match != leaf:
        del node[match]
    node[leaf] = value


def _same_option(node: Mapping[str, Any], name: str) -> str | None:
    wanted = _snake(name)
    return next((key for key in node if _snake(key) == wanted), None)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) >= 1000 else repr(value)
    if isinstance(value, (int, float, str)):
        return str(value)
    return re.sub(r"\s+", "", str(value))


__all__ = [
    "CACHE_MODES",
    "DATASET_KINDS",
    "DEFAULT_MODELS",
    "PHASE_ORDER",
    "CacheSpec",
    "DatasetSpec",
    "ReplaySpec",
    "RunSpec",
    "ScoringSpec",
    "Suite",
    "SuiteCell",
    "SuiteError",
    "available_suites",
    "cell_name",
    "expand_grid",
    "find_suite",
    "load_suite",
    "parse_suite",
    "suite_folders",
]

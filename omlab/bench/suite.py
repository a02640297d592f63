"""Benchmark suites: a TOML file that names a dataset, an engine config, models and a grid.

A suite file (every table but ``[suite]`` and ``[dataset]`` is optional)::

    [suite]
    name = "quickstart"                 # required; runs are grouped by it
    description = "..."

    [dataset]
    kind = "synthetic"                  # synthetic | longmemeval | locomo | jsonl
    seeds = [1, 2]                      # synthetic: one conversation per seed
    target_tokens = 20000               # synthetic: size of each conversation
    n_questions = 10                    # synthetic
    path = "data/longmemeval_s.json"    # longmemeval / locomo / jsonl (relative to the suite file)
    subset = "s"                        # longmemeval: oracle | s | m
    limit = 5                           # first N conversations
    turn_pace_s = 30                    # seconds between turns when only session dates exist

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

    [latency]                           # virtual latency of background/sync model calls
    default = { kind = "token-rate" }   # fixed | lognormal | token-rate | measured
    observer = { kind = "lognormal", median_s = 4.0, sigma = 0.4 }
    seed = 0

    [replay]
    scope = "thread"                    # resource scope is not implemented in the engine yet
    ingest = "message"                  # message | pair (a user turn and its reply together)
    timezone = "UTC"
    debug_payloads = "full"             # full | compact (drop transcripts from debug events)

    [phases]
    run = ["prepare", "answer", "judge"]

    [scoring]
    verdict = "parity"                  # parity | official | strict | lenient
    on_missing = "wrong"                # how failed questions count: wrong | drop
    judge_prompts = "prompts.json"      # optional: your own judge wording

    [cache]
    mode = "write"                      # off | read | write | strict (the response cache)
    prepared = true                     # reuse prepared memory across runs

    [run]
    workers = 2                         # processes for offline (CPU-bound) runs
    concurrency = 4                     # conversations in flight for provider-bound runs

Precedence: code defaults < suite TOML < keyword arguments / CLI flags. ``[models]`` observer and
reflector win over models named in ``[engine]``; with neither, the offline ``omlab/observer`` and
``omlab/reflector`` are used (a benchmark never calls a paid model by accident).

Grid: keys are dotted paths into ``[engine]`` (``observation.bufferTokens``) or into ``[models]``
(``models.actor``). Every cell of the cartesian product is its own run with its own run file and
``config_name`` (``bufferTokens=0.1,blockAfter=1.2``): runs stay one config each, which keeps the
results tables simple and lets cells run in parallel processes (one writer per file). A sweep
groups its runs by suite name and sweep id.

Every problem raises :class:`SuiteError` naming the file and the key.
"""

from __future__ import annotations

import copy
import itertools
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATASET_KINDS = ("synthetic", "longmemeval", "locomo", "jsonl")
PHASE_ORDER = ("prepare", "answer", "judge")
INGEST_MODES = ("message", "pair")
LATENCY_KINDS = ("fixed", "lognormal", "token-rate", "measured")
VERDICT_MODES = ("parity", "official", "strict", "lenient")
CACHE_MODES = ("off", "read", "write", "strict")
DEFAULT_MODELS = {"observer": "omlab/observer", "reflector": "omlab/reflector",
                  "actor": "omlab/reader", "judge": "omlab/judge"}
DEFAULT_LATENCY: dict[str, Any] = {"kind": "token-rate"}

_TABLES = ("suite", "dataset", "engine", "grid", "models", "latency", "replay", "phases", "scoring",
           "cache", "run")
_DATASET_KEYS = {
    "synthetic": ("kind", "seeds", "target_tokens", "n_questions", "session_tokens", "mix", "limit",
                  "turn_pace_s", "questions_per_conversation"),
    "longmemeval": ("kind", "path", "subset", "revision", "expected_sha256", "limit", "turn_pace_s",
                    "questions_per_conversation"),
    "locomo": ("kind", "path", "expected_sha256", "limit", "turn_pace_s", "questions_per_conversation"),
    "jsonl": ("kind", "path", "expected_sha256", "limit", "turn_pace_s", "questions_per_conversation"),
}
_LATENCY_FIELDS = {
    "fixed": ("seconds",),
    "lognormal": ("median_s", "sigma"),
    "token-rate": ("base_s", "input_tps", "output_tps"),
    "measured": (),
}


class SuiteError(ValueError):
    """A suite file that cannot be used; the message names the file and the key."""

    def __init__(self, source: str, key: str | None, problem: str) -> None:
        self.source = source
        self.key = key
        self.problem = problem
        where = f"{source}: [{key}]" if key and "." not in key else f"{source}: {key}" if key else source
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    """Which conversations a suite runs on (see the module docstring for the keys)."""

    kind: str
    path: str | None = None
    subset: str | None = None
    revision: str | None = None
    expected_sha256: str | None = None
    seeds: tuple[int, ...] = (1,)
    target_tokens: int = 20_000
    n_questions: int = 10
    session_tokens: int | None = None
    mix: dict[str, float] | None = None
    limit: int | None = None
    questions_per_conversation: int | None = None
    turn_pace_s: float | None = None

    def identity(self) -> dict[str, Any]:
        """The fields that decide which conversations and questions a run sees (for hashing)."""
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class ReplaySpec:
    """How conversations are fed to the engine."""

    scope: str = "thread"
    ingest: str = "message"
    timezone: str = "UTC"
    debug_payloads: str = "full"


@dataclass(frozen=True, slots=True)
class ScoringSpec:
    """How answers are judged and aggregated."""

    verdict: str = "parity"
    on_missing: str = "wrong"
    judge_prompts: str | None = None
    retention: bool = True


@dataclass(frozen=True, slots=True)
class CacheSpec:
    """The response cache mode and whether prepared memory is reused across runs."""

    mode: str = "write"
    prepared: bool = True


@dataclass(frozen=True, slots=True)
class RunSpec:
    """Parallelism (never part of any hash)."""

    workers: int | None = None
    concurrency: int = 4


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
    replay: ReplaySpec = ReplaySpec()
    phases: tuple[str, ...] = PHASE_ORDER
    scoring: ScoringSpec = ScoringSpec()
    cache: CacheSpec = CacheSpec()
    run: RunSpec = RunSpec()
    description: str = ""


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
    """Read and validate a suite TOML file.

    Raises:
        SuiteError: Unreadable TOML, an unknown table or key, a bad value, or an engine config
            (in any grid cell) the engine refuses.
    """
    file = Path(path)
    source = str(file)
    if not file.is_file():
        raise SuiteError(source, None, "no such suite file")
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise SuiteError(source, None, f"invalid TOML: {error}") from None
    return parse_suite(data, source=source, base_dir=file.resolve().parent)


def parse_suite(data: Mapping[str, Any], *, source: str = "<suite>", base_dir: str | Path = ".") -> Suite:
    """Validate an already-parsed suite mapping (what :func:`load_suite` reads from TOML)."""
    unknown = sorted(set(data) - set(_TABLES))
    if unknown:
        raise SuiteError(source, unknown[0], f"unknown table; suite tables are {', '.join(_TABLES)}")
    head = _table(data, "suite", source, required=True)
    _known_keys(head, ("name", "description"), "suite", source)
    name = head.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise SuiteError(source, "suite.name", f"must be a name of letters, digits, '.', '_' or '-', got {name!r}")
    models_table = dict(_table(data, "models", source))
    prices = models_table.pop("prices", {})
    if not isinstance(prices, Mapping):
        raise SuiteError(source, "models.prices", "must be a table of model = priced-as model or {input_per_mtok, output_per_mtok}")
    _known_keys(models_table, tuple(DEFAULT_MODELS), "models", source)
    for role, spec in models_table.items():
        _check_model(spec, f"models.{role}", source)
    suite = Suite(
        name=name,
        source=source,
        base_dir=str(base_dir),
        description=str(head.get("description", "")),
        dataset=_dataset(_table(data, "dataset", source, required=True), source),
        engine=copy.deepcopy(dict(_table(data, "engine", source))),
        grid=_grid(_table(data, "grid", source), source),
        models=dict(models_table),
        prices=dict(prices),
        latency=_latency(_table(data, "latency", source), source),
        replay=_replay(_table(data, "replay", source), source),
        phases=_phases(_table(data, "phases", source), source),
        scoring=_scoring(_table(data, "scoring", source), source),
        cache=_cache(_table(data, "cache", source), source),
        run=_run(_table(data, "run", source), source),
    )
    for section in ("observation", "reflection"):
        if section in suite.engine and not isinstance(suite.engine[section], Mapping):
            raise SuiteError(source, f"engine.{section}", "must be a table")
    for cell in expand_grid(suite):
        for role in ("actor", "judge"):
            _check_model(cell.models[role], f"models.{role}", source)
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
        cells.append(SuiteCell(suite=suite, name=cell_name(point), point=point,
                               engine=_with_models(engine, models, explicit), models=models))
    return cells


def cell_name(point: Mapping[str, Any]) -> str:
    """``bufferTokens=0.1,blockAfter=1.2`` (last path segments); ``default`` without a grid."""
    if not point:
        return "default"
    return ",".join(f"{key.split('.')[-1]}={_label(value)}" for key, value in point.items())


# --------------------------------------------------------------------------- sections


def _dataset(table: Mapping[str, Any], source: str) -> DatasetSpec:
    kind = table.get("kind")
    if kind not in DATASET_KINDS:
        raise SuiteError(source, "dataset.kind", f"must be one of {', '.join(DATASET_KINDS)}, got {kind!r}")
    _known_keys(table, _DATASET_KEYS[kind], "dataset", source)
    if kind != "synthetic" and kind != "longmemeval" and not isinstance(table.get("path"), str):
        raise SuiteError(source, "dataset.path", f"a {kind} dataset needs a path (a file, or a URL for locomo)")
    if "path" in table and not isinstance(table["path"], str):
        raise SuiteError(source, "dataset.path", f"must be a string, got {table['path']!r}")
    seeds = table.get("seeds", 1)
    seeds = [seeds] if isinstance(seeds, int) and not isinstance(seeds, bool) else seeds
    if not isinstance(seeds, list) or not seeds or not all(_is_int(s) for s in seeds):
        raise SuiteError(source, "dataset.seeds", f"must be an integer or a non-empty list of integers, got {seeds!r}")
    subset = table.get("subset")
    if subset is not None and subset not in ("oracle", "s", "m"):
        raise SuiteError(source, "dataset.subset", f"must be oracle, s or m, got {subset!r}")
    mix = table.get("mix")
    if mix is not None and (not isinstance(mix, Mapping) or not all(_is_number(v) for v in mix.values())):
        raise SuiteError(source, "dataset.mix", "must be a table of question kind = weight")
    return DatasetSpec(
        kind=kind,
        path=table.get("path"),
        subset=subset,
        revision=_optional_str(table, "revision", "dataset", source),
        expected_sha256=_optional_str(table, "expected_sha256", "dataset", source),
        seeds=tuple(seeds),
        target_tokens=_positive_int(table, "target_tokens", "dataset", source, 20_000),
        n_questions=_positive_int(table, "n_questions", "dataset", source, 10, allow_zero=True),
        session_tokens=_positive_int(table, "session_tokens", "dataset", source, None),
        mix=dict(mix) if mix is not None else None,
        limit=_positive_int(table, "limit", "dataset", source, None),
        questions_per_conversation=_positive_int(table, "questions_per_conversation", "dataset", source, None),
        turn_pace_s=_non_negative(table, "turn_pace_s", "dataset", source, None),
    )


def _grid(table: Mapping[str, Any], source: str) -> dict[str, list[Any]]:
    grid = {}
    for key, values in table.items():
        where = f"grid.{key}"
        if not isinstance(values, list) or not values:
            raise SuiteError(source, where, f"must be a non-empty list of values, got {values!r}")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", key):
            raise SuiteError(source, where, "must be a dotted option path such as observation.bufferTokens")
        if key.startswith("models.") and key.split(".", 1)[1] not in DEFAULT_MODELS:
            raise SuiteError(source, where, f"models.* grid keys must name a role: {', '.join(DEFAULT_MODELS)}")
        grid[key] = list(values)
    return grid


def _latency(table: Mapping[str, Any], source: str) -> dict[str, Any]:
    latency: dict[str, Any] = {"default": dict(DEFAULT_LATENCY), "by_name": {}, "seed": 0}
    for key, value in table.items():
        where = f"latency.{key}"
        if key == "seed":
            if not _is_int(value):
                raise SuiteError(source, where, f"must be an integer, got {value!r}")
            latency["seed"] = value
            continue
        spec = _latency_model(value, where, source)
        if key == "default":
            latency["default"] = spec
        else:
            latency["by_name"][key] = spec
    return latency


def _latency_model(value: Any, where: str, source: str) -> dict[str, Any]:
    spec = {"kind": value} if isinstance(value, str) else dict(value) if isinstance(value, Mapping) else None
    if spec is None or spec.get("kind") not in LATENCY_KINDS:
        raise SuiteError(source, where, f"must be a latency kind ({', '.join(LATENCY_KINDS)}) or a table "
                                        f"with kind = one of them, got {value!r}")
    allowed = _LATENCY_FIELDS[spec["kind"]]
    for name, number in spec.items():
        if name == "kind":
            continue
        if name not in allowed:
            raise SuiteError(source, f"{where}.{name}", f"unknown field for kind {spec['kind']!r}; "
                                                        f"fields: {', '.join(allowed) or '(none)'}")
        if not _is_number(number) or number < 0:
            raise SuiteError(source, f"{where}.{name}", f"must be a number >= 0, got {number!r}")
    if spec["kind"] == "fixed" and "seconds" not in spec:
        raise SuiteError(source, f"{where}.seconds", "a fixed latency needs seconds")
    if spec["kind"] == "lognormal" and not spec.get("median_s"):
        raise SuiteError(source, f"{where}.median_s", "a lognormal latency needs median_s > 0")
    if spec["kind"] == "token-rate" and any(spec.get(n) == 0 for n in ("input_tps", "output_tps")):
        raise SuiteError(source, where, "input_tps and output_tps must be > 0")
    return spec


def _replay(table: Mapping[str, Any], source: str) -> ReplaySpec:
    _known_keys(table, ReplaySpec.__slots__, "replay", source)
    spec = ReplaySpec(**table)
    if spec.scope != "thread":
        raise SuiteError(source, "replay.scope", f"scope {spec.scope!r} is not implemented in the engine yet "
                                                 "(only 'thread': one thread per conversation)")
    if spec.ingest not in INGEST_MODES:
        raise SuiteError(source, "replay.ingest", f"must be one of {', '.join(INGEST_MODES)}, got {spec.ingest!r}")
    if spec.debug_payloads not in ("full", "compact"):
        raise SuiteError(source, "replay.debug_payloads", f"must be full or compact, got {spec.debug_payloads!r}")
    try:
        from zoneinfo import ZoneInfo

        ZoneInfo(spec.timezone)
    except Exception:  # noqa: BLE001 - any failure means the zone name is unusable
        raise SuiteError(source, "replay.timezone", f"unknown IANA time zone {spec.timezone!r}") from None
    return spec


def _phases(table: Mapping[str, Any], source: str) -> tuple[str, ...]:
    _known_keys(table, ("run",), "phases", source)
    phases = table.get("run", list(PHASE_ORDER))
    if not isinstance(phases, list) or not phases or any(p not in PHASE_ORDER for p in phases):
        raise SuiteError(source, "phases.run", f"must be a non-empty list of {', '.join(PHASE_ORDER)}, got {phases!r}")
    if len(set(phases)) != len(phases) or list(phases) != sorted(phases, key=PHASE_ORDER.index):
        raise SuiteError(source, "phases.run", f"phases must be distinct and in the order prepare, answer, judge; got {phases!r}")
    # answering needs the prepared memory, judging needs answers: earlier phases are implied
    last = max(PHASE_ORDER.index(p) for p in phases)
    return PHASE_ORDER[: last + 1]


def _scoring(table: Mapping[str, Any], source: str) -> ScoringSpec:
    _known_keys(table, ScoringSpec.__slots__, "scoring", source)
    spec = ScoringSpec(**table)
    if spec.verdict not in VERDICT_MODES:
        raise SuiteError(source, "scoring.verdict", f"must be one of {', '.join(VERDICT_MODES)}, got {spec.verdict!r}")
    if spec.on_missing not in ("wrong", "drop"):
        raise SuiteError(source, "scoring.on_missing", f"must be wrong or drop, got {spec.on_missing!r}")
    if not isinstance(spec.retention, bool):
        raise SuiteError(source, "scoring.retention", f"must be true or false, got {spec.retention!r}")
    if spec.judge_prompts is not None and not isinstance(spec.judge_prompts, str):
        raise SuiteError(source, "scoring.judge_prompts", f"must be a path string, got {spec.judge_prompts!r}")
    return spec


def _cache(table: Mapping[str, Any], source: str) -> CacheSpec:
    _known_keys(table, CacheSpec.__slots__, "cache", source)
    spec = CacheSpec(**table)
    if spec.mode not in CACHE_MODES:
        raise SuiteError(source, "cache.mode", f"must be one of {', '.join(CACHE_MODES)}, got {spec.mode!r}")
    if not isinstance(spec.prepared, bool):
        raise SuiteError(source, "cache.prepared", f"must be true or false, got {spec.prepared!r}")
    return spec


def _run(table: Mapping[str, Any], source: str) -> RunSpec:
    _known_keys(table, RunSpec.__slots__, "run", source)
    return RunSpec(workers=_positive_int(table, "workers", "run", source, None),
                   concurrency=_positive_int(table, "concurrency", "run", source, 4))


def _check_model(spec: Any, where: str, source: str) -> None:
    from omlab.llm.spec import ModelSpecError, coerce_model_spec

    try:
        coerce_model_spec(spec)
    except (ModelSpecError, TypeError, ValueError) as error:
        raise SuiteError(source, where, str(error)) from None


def _check_engine(cell: SuiteCell, source: str) -> None:
    from omlab.engine.config import ConfigError, OMConfig

    try:
        config = OMConfig.from_options(cell.engine)
    except ConfigError as error:
        key = _grid_key_for(error.option, cell) or f"engine.{error.option}"
        cell_note = f" (grid cell {cell.name})" if cell.point else ""
        raise SuiteError(source, key, f"{error.detail}{cell_note}") from None
    if config.scope != "thread":
        raise SuiteError(source, "engine.scope", "scope 'resource' is not implemented in the engine yet; "
                                                 "use scope = 'thread' (one thread per conversation)")


def _grid_key_for(option: str, cell: SuiteCell) -> str | None:
    wanted = _snake(option)
    for key in cell.point:
        if _snake(key) == wanted:
            return f"grid.{key}"
    return None


# --------------------------------------------------------------------------- engine options


def _with_models(engine: dict[str, Any], models: Mapping[str, Any], explicit: Mapping[str, bool]) -> dict[str, Any]:
    """Engine options with explicit observation.model and reflection.model (see the precedence)."""
    top = engine.pop("model", None)
    observation = _section(engine, "observation")
    reflection = _section(engine, "reflection")
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
        raise ValueError(f"engine.{name} must be a table")
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


# --------------------------------------------------------------------------- value checks


def _table(data: Mapping[str, Any], name: str, source: str, *, required: bool = False) -> Mapping[str, Any]:
    value = data.get(name)
    if value is None:
        if required:
            raise SuiteError(source, name, "missing table")
        return {}
    if not isinstance(value, Mapping):
        raise SuiteError(source, name, f"must be a table, got {type(value).__name__}")
    return value


def _known_keys(table: Mapping[str, Any], allowed: tuple[str, ...], section: str, source: str) -> None:
    for key in table:
        if key not in allowed:
            raise SuiteError(source, f"{section}.{key}", f"unknown key; [{section}] keys are {', '.join(allowed)}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _positive_int(table: Mapping[str, Any], key: str, section: str, source: str, default: int | None, *,
                  allow_zero: bool = False) -> int | None:
    value = table.get(key, default)
    if value is None:
        return None
    if not _is_int(value) or value < (0 if allow_zero else 1):
        raise SuiteError(source, f"{section}.{key}", f"must be an integer >= {0 if allow_zero else 1}, got {value!r}")
    return value


def _non_negative(table: Mapping[str, Any], key: str, section: str, source: str, default: float | None) -> float | None:
    value = table.get(key, default)
    if value is None:
        return None
    if not _is_number(value) or value < 0:
        raise SuiteError(source, f"{section}.{key}", f"must be a number >= 0, got {value!r}")
    return float(value)


def _optional_str(table: Mapping[str, Any], key: str, section: str, source: str) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise SuiteError(source, f"{section}.{key}", f"must be a string, got {value!r}")
    return value


__all__ = [
    "CacheSpec",
    "DatasetSpec",
    "ReplaySpec",
    "RunSpec",
    "ScoringSpec",
    "Suite",
    "SuiteCell",
    "SuiteError",
    "cell_name",
    "expand_grid",
    "load_suite",
    "parse_suite",
]

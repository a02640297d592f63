"""The tables of a suite file other than ``[suite]``, ``[engine]`` and ``[models]``: their specs
and their parsers, each raising :class:`SuiteError` with the file and the key.

``omlab.bench.suite.suite_file`` assembles a :class:`~omlab.bench.suite.suite_file.Suite` from these; the file format is
described there.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

DATASET_KINDS = ("synthetic", "longmemeval", "locomo", "jsonl", "mastra")
PHASE_ORDER = ("prepare", "answer", "judge")
INGEST_MODES = ("message", "pair", "turn")
LATENCY_KINDS = ("fixed", "lognormal", "token-rate", "measured", "calibrated")
VERDICT_MODES = ("parity", "official", "strict", "lenient")
PROTOCOLS = ("omlab", "official")
F1_AGGREGATIONS = ("mean", "official")
CACHE_MODES = ("off", "read", "write", "strict")
DEFAULT_LATENCY: dict[str, Any] = {"kind": "token-rate"}
MODEL_ROLES = ("observer", "reflector", "actor", "judge")
EXECUTORS = ("pool", "ray")
"""Executor names accepted by ``--executor`` and ``[run] executor`` (:mod:`omlab.bench.run.executors`)."""

_DATASET_KEYS = {
    "synthetic": (
        "kind",
        "seeds",
        "target_tokens",
        "n_questions",
        "session_tokens",
        "mix",
        "limit",
        "turn_pace_s",
        "questions_per_conversation",
    ),
    "longmemeval": (
        "kind",
        "path",
        "subset",
        "revision",
        "expected_sha256",
        "limit",
        "turn_pace_s",
        "questions_per_conversation",
    ),
    "locomo": ("kind", "path", "expected_sha256", "limit", "turn_pace_s", "questions_per_conversation"),
    "jsonl": ("kind", "path", "expected_sha256", "limit", "turn_pace_s", "questions_per_conversation"),
    "mastra": ("kind", "path", "resource", "threads", "since", "until", "limit"),
}
_LATENCY_FIELDS = {
    "fixed": ("seconds",),
    "lognormal": ("median_s", "sigma"),
    "token-rate": ("base_s", "input_tps", "output_tps"),
    "measured": (),
    "calibrated": ("base_s", "input_s", "output_s", "sigma"),
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
    resource: str | None = None
    """mastra: only this resource's threads."""
    threads: tuple[str, ...] = ()
    """mastra: only these threads."""
    since: str | None = None
    """mastra: only messages at or after this time (ISO 8601 with an offset)."""
    until: str | None = None
    """mastra: only messages before this time."""

    def mastra_selection(self, base_dir: str | Path = ".") -> dict[str, Any]:
        """Keyword arguments of ``load_mastra``: the database (a file relative to ``base_dir``, or a
        URL), resource, threads, since and until."""
        from omlab.bench.datasets.mastra.source import is_postgres

        path = str(self.path)
        local = Path(path).expanduser()
        location = path if is_postgres(path) else str(local if local.is_absolute() else Path(base_dir) / local)
        since, until = (datetime.fromisoformat(v) if v else None for v in (self.since, self.until))
        threads = list(self.threads) or None
        return {"location": location, "resource": self.resource, "threads": threads, "since": since, "until": until}

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
    on_missing: str = "drop"
    judge_prompts: str | None = None
    retention: bool = True
    protocol: str = "omlab"
    official_files: str | None = None
    aggregation: str | None = None

    @property
    def f1_aggregation(self) -> str:
        """How per-question LoCoMo F1 is averaged: ``aggregation``, else ``official`` with the
        official protocol and ``mean`` without."""
        if self.aggregation is not None:
            return self.aggregation
        return "official" if self.protocol == "official" else "mean"


@dataclass(frozen=True, slots=True)
class CacheSpec:
    """The response cache mode and whether prepared memory is reused across runs."""

    mode: str = "write"
    prepared: bool = True


@dataclass(frozen=True, slots=True)
class RunSpec:
    """Parallelism and where tasks run (never part of any hash)."""

    workers: int | None = None
    concurrency: int = 4
    executor: str = "pool"
    address: str | None = None
    provider_concurrency: Mapping[str, int] | None = None
    """Requests in flight per provider (``{openai = 32}``; others: ``concurrency``)."""
    rpm: Mapping[str, int] | None = None
    """Requests per minute per provider, across every worker."""
    tpm: Mapping[str, int] | None = None
    """Tokens per minute per provider, across every worker."""

    def limits_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~omlab.llm.cluster_limits.local_limits` and
        :func:`~omlab.llm.cluster_limits.start_limits_actor` (``concurrency`` is the default)."""
        return {"per_provider": self.provider_concurrency, "rpm": self.rpm, "tpm": self.tpm}


# --------------------------------------------------------------------------- sections


def parse_dataset(table: Mapping[str, Any], source: str) -> DatasetSpec:
    """``[dataset]``: which conversations (kind-specific keys)."""
    kind = table.get("kind")
    if kind not in DATASET_KINDS:
        raise SuiteError(source, "dataset.kind", f"must be one of {', '.join(DATASET_KINDS)}, got {kind!r}")
    known_keys(table, _DATASET_KEYS[kind], "dataset", source)
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
        **_mastra_selection(table, source),
    )


def _mastra_selection(table: Mapping[str, Any], source: str) -> dict[str, Any]:
    """``[dataset]`` resource, threads, since and until of a ``mastra`` dataset."""
    out: dict[str, Any] = {"resource": _optional_str(table, "resource", "dataset", source)}
    path = table.get("path")
    if table.get("kind") == "mastra" and isinstance(path, str) and re.match(r"postgres(ql)?://[^/@]*:[^/@]*@", path):
        raise SuiteError(
            source,
            "dataset.path",
            "holds a password: a run stores its dataset path, so give the password with PGPASSWORD or ~/.pgpass",
        )
    threads = table.get("threads", [])
    threads = [threads] if isinstance(threads, str) else threads
    if not isinstance(threads, list) or not all(isinstance(t, str) and t for t in threads):
        raise SuiteError(source, "dataset.threads", f"must be a thread id or a list of thread ids, got {threads!r}")
    out["threads"] = tuple(threads)
    for key in ("since", "until"):
        value = table.get(key)
        if value is None:
            out[key] = None
            continue
        try:
            moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
        except ValueError:
            raise SuiteError(source, f"dataset.{key}", f"must be a date-time, got {value!r}") from None
        if not isinstance(moment, datetime) or moment.tzinfo is None:
            raise SuiteError(source, f"dataset.{key}", f"must be a date-time with an offset (e.g. ...Z), got {value!r}")
        out[key] = moment.isoformat()
    return out


ENGINE_MODEL_KEYS = ("model", "observation.model", "reflection.model")
"""The engine options that name a model."""


def parse_grid(table: Mapping[str, Any], source: str) -> dict[str, list[Any]]:
    """``[grid]``: dotted option path -> non-empty list of values."""
    grid = {}
    for key, values in table.items():
        where = f"grid.{key}"
        if not isinstance(values, list) or not values:
            raise SuiteError(source, where, f"must be a non-empty list of values, got {values!r}")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", key):
            raise SuiteError(source, where, "must be a dotted option path such as observation.bufferTokens")
        if key.startswith("models.") and key.split(".", 1)[1] not in MODEL_ROLES:
            raise SuiteError(source, where, f"models.* grid keys must name a role: {', '.join(MODEL_ROLES)}")
        if key.startswith("models.") or key in ENGINE_MODEL_KEYS:
            for value in values:
                check_model(value, where, source)
        grid[key] = list(values)
    return grid


def parse_latency(table: Mapping[str, Any], source: str) -> dict[str, Any]:
    """``[latency]``: ``default``, ``seed`` and per model/role latency models."""
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
        raise SuiteError(
            source,
            where,
            f"must be a latency kind ({', '.join(LATENCY_KINDS)}) or a table with kind = one of them, got {value!r}",
        )
    allowed = _LATENCY_FIELDS[spec["kind"]]
    for name, number in spec.items():
        if name == "kind":
            continue
        if name not in allowed:
            raise SuiteError(
                source,
                f"{where}.{name}",
                f"unknown field for kind {spec['kind']!r}; fields: {', '.join(allowed) or '(none)'}",
            )
        if not _is_number(number) or number < 0:
            raise SuiteError(source, f"{where}.{name}", f"must be a number >= 0, got {number!r}")
    if spec["kind"] == "fixed" and "seconds" not in spec:
        raise SuiteError(source, f"{where}.seconds", "a fixed latency needs seconds")
    if spec["kind"] == "lognormal" and not spec.get("median_s"):
        raise SuiteError(source, f"{where}.median_s", "a lognormal latency needs median_s > 0")
    if spec["kind"] == "calibrated" and "base_s" not in spec:
        raise SuiteError(source, f"{where}.base_s", "a calibrated latency needs base_s")
    if spec["kind"] == "token-rate" and any(spec.get(n) == 0 for n in ("input_tps", "output_tps")):
        raise SuiteError(source, where, "input_tps and output_tps must be > 0")
    return spec


def parse_replay(table: Mapping[str, Any], source: str) -> ReplaySpec:
    """``[replay]``: scope, ingestion granularity, time zone, debug payloads."""
    known_keys(table, ReplaySpec.__slots__, "replay", source)
    spec = ReplaySpec(**table)
    if spec.scope not in ("thread", "resource"):
        raise SuiteError(source, "replay.scope", f"must be 'thread' or 'resource', got {spec.scope!r}")
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


def parse_phases(table: Mapping[str, Any], source: str) -> tuple[str, ...]:
    """``[phases] run``: the phases to run, earlier phases implied."""
    known_keys(table, ("run",), "phases", source)
    phases = table.get("run", list(PHASE_ORDER))
    if not isinstance(phases, list) or not phases or any(p not in PHASE_ORDER for p in phases):
        raise SuiteError(source, "phases.run", f"must be a non-empty list of {', '.join(PHASE_ORDER)}, got {phases!r}")
    if len(set(phases)) != len(phases) or list(phases) != sorted(phases, key=PHASE_ORDER.index):
        raise SuiteError(
            source,
            "phases.run",
            f"phases must be distinct and in the order prepare, answer, judge; got {phases!r}",
        )
    # answering needs the prepared memory, judging needs answers: earlier phases are implied
    last = max(PHASE_ORDER.index(p) for p in phases)
    return PHASE_ORDER[: last + 1]


def parse_scoring(table: Mapping[str, Any], source: str) -> ScoringSpec:
    """``[scoring]``: verdict parse mode, failure policy, judge prompts, retention."""
    known_keys(table, ScoringSpec.__slots__, "scoring", source)
    spec = ScoringSpec(**table)
    if spec.verdict not in VERDICT_MODES:
        raise SuiteError(source, "scoring.verdict", f"must be one of {', '.join(VERDICT_MODES)}, got {spec.verdict!r}")
    if spec.on_missing not in ("wrong", "drop"):
        raise SuiteError(source, "scoring.on_missing", f"must be wrong or drop, got {spec.on_missing!r}")
    if not isinstance(spec.retention, bool):
        raise SuiteError(source, "scoring.retention", f"must be true or false, got {spec.retention!r}")
    if spec.judge_prompts is not None and not isinstance(spec.judge_prompts, str):
        raise SuiteError(source, "scoring.judge_prompts", f"must be a path string, got {spec.judge_prompts!r}")
    if spec.protocol not in PROTOCOLS:
        raise SuiteError(source, "scoring.protocol", f"must be one of {', '.join(PROTOCOLS)}, got {spec.protocol!r}")
    if spec.official_files is not None and not isinstance(spec.official_files, str):
        raise SuiteError(
            source,
            "scoring.official_files",
            f"must be the path of your copy of LoCoMo's task_eval/gpt_utils.py (or its checkout), got "
            f"{spec.official_files!r}",
        )
    if spec.aggregation is not None and spec.aggregation not in F1_AGGREGATIONS:
        raise SuiteError(
            source, "scoring.aggregation", f"must be one of {', '.join(F1_AGGREGATIONS)}, got {spec.aggregation!r}"
        )
    return spec


def parse_cache(table: Mapping[str, Any], source: str) -> CacheSpec:
    """``[cache]``: response cache mode and prepared-memory reuse."""
    known_keys(table, CacheSpec.__slots__, "cache", source)
    spec = CacheSpec(**table)
    if spec.mode not in CACHE_MODES:
        raise SuiteError(source, "cache.mode", f"must be one of {', '.join(CACHE_MODES)}, got {spec.mode!r}")
    if not isinstance(spec.prepared, bool):
        raise SuiteError(source, "cache.prepared", f"must be true or false, got {spec.prepared!r}")
    return spec


def parse_run(table: Mapping[str, Any], source: str) -> RunSpec:
    """``[run]``: workers, concurrency, executor (``pool`` or ``ray``) and the Ray address."""
    known_keys(table, RunSpec.__slots__, "run", source)
    executor = table.get("executor", "pool")
    if executor not in EXECUTORS:
        raise SuiteError(source, "run.executor", f"must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    address = table.get("address")
    if address is not None:
        try:
            check_address(address)
        except ValueError as error:
            raise SuiteError(source, "run.address", str(error)) from None
    limits = {key: table.get(key) for key in ("provider_concurrency", "rpm", "tpm")}
    for key, value in limits.items():
        _check_provider_limits(value, f"run.{key}", source)
    return RunSpec(
        workers=_positive_int(table, "workers", "run", source, None),
        concurrency=_positive_int(table, "concurrency", "run", source, 4),
        executor=executor,
        address=address,
        **limits,
    )


def _check_provider_limits(value: Any, where: str, source: str) -> None:
    """A ``{provider = positive integer}`` table (e.g. ``rpm = { openai = 500 }``) or absent."""
    if value is None:
        return
    if not isinstance(value, Mapping) or not value:
        raise SuiteError(source, where, f"must be a table of provider = limit (e.g. {{ openai = 500 }}), got {value!r}")
    for provider, limit in value.items():
        if "/" in provider or not provider.strip():
            raise SuiteError(source, where, f"{provider!r} is not a provider name (e.g. openai, anthropic, google)")
        if not _is_int(limit) or limit < 1:
            raise SuiteError(source, f"{where}.{provider}", f"must be a positive integer, got {limit!r}")


def check_address(address: object) -> str:
    """``address`` if it names a Ray cluster (``auto``, ``ray://HOST:PORT`` or ``HOST:PORT``)."""
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"must be 'auto', 'ray://HOST:PORT' or 'HOST:PORT', got {address!r}")
    if address == "auto" or address.startswith("ray://") or ":" in address:
        return address
    raise ValueError(f"must be 'auto', 'ray://HOST:PORT' or 'HOST:PORT', got {address!r}")


def check_model(spec: Any, where: str, source: str) -> None:
    """Raise :class:`SuiteError` unless ``spec`` is a usable model spec naming models that exist."""
    from omlab.llm.model_names import check_known_models
    from omlab.llm.spec import ModelSpecError, coerce_model_spec

    try:
        check_known_models(coerce_model_spec(spec))
    except (ModelSpecError, TypeError, ValueError) as error:
        raise SuiteError(source, where, str(error)) from None


# --------------------------------------------------------------------------- value checks


def table(data: Mapping[str, Any], name: str, source: str, *, required: bool = False) -> Mapping[str, Any]:
    """The table ``name`` of the suite (``{}`` when absent and not required)."""
    value = data.get(name)
    if value is None:
        if required:
            raise SuiteError(source, name, "missing table")
        return {}
    if not isinstance(value, Mapping):
        raise SuiteError(source, name, f"must be a table, got {type(value).__name__}")
    return value


def known_keys(table: Mapping[str, Any], allowed: tuple[str, ...], section: str, source: str) -> None:
    """Raise :class:`SuiteError` on the first key of ``table`` not in ``allowed``."""
    for key in table:
        if key not in allowed:
            raise SuiteError(source, f"{section}.{key}", f"unknown key; [{section}] keys are {', '.join(allowed)}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _positive_int(
    table: Mapping[str, Any],
    key: str,
    section: str,
    source: str,
    default: int | None,
    *,
    allow_zero: bool = False,
) -> int | None:
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
    "CACHE_MODES",
    "DATASET_KINDS",
    "F1_AGGREGATIONS",
    "INGEST_MODES",
    "LATENCY_KINDS",
    "MODEL_ROLES",
    "PHASE_ORDER",
    "PROTOCOLS",
    "VERDICT_MODES",
    "CacheSpec",
    "DatasetSpec",
    "ReplaySpec",
    "RunSpec",
    "ScoringSpec",
    "SuiteError",
    "check_model",
    "known_keys",
    "parse_cache",
    "parse_dataset",
    "parse_grid",
    "parse_latency",
    "parse_phases",
    "parse_replay",
    "parse_run",
    "parse_scoring",
    "table",
]

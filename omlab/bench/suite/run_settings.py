"""Everything a conversation job needs to know about its run, as plain picklable data.

:class:`RunSettings` is built once per run from a :class:`~omlab.bench.suite.suite_file.SuiteCell` and sent
to every job (in this process or a worker process). It knows how to build the job's model client
(response cache, prices) and latency model, and computes the run's hashes:

* ``engine_hash``: the engine's own :meth:`~omlab.engine.config.OMConfig.config_hash`;
* ``prepare_key(conversation)``: which prepared memory a conversation can reuse: engine hash,
  ingestion options, latency model, prices and the conversation's content digest (the actor and
  judge are not in it, so swapping them reuses the prepared memory);
* ``run_hash(...)``: the run's ``config_hash``: everything that changes results (engine, models,
  prices, latency, replay, scoring, the dataset and its limits). Never parallelism or cache mode.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from omlab.bench.datasets.provenance import conversations_digest
from omlab.bench.datasets.schema import Conversation
from omlab.bench.suite.retry import RetrySpec
from omlab.bench.suite.suite_file import ReplaySpec, ScoringSpec, SuiteCell, SuiteError
from omlab.engine.config import OMConfig
from omlab.engine.scheduler import (
    CalibratedLatency,
    FixedLatency,
    LatencyModel,
    LognormalLatency,
    MeasuredLatency,
    PerModelLatency,
    TokenRateLatency,
)
from omlab.llm.cache_damage import check_cache_file
from omlab.llm.client import ModelClient
from omlab.llm.types import ModelCall

HASH_VERSION = 1
CACHE_FILE = "responses.sqlite"
PREPARED_DIR = "om"


def cache_dir(results_dir: str | Path) -> Path:
    """``<results>/cache``: the response cache file and the prepared memories live here."""
    return Path(results_dir) / "cache"


@dataclass(frozen=True, slots=True)
class RunSettings:
    """A run's resolved settings (picklable; see the module docstring)."""

    suite: str
    config_name: str
    engine_options: dict[str, Any]
    models: dict[str, Any]
    prices: dict[str, Any]
    latency: dict[str, Any]
    replay: ReplaySpec
    scoring: ScoringSpec
    dataset_kind: str
    phases: tuple[str, ...]
    cache_mode: str = "write"
    cache_path: str | None = None
    prepared_dir: str | None = None
    judge_prompts_path: str | None = None
    grid_point: dict[str, Any] = field(default_factory=dict)
    official_files_path: str | None = None
    cache_layered: bool = False
    """On a cluster worker: read ``cache_path`` as a read-only snapshot (None: empty) and keep new
    entries in memory for the driver (:mod:`omlab.llm.cache_snapshot`)."""
    retry: RetrySpec = field(default_factory=RetrySpec)

    @classmethod
    def from_cell(
        cls,
        cell: SuiteCell,
        *,
        results_dir: str | Path,
        cache_mode: str | None = None,
        reuse_prepared: bool | None = None,
        retry: RetrySpec | None = None,
    ) -> RunSettings:
        """Settings of one suite cell; ``cache_mode``/``reuse_prepared`` override the suite's
        ``[cache]``, ``retry`` its ``[retry]``."""
        suite = cell.suite
        prompts = suite.scoring.judge_prompts
        if prompts is not None:
            prompts = str((Path(suite.base_dir) / prompts).resolve())
            if not Path(prompts).is_file():
                raise SuiteError(suite.source, "scoring.judge_prompts", f"no such file {prompts}")
        official = suite.scoring.official_files
        if official is not None:
            from omlab.bench.scoring.locomo_protocol import official_file

            official = str(official_file((Path(suite.base_dir) / official).resolve()))
            if not Path(official).is_file():
                raise SuiteError(suite.source, "scoring.official_files", f"no such file {official}")
        caches = cache_dir(results_dir)
        mode = cache_mode or suite.cache.mode
        if mode != "off":  # a damaged cache: one error naming it, before any model call
            check_cache_file(caches / CACHE_FILE)
        reuse = suite.cache.prepared if reuse_prepared is None else reuse_prepared
        return cls(
            suite=suite.name,
            config_name=cell.name,
            engine_options=cell.engine,
            models={role: cell.models[role] for role in ("observer", "reflector", "actor", "judge")},
            prices=dict(suite.prices),
            latency=suite.latency,
            replay=suite.replay,
            scoring=suite.scoring,
            dataset_kind=suite.dataset.kind,
            phases=suite.phases,
            cache_mode=mode,
            cache_path=str(caches / CACHE_FILE),
            prepared_dir=str(caches / PREPARED_DIR) if reuse else None,
            judge_prompts_path=prompts,
            grid_point=dict(cell.point),
            official_files_path=official,
            retry=retry or suite.retry,
        )

    # ------------------------------------------------------------------ hashes

    def engine_config(self) -> OMConfig:
        return OMConfig.from_options(self.engine_options)

    def engine_hash(self) -> str:
        return self.engine_config().config_hash()

    def prepare_identity(self) -> dict[str, Any]:
        """What decides a prepared memory, apart from the conversation itself."""
        return {
            "version": HASH_VERSION,
            "engine": self.engine_hash(),
            "ingest": self.replay.ingest,
            "timezone": self.replay.timezone,
            "debug_payloads": self.replay.debug_payloads,
            "latency": self.latency,
            "prices": self.prices,
            **({"speaker_names": True} if self.speaker_names() else {}),
        }

    def prepare_key(self, conversation: Conversation) -> str:
        """sha256 of :meth:`prepare_identity` and the conversation's content digest."""
        return _sha256({"prepare": self.prepare_identity(), "conversation": conversations_digest([conversation])})

    def run_hash(self, dataset_identity: Mapping[str, Any]) -> str:
        """The run's ``config_hash`` (see the module docstring)."""
        return _sha256(
            {
                "prepare": self.prepare_identity(),
                "actor": self.models["actor"],
                "judge": self.models["judge"],
                "scoring": {
                    **_scoring_identity(self.scoring),
                    "judge_prompts": _file_digest(self.judge_prompts_path),
                    **({"official_files": _file_digest(self.official_files_path)} if self.official_files_path else {}),
                },
                "dataset": dict(dataset_identity),
            }
        )

    def describe(self) -> dict[str, Any]:
        """The resolved settings as JSON (the runs row's ``config_json``)."""
        return {
            "engine_options": self.engine_options,
            "engine": self.engine_config().to_dict(include_runtime=False),
            "engine_hash": self.engine_hash(),
            "models": self.models,
            "prices": self.prices,
            "latency": self.latency,
            "replay": {**asdict(self.replay), "speaker_names": self.speaker_names()},
            "scoring": {**asdict(self.scoring), **self.protocol_description()},
            "phases": list(self.phases),
            "grid_point": self.grid_point,
        }

    def price_map(self) -> dict[str, Any]:
        """The prices this run's costs are computed with (the runs row's ``price_map``): the
        suite's ``[models.prices]`` overrides, litellm's version (whose bundled map prices the rest)
        and, per model the configuration can call, the resolved base price per million tokens
        (None: no price resolves, its calls count $0 and are listed as unpriced)."""
        from omlab.bench.results.provenance import package_version
        from omlab.llm.pricing import price_call

        parts = [self.engine_options.get(part) for part in ("observation", "reflection")]
        specs = [part.get("model") for part in parts if isinstance(part, Mapping)]
        specs += [self.models[role] for role in ("observer", "reflector", "actor", "judge")]
        resolved: dict[str, Any] = {}
        for model in (m for spec in specs for m in model_strings(spec) if isinstance(m, str)):
            if model not in resolved:
                per_input = price_call(model, 1_000_000, 0, overrides=self.prices)
                per_output = price_call(model, 0, 1_000_000, overrides=self.prices)
                resolved[model] = (
                    None if per_input is None else {"input_per_mtok": per_input, "output_per_mtok": per_output}
                )
        return {
            "overrides": {k: v if isinstance(v, str | Mapping) else asdict(v) for k, v in self.prices.items()},
            "litellm_version": package_version("litellm"),
            "models": resolved,
        }

    def uses_locomo_protocol(self) -> bool:
        """Whether answers follow LoCoMo's official QA protocol (``omlab.bench.scoring.locomo_protocol``)."""
        return self.dataset_kind == "locomo" and self.scoring.protocol == "official"

    def speaker_names(self) -> bool:
        """Whether replayed messages carry their speakers' names (LoCoMo's official protocol:
        the Observer's history, the actor's context and the answer prompt name the two people, as
        the official transcript does)."""
        return self.uses_locomo_protocol()

    def protocol_description(self) -> dict[str, Any]:
        """Which QA protocol, wording and F1 aggregation the run uses (recorded in ``config_json``)."""
        described: dict[str, Any] = {"f1_aggregation": self.scoring.f1_aggregation}
        if self.uses_locomo_protocol():
            from omlab.bench.scoring.locomo_protocol import locomo_protocol

            wording = locomo_protocol(self.official_files_path)
            described["protocol_wording"] = {"source": wording.source, "sha256": wording.sha256}
        return described

    # ------------------------------------------------------------------ builders

    def make_client(self, on_call: Callable[[ModelCall], None], *, limits: Any = None) -> ModelClient:
        """A model client that records calls with ``on_call``, priced with ``prices``, reading and
        writing the response cache in ``cache_mode`` (and sharing provider ``limits`` if given)."""
        options: dict[str, Any] = {"on_call": on_call, "prices": self.prices}
        accepted = inspect.signature(ModelClient).parameters
        if "retry_by_role" in accepted:
            options["retry_by_role"] = self.retry.policies()
        if self.cache_mode != "off" and "cache" in accepted and self.cache_layered:
            from omlab.llm.cache_snapshot import LayeredCache

            options["cache"] = LayeredCache.for_process(self.cache_path, self.cache_mode)  # type: ignore[arg-type]
        elif self.cache_mode != "off" and "cache" in accepted:
            from omlab.llm.cache import ResponseCache

            options["cache"] = ResponseCache(self.cache_path, mode=self.cache_mode)
        if limits is not None and "limits" in accepted:
            options["limits"] = limits
        return ModelClient(**options)

    def latency_for(self, conversation_id: str) -> LatencyModel:
        """The latency model of one conversation's replay. Lognormal draws are seeded from the
        suite's latency seed and the conversation id, so a replay is reproducible on its own."""
        seed = int(hashlib.sha256(f"{self.latency.get('seed', 0)}:{conversation_id}".encode()).hexdigest()[:8], 16)
        by_name = {name: build_latency(spec, seed) for name, spec in self.latency.get("by_name", {}).items()}
        default = build_latency(self.latency.get("default", {"kind": "token-rate"}), seed)
        return PerModelLatency(by_name, default) if by_name else default

    def all_models_offline(self) -> bool:
        """Whether every model of the run is a built-in ``omlab/`` model (CPU-bound, no provider)."""
        names: list[str | None] = []
        for spec in self.models.values():
            names.extend(model_strings(spec))
        return bool(names) and all(isinstance(n, str) and n.startswith("omlab/") for n in names)


def build_latency(spec: Mapping[str, Any], seed: int = 0) -> LatencyModel:
    """A latency model from a ``[latency]`` entry (kinds: fixed, lognormal, token-rate, measured,
    calibrated)."""
    kind = spec.get("kind")
    params = {k: v for k, v in spec.items() if k != "kind"}
    if kind == "fixed":
        return FixedLatency(float(params["seconds"]))
    if kind == "lognormal":
        return LognormalLatency(float(params["median_s"]), float(params.get("sigma", 0.5)), seed=seed)
    if kind == "token-rate":
        return TokenRateLatency(**{k: float(v) for k, v in params.items()})
    if kind == "measured":
        return MeasuredLatency()
    if kind == "calibrated":
        return CalibratedLatency(**{k: float(v) for k, v in params.items()}, seed=seed)
    raise ValueError(f"unknown latency kind {kind!r}; kinds: fixed, lognormal, token-rate, measured, calibrated")


def model_strings(spec: Any) -> list[str | None]:
    """The ``provider/model`` strings a JSON-style model spec can reach (None for a callable)."""
    if isinstance(spec, str):
        return [spec]
    if isinstance(spec, Mapping):
        if "model" in spec:
            return model_strings(spec["model"])
        table = spec.get("upTo", spec.get("up_to"))
        if isinstance(table, Mapping):
            return [name for tier in table.values() for name in model_strings(tier)]
        return [None]
    if isinstance(spec, (list, tuple)):
        return [name for entry in spec for name in model_strings(entry)]
    return [None]


def _scoring_identity(scoring: ScoringSpec) -> dict[str, Any]:
    """The scoring settings that change results; the protocol options only when they are not
    the defaults, so runs made before they existed keep their hash (and resume)."""
    identity = asdict(scoring)
    defaults = ScoringSpec()
    for name in ("protocol", "official_files", "aggregation"):
        if identity[name] == getattr(defaults, name):
            del identity[name]
    return identity


def _file_digest(path: str | None) -> str | None:
    if path is None:
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _sha256(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = ["RunSettings", "build_latency", "cache_dir", "model_strings"]

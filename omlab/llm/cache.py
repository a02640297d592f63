"""A content-addressed cache of model responses, shared by every process of a run.

The key of a call is a versioned sha256 of the canonical JSON of what decides the output
(:func:`cache_key_material`): the *resolved* model string of the attempt (so the tiers of a
``ModelByInputTokens`` cache separately), the messages, ``temperature``, ``max_output_tokens``,
``response_format``, the merged ``provider_options`` and the entry's ``model_settings`` minus
secrets and transport settings. Headers, API keys, timeouts, retries and request metadata never
enter the key, so they can change without invalidating anything.

Modes (``ResponseCache(path, mode=...)``):

* ``off``: never read, never write;
* ``read``: answer from hits, never write;
* ``write`` (default): answer from hits, record misses once the model answered;
* ``strict``: answer from hits; a miss raises :class:`CacheMissError` naming the model and key
  (tests and CI use it to prove a rerun makes no new model call).

Storage is one SQLite file in WAL mode: several processes (a process pool, parallel sweeps, a
notebook) can read and write it at once; the first answer written for a key wins, so a rerun
always reproduces the first run. ``path=None`` keeps the cache in memory for this process only.
An entry holds the text, usage, finish reason, resolved model, tier, the original latency and
cost, the secret-free provider metadata, the role and the time it was written; never the request
itself, headers or keys.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Self, get_args

from omlab.llm.cache_damage import CorruptCacheError, damage_named
from omlab.llm.spec import ResolvedAttempt, merge_provider_options
from omlab.llm.types import ModelCall, ModelRequest, Usage

logger = logging.getLogger(__name__)

CacheMode = Literal["off", "read", "write", "strict"]
CACHE_MODES: tuple[str, ...] = get_args(CacheMode)

CACHE_KEY_VERSION = 1
"""Bumped whenever the key material changes, so old entries are never served for new keys."""

SCHEMA_VERSION = 1

# Settings that change how a request travels, not what the model answers.
_TRANSPORT_SETTINGS = frozenset(
    {
        "timeout",
        "max_retries",
        "maxretries",
        "num_retries",
        "abortsignal",
        "headers",
        "extra_headers",
        "metadata",
    }
)
# Matched against the setting name lower-cased without "_" / "-": "api_key", "apiKey",
# "aws_secret_access_key", "vertex_credentials"… but not "max_tokens" or "maxOutputTokens".
_SECRET_MARKERS = (
    "apikey",
    "secret",
    "password",
    "authorization",
    "credential",
    "accesskey",
    "accesstoken",
    "authtoken",
    "sessiontoken",
    "bearer",
)

_BUSY_TIMEOUT_S = 60.0


class CacheMissError(RuntimeError):
    """A strict-mode cache had no entry for a call. ``call`` is the recorded failed ``ModelCall``."""

    def __init__(self, model: str, key: str, *, tried: Sequence[tuple[str, str]] = ()) -> None:
        others = [f"{m} ({k})" for m, k in tried if k != key]
        extra = f"; fallbacks tried too: {', '.join(others)}" if others else ""
        super().__init__(
            f"response cache is in strict mode and has no entry for {model} (key {key}){extra}; "
            "run once with the cache in 'write' mode to record it"
        )
        self.model = model
        self.key = key
        self.call: ModelCall | None = None


class CacheKeyError(ValueError):
    """A request value that has no canonical JSON form (names the field and the type)."""


# --- keys ---------------------------------------------------------------------------------------


def is_output_setting(name: str) -> bool:
    """Whether a ``model_settings`` entry may change the answer (and so belongs in the key)."""
    folded = name.lower().replace("_", "").replace("-", "")
    if name.lower() in _TRANSPORT_SETTINGS or folded in _TRANSPORT_SETTINGS:
        return False
    return not any(marker in folded for marker in _SECRET_MARKERS)


def cache_key_material(attempt: ResolvedAttempt, request: ModelRequest) -> dict[str, Any]:
    """The output-deciding fields of one attempt, as hashed by :func:`cache_key`."""
    options = merge_provider_options(request.provider_options, attempt.provider_options)
    settings = {k: v for k, v in attempt.model_settings.items() if is_output_setting(k)}
    material = {
        "key_version": CACHE_KEY_VERSION,
        "model": attempt.model,
        "messages": request.messages,
        "temperature": request.temperature,
        "max_output_tokens": request.max_output_tokens,
        "response_format": request.response_format,
        "provider_options": options,
        "model_settings": settings,
    }
    if request.cache_salt is not None:  # absent otherwise, so existing keys stay valid
        material["cache_salt"] = request.cache_salt
    if request.tools:
        material["tools"] = request.tools
    return material


def cache_key(attempt: ResolvedAttempt, request: ModelRequest) -> str:
    """``"v1:<sha256 hex>"`` of the canonical JSON of :func:`cache_key_material`.

    Raises:
        CacheKeyError: a value in the request cannot be written as canonical JSON.
    """
    digest = hashlib.sha256(canonical_json(cache_key_material(attempt, request)).encode("utf-8"))
    return f"v{CACHE_KEY_VERSION}:{digest.hexdigest()}"


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, integral floats as integers (``0.0`` and ``0`` mean the same
    temperature), tuples as lists; pydantic models and classes by their JSON schema/dump."""
    return json.dumps(
        _canonical(value, "request"),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def _canonical(value: Any, where: str) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CacheKeyError(f"{where}: {value!r} has no JSON form")
        return int(value) if value.is_integer() else value
    if isinstance(value, enum.Enum):
        return _canonical(value.value, where)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise CacheKeyError(f"{where}: mapping key {key!r} is not a string")
            out[key] = _canonical(item, f"{where}.{key}")
        return out
    if isinstance(value, list | tuple):
        return [_canonical(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, set | frozenset):
        return sorted((_canonical(item, where) for item in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, bytes | bytearray):
        return {"sha256": hashlib.sha256(bytes(value)).hexdigest()}
    if isinstance(value, type) and hasattr(value, "model_json_schema"):  # a pydantic model class
        return {"schema_of": value.__qualname__, "schema": _canonical(value.model_json_schema(), where)}
    if hasattr(value, "model_dump") and callable(value.model_dump):  # a pydantic model instance
        return _canonical(value.model_dump(mode="json"), where)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _canonical(dataclasses.asdict(value), where)
    raise CacheKeyError(f"{where}: a value of type {type(value).__name__} has no canonical JSON form")


# --- entries ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CachedResponse:
    """One stored answer. ``latency_s`` and ``cost_usd`` are those of the call that produced it."""

    key: str
    model: str
    text: str
    usage: Usage
    finish_reason: str | None = None
    tier: int | None = None
    latency_s: float = 0.0
    cost_usd: float | None = None
    provider_metadata: dict[str, Any] = field(default_factory=dict)
    role: str | None = None
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class CacheStats:
    """What this process did with the cache: one hit or miss per looked-up call."""

    hits: int = 0
    misses: int = 0
    writes: int = 0


_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    role TEXT,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    finish_reason TEXT,
    tier INTEGER,
    latency_s REAL NOT NULL,
    cost_usd REAL,
    provider_metadata TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS cache_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_COLUMNS = (
    "key, model, role, text, input_tokens, output_tokens, finish_reason, tier, latency_s, cost_usd, "
    "provider_metadata, created_at"
)


# --- the cache ----------------------------------------------------------------------------------


class ResponseCache:
    """The response cache (module docstring). Safe to share between threads and processes.

    Each process opens its own SQLite connection on first use (a cache object may be pickled into
    a process pool: only the path and mode travel). ``stats()`` counts this object's activity.
    """

    def __init__(self, path: Path | str | None, mode: CacheMode = "write") -> None:
        if mode not in CACHE_MODES:
            raise ValueError(f"ResponseCache mode must be one of {', '.join(CACHE_MODES)}, got {mode!r}")
        if path is not None and not isinstance(path, str | os.PathLike):
            raise TypeError(f"ResponseCache path must be a path, a string or None, got {type(path).__name__}")
        self.path: Path | None = Path(path).expanduser() if path is not None else None
        self.mode: CacheMode = mode
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None
        self._hits = self._misses = self._writes = 0

    # -- mode ----------------------------------------------------------------------------------

    @property
    def reads_enabled(self) -> bool:
        """Whether lookups are answered (every mode but ``off``)."""
        return self.mode != "off"

    @property
    def writes_enabled(self) -> bool:
        """Whether misses are recorded (``write`` mode only)."""
        return self.mode == "write"

    # -- what the client uses ------------------------------------------------------------------

    def lookup(self, candidates: Sequence[tuple[str, str]]) -> CachedResponse | None:
        """The first stored answer among ``(model, key)`` candidates (a fallback chain, in order).

        Counts one hit or one miss. ``off`` returns None without looking.

        Raises:
            CacheMissError: strict mode and no candidate is stored (names the first one).
        """
        if not self.reads_enabled or not candidates:
            return None
        for _, key in candidates:
            entry = self.get(key)
            if entry is not None:
                with self._lock:
                    self._hits += 1
                return entry
        with self._lock:
            self._misses += 1
        if self.mode == "strict":
            model, key = candidates[0]
            raise CacheMissError(model, key, tried=candidates)
        return None

    def store(self, entry: CachedResponse) -> bool:
        """Record ``entry`` (write mode only). An existing entry for the key is kept: first wins.

        Returns True when a new row was written. A storage error is logged, never raised: a call
        that was paid for must not fail because its cache write did.
        """
        if not self.writes_enabled:
            return False
        row = (
            entry.key,
            entry.model,
            entry.role,
            entry.text,
            entry.usage.input_tokens,
            entry.usage.output_tokens,
            entry.finish_reason,
            entry.tier,
            entry.latency_s,
            entry.cost_usd,
            json.dumps(entry.provider_metadata, sort_keys=True, default=str),
            entry.created_at or time.time(),
        )
        try:
            with self._lock:
                cursor = self._connection().execute(
                    f"INSERT OR IGNORE INTO responses ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", row
                )
                written = cursor.rowcount == 1
                if written:
                    self._writes += 1
            return written
        except sqlite3.Error:
            logger.exception("could not write to the response cache %s (the call result is kept)", self._where)
            return False

    # -- inspection (CLI) ----------------------------------------------------------------------

    def get(self, key: str) -> CachedResponse | None:
        """The entry stored under ``key``, whatever the mode; counts nothing."""
        with self._lock, damage_named(self.path):
            row = self._connection().execute(f"SELECT {_COLUMNS} FROM responses WHERE key = ?", (key,)).fetchone()
        return _entry(row) if row is not None else None

    def stats(self) -> CacheStats:
        """Hits, misses and writes of this object since it was created."""
        with self._lock:
            return CacheStats(self._hits, self._misses, self._writes)

    def size(self) -> int:
        """Number of stored entries."""
        with self._lock, damage_named(self.path):
            return int(self._connection().execute("SELECT count(*) FROM responses").fetchone()[0])

    def clear(self) -> int:
        """Delete every entry (whatever the mode); returns how many were removed.

        Raises:
            CorruptCacheError: the file is damaged (:func:`remove_cache_file` removes it).
        """
        with self._lock, damage_named(self.path):
            cursor = self._connection().execute("DELETE FROM responses")
            return max(cursor.rowcount, 0)

    def info(self) -> dict[str, Any]:
        """A JSON-ready summary for the CLI: where, mode, entries, bytes, per model/role, dates, stats.

        Raises:
            CorruptCacheError: the file is damaged.
        """
        with self._lock, damage_named(self.path):
            conn = self._connection()
            entries, oldest, newest, cost, latency = conn.execute(
                "SELECT count(*), min(created_at), max(created_at), sum(cost_usd), sum(latency_s) FROM responses"
            ).fetchone()
            by_model = dict(conn.execute("SELECT model, count(*) FROM responses GROUP BY model ORDER BY model"))
            by_role = dict(
                conn.execute(
                    "SELECT coalesce(role, ''), count(*) FROM responses GROUP BY coalesce(role, '') ORDER BY 1"
                )
            )
        return {
            "path": str(self.path) if self.path is not None else None,
            "mode": self.mode,
            "entries": int(entries),
            "bytes": self._file_bytes(),
            "by_model": by_model,
            "by_role": by_role,
            "oldest": oldest,
            "newest": newest,
            "stored_cost_usd": float(cost or 0.0),
            "stored_latency_s": float(latency or 0.0),
            "key_version": CACHE_KEY_VERSION,
            "schema_version": SCHEMA_VERSION,
            "stats": dataclasses.asdict(self.stats()),
        }

    def close(self) -> None:
        """Close this process's connection (it reopens on next use)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
            self._pid = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResponseCache({self._where!r}, mode={self.mode!r})"

    # -- pickling: a connection never crosses a process boundary -------------------------------

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "mode": self.mode}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], state["mode"])  # type: ignore[misc]

    # -- internals -----------------------------------------------------------------------------

    @property
    def _where(self) -> str:
        return str(self.path) if self.path is not None else ":memory:"

    def _connection(self) -> sqlite3.Connection:
        """This process's connection (callers hold ``_lock``); a forked child opens its own."""
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        if self.path is None:
            conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None)
            with damage_named(self.path):
                _retry_while_locked(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchone())
                conn.execute("PRAGMA synchronous=NORMAL")
        with damage_named(self.path):
            _retry_while_locked(lambda: conn.executescript(_SCHEMA))
        _retry_while_locked(
            lambda: conn.execute(
                "INSERT OR IGNORE INTO cache_meta (name, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
        )
        found = conn.execute("SELECT value FROM cache_meta WHERE name = 'schema_version'").fetchone()[0]
        if found != str(SCHEMA_VERSION):
            conn.close()
            raise ValueError(
                f"response cache {self._where} has schema version {found}, this omlab reads {SCHEMA_VERSION}; "
                "use another file or clear it"
            )
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _file_bytes(self) -> int:
        if self.path is None:
            return 0
        total = 0
        for suffix in ("", "-wal", "-shm"):
            candidate = self.path.with_name(self.path.name + suffix)
            if candidate.exists():
                total += candidate.stat().st_size
        return total


def _entry(row: tuple[Any, ...]) -> CachedResponse:
    key, model, role, text, input_tokens, output_tokens, finish, tier, latency, cost, metadata, created = row
    return CachedResponse(
        key=key,
        model=model,
        text=text,
        usage=Usage(int(input_tokens), int(output_tokens)),
        finish_reason=finish,
        tier=tier,
        latency_s=float(latency),
        cost_usd=cost,
        provider_metadata=json.loads(metadata),
        role=role,
        created_at=float(created),
    )


def _retry_while_locked(action: Any, attempts: int = 50) -> Any:
    """Run a schema/pragma statement, waiting out another process that is creating the file.

    The busy timeout covers ordinary writes; switching a brand-new file to WAL can still report
    "database is locked" at once when two processes race to create it.
    """
    for attempt in range(attempts):
        try:
            return action()
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    return None


def default_cache_path() -> Path:
    """``$OMLAB_HOME/cache/responses.sqlite``, else ``~/.cache/omlab/responses.sqlite``."""
    home = os.environ.get("OMLAB_HOME")
    base = Path(home).expanduser() if home else Path("~/.cache/omlab").expanduser()
    return base / "cache" / "responses.sqlite" if home else base / "responses.sqlite"


__all__ = [
    "CACHE_KEY_VERSION",
    "CACHE_MODES",
    "CacheKeyError",
    "CacheMissError",
    "CacheMode",
    "CacheStats",
    "CachedResponse",
    "CorruptCacheError",
    "ResponseCache",
    "cache_key",
    "cache_key_material",
    "canonical_json",
    "default_cache_path",
    "is_output_setting",
]

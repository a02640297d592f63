"""ResultsCatalog: read every run under a results directory without ever blocking a writer.

For each run the catalog opens ``<run_id>.duckdb`` read-only, runs one query and closes it again
(it never keeps a file open, so a writer can always reopen a finished run to resume it). When a
writer holds the file, DuckDB refuses to open it; the catalog then reads the Parquet shards the
writer publishes at every flush (:mod:`omlab.bench.results.shards`), which hold every row flushed
so far. Both paths return the same columns with the same dtypes
(:func:`omlab.bench.results.schema.pandas_dtype`).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from omlab.bench.results.connect import (
    NO_EXTENSION_AUTOLOAD,
    ResultsSchemaError,
    RunLockedError,
    UnreadableRunError,
    check_schema_version,
    describe_damage,
    open_run_file,
)
from omlab.bench.results.layout import list_run_ids, parts_path, run_path
from omlab.bench.results.schema import (
    KEYS,
    ORDER_BY,
    SCHEMA_VERSION,
    TABLES,
    Column,
    columns_added_since,
    columns_of,
    pandas_dtype,
    table_added_in,
)
from omlab.bench.results.shards import shard_files

# A reader can land between a writer's close (file unlocked, shards being deleted) and its next
# state, or catch a writer before its first publish: retry a few times before settling.
_ATTEMPTS = 20
_RETRY_PAUSE_S = 0.05
# Only a file this young can be a run its writer is still creating; an older unreadable file is
# damaged and is reported at once instead of being retried.
_NEW_FILE_S = 2.0

Filters = Mapping[str, Any]


class UnreadableRunWarning(UserWarning):
    """A run file was skipped because it cannot be read (the message names the file)."""


@dataclass(frozen=True, slots=True)
class UnreadableRun:
    """A file under ``runs/`` that is not a readable results file, and what is wrong with it."""

    run_id: str
    path: Path
    problem: str


@dataclass(frozen=True, slots=True)
class TableRead:
    """One read for :meth:`ResultsCatalog.read_tables`: a table, its filters, its columns (the
    ``read_table`` arguments of the same names)."""

    table: str
    where: Filters | None = None
    columns: tuple[str, ...] | None = None


class ResultsCatalog:
    """Read-only view of the runs under ``results_dir`` (``<results_dir>/runs/*.duckdb``).

    Runs being written by another process are read from their live snapshot, so their rows
    appear as the writer flushes them. Nothing here writes, locks for long, or caches.
    """

    def __init__(self, results_dir: str | Path, *, writers: Iterable[Any] = ()) -> None:
        """``writers``: open :class:`~omlab.bench.results.writer.RunWriter` s of this process
        whose runs are read through their own connection (all rows written so far, no snapshot)."""
        self.results_dir = Path(results_dir).expanduser()
        self._writers = {writer.run_id: writer for writer in writers}

    def __repr__(self) -> str:
        return f"ResultsCatalog({str(self.results_dir)!r})"

    def run_ids(self) -> list[str]:
        """Ids of every run with a file, sorted (generated ids sort by start time)."""
        return list_run_ids(self.results_dir)

    def is_live(self, run_id: str) -> bool:
        """Whether a writer holds run ``run_id`` right now (reads then come from its snapshot)."""
        try:
            connection = open_run_file(self._path_of(run_id), read_only=True)
        except RunLockedError:
            return True
        except (UnreadableRunError, FileNotFoundError):  # not a database (yet): nobody holds it
            return False
        connection.close()
        return False

    def unreadable_runs(self) -> list[UnreadableRun]:
        """Files under ``runs/`` that cannot be read as results (truncated, corrupted, empty,
        foreign, or from a newer omlab), each with its problem; every other reader skips them
        with an :class:`UnreadableRunWarning`. A run a writer holds right now is never listed."""
        found = []
        for run_id in self.run_ids():
            problem = self.problem_of(run_id)
            if problem is not None:
                found.append(UnreadableRun(run_id, self._path_of(run_id), problem))
        return found

    def problem_of(self, run_id: str) -> str | None:
        """What is wrong with run ``run_id``'s file, or None when it reads (or a writer holds it).

        Opens the file, checks its schema version and reads every table, so damage anywhere in
        the file is found."""
        path = self._path_of(run_id)
        try:
            connection = open_run_file(path, read_only=True)
        except (RunLockedError, FileNotFoundError):
            return None
        except UnreadableRunError as error:
            return error.problem
        try:
            version = check_schema_version(connection, path)
            for table in TABLES:
                if table_added_in(table) > version:
                    continue
                missing = columns_added_since(version, table)
                present = [f'"{c.name}"' for c in columns_of(table) if c.name not in missing]
                try:
                    connection.sql(f"SELECT {', '.join(present)} FROM {table}").to_arrow_table()
                except duckdb.CatalogException:  # a table this (older) file never had
                    continue
        except UnreadableRunError as error:
            return error.problem
        except ResultsSchemaError as error:
            return str(error)
        except duckdb.Error as error:
            return describe_damage(error)
        finally:
            connection.close()
        return None

    def read_table(
        self,
        table: str,
        run_id: str | Iterable[str] | None = None,
        where: Filters | None = None,
        columns: Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """Rows of ``table`` from the chosen runs, typed and ordered (schema ``ORDER_BY``).

        Args:
            table: A results table name (``runs``, ``conversations``, ``steps``, ``events``,
                ``model_calls``, ``answers``, ``scores``, ``metrics``).
            run_id: One run id, several, or None for every run.
            where: ``{column: value}`` equality filters; a list/tuple/set value means "one of";
                a None value means no filter on that column.
            columns: Only these columns, in the table's order (None: all of them). Only they are
                read from the file, so a reader that needs a few columns of a large table reads
                little.

        Raises:
            ValueError: Unknown table, unknown filter column or ``columns`` name, or a run id
                with no file.

        A run file that is not a readable results file is skipped with a warning.
        """
        selected = _selected(table, columns)
        condition, parameters = _where(table, where or {})
        runs = self._readable(self._resolve_runs(run_id))
        # several runs' rows are sorted again once concatenated, and told apart by the run id
        # they hold: read the order columns and the run id too
        wanted = {c.name for c in selected} | set(ORDER_BY[table]) | {"run_id"}
        read = selected if len(runs) < 2 else _selected(table, wanted)
        chosen: dict[str, tuple[str, pd.DataFrame]] = {}  # run id the rows hold -> (file's run, rows)
        for one_run in runs:
            try:
                (frame,) = self._read_run(one_run, [_Query(table, condition, parameters, read)])
            except ResultsSchemaError as error:
                warnings.warn(f"skipping run {one_run!r}: {error}", UnreadableRunWarning, stacklevel=2)
                continue
            held = _held_run(frame, one_run)
            if held in chosen:  # a copy of a run file: its rows once, from the file named after it
                kept, dropped = (
                    ((one_run, frame), chosen[held]) if one_run == held else (chosen[held], (one_run, frame))
                )
                warnings.warn(
                    f"skipping {self._path_of(dropped[0]).name}: it holds run {held!r}, read from "
                    f"{self._path_of(kept[0]).name} (a copy of the run file?)",
                    UnreadableRunWarning,
                    stacklevel=2,
                )
                chosen[held] = kept
            else:
                chosen[held] = (one_run, frame)
        frames = [frame for _, frame in chosen.values()]
        if not frames:
            return typed_frame(pd.DataFrame(columns=[c.name for c in selected]), table, selected)
        if len(frames) == 1:
            frame = typed_frame(frames[0], table, read)
            return frame if read is selected else frame[[c.name for c in selected]]
        frame = typed_frame(pd.concat(frames, ignore_index=True), table, read)
        frame = frame.sort_values(list(ORDER_BY[table]), kind="stable", na_position="last", ignore_index=True)
        return frame if read is selected else frame[[c.name for c in selected]]

    def read_tables(self, run_id: str, reads: Mapping[str, TableRead]) -> dict[str, pd.DataFrame]:
        """Several reads of one run, opening its file once: for each name, what
        ``read_table(read.table, run_id, read.where, read.columns)`` returns.

        A reader that needs a little of several tables saves an opening per table (tens of
        milliseconds for a long run's file). An unreadable run file gives empty frames and a
        warning, as in :meth:`read_table`.
        """
        selected = {name: _selected(read.table, read.columns) for name, read in reads.items()}
        queries = [
            _Query(read.table, *_where(read.table, read.where or {}), selected[name]) for name, read in reads.items()
        ]
        [one_run] = self._resolve_runs(run_id)
        try:
            frames = self._read_run(one_run, queries)
        except ResultsSchemaError as error:
            warnings.warn(f"skipping run {one_run!r}: {error}", UnreadableRunWarning, stacklevel=2)
            frames = [query.empty() for query in queries]
        return {
            name: typed_frame(frame, read.table, selected[name])
            for (name, read), frame in zip(reads.items(), frames, strict=True)
        }

    # ------------------------------------------------------------------ internals

    def _readable(self, runs: list[str]) -> list[str]:
        """``runs`` without the files :meth:`problem_of` finds damaged (the check ``omlab runs``
        makes; its verdict is kept per file size and time), each skipped with a warning."""
        kept = []
        for one_run in runs:
            path = self._path_of(one_run)
            problem = None if one_run in self._writers else _checked(path, lambda run=one_run: self.problem_of(run))
            if problem is None:
                kept.append(one_run)
            else:
                error = UnreadableRunError(path, problem)
                warnings.warn(f"skipping run {one_run!r}: {error}", UnreadableRunWarning, stacklevel=3)
        return kept

    def _path_of(self, run_id: str) -> Path:
        return run_path(self.results_dir, run_id)

    def _resolve_runs(self, run_id: str | Iterable[str] | None) -> list[str]:
        if run_id is None:
            return self.run_ids()
        wanted = [run_id] if isinstance(run_id, str) else list(run_id)
        missing = [one for one in wanted if not self._path_of(one).is_file()]
        if missing:
            raise ValueError(f"no run {', '.join(map(repr, missing))} under {self.results_dir}")
        return wanted

    def _read_run(self, run_id: str, queries: list[_Query]) -> list[pd.DataFrame]:
        """The rows of each query, from one opening of the run's file (or its live snapshot)."""
        writer = self._writers.get(run_id)
        if writer is not None and not writer.closed:
            return writer.read_own(lambda connection: [_query_file(connection, q, SCHEMA_VERSION) for q in queries])
        path, parts = self._path_of(run_id), parts_path(self.results_dir, run_id)
        for attempt in range(_ATTEMPTS):
            last = attempt == _ATTEMPTS - 1
            try:
                connection = open_run_file(path, read_only=True)
            except FileNotFoundError:  # deleted since it was listed
                return [query.empty() for query in queries]
            except RunLockedError:
                files = [shard_files(parts, query.table) for query in queries]
                if not all(files) and not (parts.is_dir() or last):
                    time.sleep(_RETRY_PAUSE_S)  # writer starting up, or closing right now
                    continue
                try:
                    return [
                        _query_shards(query, found) if found else query.empty()
                        for query, found in zip(queries, files, strict=True)
                    ]
                except duckdb.IOException:  # a shard vanished: the writer closed or republished
                    time.sleep(_RETRY_PAUSE_S)
                    continue
            except UnreadableRunError:
                # A file caught in the instant between its creation and its writer's lock is
                # not a database yet; an older one (or one that stays that way) is damaged.
                if last or not _is_new(path):
                    raise
                time.sleep(_RETRY_PAUSE_S)
                continue
            try:
                version = check_schema_version(connection, path)
                return [_query_file(connection, query, version) for query in queries]
            except duckdb.Error as error:
                if isinstance(error, duckdb.CatalogException | duckdb.BinderException):
                    raise
                raise UnreadableRunError(path, describe_damage(error)) from error
            finally:
                connection.close()
        raise RunLockedError(f"could not read run {run_id!r}: its file and its live snapshot kept changing")


_VERDICTS: dict[tuple[str, int, int], str | None] = {}


def _held_run(frame: pd.DataFrame, file_run: str) -> str:
    """The run id a file's rows hold (a copy of a run file holds the original's), else its name."""
    if "run_id" in frame and not frame.empty:
        held = frame["run_id"].dropna()
        if not held.empty:
            return str(held.iloc[0])
    return file_run


def _checked(path: Path, check: Any) -> str | None:
    """``check()``'s verdict on the file at ``path``, kept while its size and time stay the same
    (a finished run file never changes: it is read in full once per process)."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _VERDICTS:
        if len(_VERDICTS) > 10_000:
            _VERDICTS.clear()
        _VERDICTS[key] = check()
    return _VERDICTS[key]


@dataclass(frozen=True, slots=True)
class _Query:
    """One table read: its ``WHERE`` condition with its parameters, and the columns to read."""

    table: str
    condition: str
    parameters: list[Any]
    read: tuple[Column, ...]

    @property
    def selected(self) -> str:
        return ", ".join(f'"{c.name}"' for c in self.read)

    def empty(self) -> pd.DataFrame:
        return pd.DataFrame(columns=[c.name for c in self.read])


def _query_file(connection: duckdb.DuckDBPyConnection, query: _Query, version: int) -> pd.DataFrame:
    table = query.table
    if table_added_in(table) > version:  # an older file: the table is empty
        return query.empty()
    missing = columns_added_since(version, table)  # an older file: NULL there
    columns = ", ".join(f'NULL AS "{c.name}"' if c.name in missing else f'"{c.name}"' for c in columns_of(table))
    return connection.execute(
        f"SELECT {query.selected} FROM (SELECT {columns} FROM {table}) WHERE {query.condition} ORDER BY {_order(table)}",
        query.parameters,
    ).df()


def _query_shards(query: _Query, files: list[str]) -> pd.DataFrame:
    table, parameters = query.table, query.parameters
    keys = KEYS.get(table)
    latest = f"QUALIFY row_number() OVER (PARTITION BY {', '.join(keys)} ORDER BY filename DESC) = 1" if keys else ""
    sql = (
        f"SELECT {query.selected} FROM (SELECT * FROM read_parquet(?, union_by_name = true, filename = true) "
        f"{latest}) WHERE {query.condition} ORDER BY {_order(table)}"
    )
    connection = duckdb.connect(config=NO_EXTENSION_AUTOLOAD)
    try:
        connection.execute("SET TimeZone = 'UTC'")
        return connection.execute(sql, [files, *parameters]).df()
    finally:
        connection.close()


def _is_new(path: Path) -> bool:
    try:
        return time.time() - path.stat().st_mtime < _NEW_FILE_S
    except OSError:
        return False


def _where(table: str, filters: Filters) -> tuple[str, list[Any]]:
    names = {c.name for c in columns_of(table)}
    conditions, parameters = ["TRUE"], []
    for column, value in filters.items():
        if column not in names:
            raise ValueError(f"cannot filter {table} on unknown column {column!r}")
        if value is None:
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            values = list(value)
            if not values:
                conditions.append("FALSE")
                continue
            conditions.append(f'"{column}" IN ({", ".join("?" for _ in values)})')
            parameters.extend(values)
        else:
            conditions.append(f'"{column}" = ?')
            parameters.append(value)
    return " AND ".join(conditions), parameters


def _order(table: str) -> str:
    return ", ".join(f'"{name}" NULLS LAST' for name in ORDER_BY[table])


def typed_frame(frame: pd.DataFrame, table: str, columns: Iterable[Column] | None = None) -> pd.DataFrame:
    """``frame`` with exactly the table's columns (or these of them), in order, with the getters'
    dtypes."""
    chosen = columns_of(table) if columns is None else columns
    return pd.DataFrame({c.name: _typed_series(frame[c.name], c) for c in chosen}, index=frame.index).reset_index(
        drop=True
    )


def _selected(table: str, names: Iterable[str] | None) -> tuple[Column, ...]:
    """The columns of ``table`` named in ``names`` (all for None), in the table's order."""
    columns = columns_of(table)
    if names is None:
        return columns
    wanted = {names} if isinstance(names, str) else set(names)
    unknown = wanted - {c.name for c in columns}
    if unknown:
        raise ValueError(f"cannot read unknown {table} column(s) {', '.join(sorted(unknown))} (columns=)")
    return tuple(c for c in columns if c.name in wanted)


def _typed_series(series: pd.Series, column: Column) -> pd.Series:
    dtype = pandas_dtype(column)
    if column.kind == "time":
        return pd.to_datetime(series, utc=True).dt.tz_convert("UTC").astype(dtype)
    if str(series.dtype) == dtype:
        return series
    if column.kind in ("text", "json") and not pd.api.types.is_object_dtype(series.dtype):
        return series  # already one of pandas' string dtypes
    return series.astype(dtype)

"""The live snapshot of a running run: Parquet shards a writer publishes beside its DuckDB file.

While a writer holds ``<run_id>.duckdb`` no other process can open it, so at every flush the writer
also writes the rows it just committed to ``<run_id>.parts/<table>/<seq>.parquet`` (``seq`` is the
flush number, zero-padded, so file names sort in write order). Files appear atomically (written
under a ``.tmp`` name, then renamed). A reader takes the union of a table's shards; for keyed
tables the row from the highest ``seq`` wins, which mirrors the replace-on-rewrite rule of the
DuckDB file. The writer deletes the folder once the run file is closed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

_SHARD_SUFFIX = ".parquet"


def shard_name(seq: int) -> str:
    return f"{seq:08d}{_SHARD_SUFFIX}"


def write_shard(parts: Path, table: str, seq: int, batch: pa.Table) -> None:
    """Publish ``batch`` as shard ``seq`` of ``table``."""
    folder = parts / table
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / shard_name(seq)
    temporary = final.with_name(final.name + ".tmp")
    # Shards live only while the run is open: fast to write matters more than size or statistics.
    pq.write_table(batch, temporary, compression="lz4", write_statistics=False)
    os.replace(temporary, final)


def replace_shards(parts: Path, table: str, seq: int, connection: duckdb.DuckDBPyConnection) -> None:
    """Replace every shard of ``table`` by one shard ``seq`` holding the whole table as
    ``connection`` sees it (used when rows were deleted, or when a run is reopened)."""
    parts.mkdir(parents=True, exist_ok=True)
    fresh = parts / f".{table}.new"
    stale = parts / f".{table}.old"
    for leftover in (fresh, stale):
        shutil.rmtree(leftover, ignore_errors=True)
    fresh.mkdir()
    target = str(fresh / shard_name(seq)).replace("'", "''")
    connection.execute(f"COPY (SELECT * FROM {table}) TO '{target}' (FORMAT parquet)")
    current = parts / table
    if current.exists():
        os.replace(current, stale)
    # A reader between these two renames sees no shards for this table for an instant.
    os.replace(fresh, current)
    shutil.rmtree(stale, ignore_errors=True)


def shard_files(parts: Path, table: str) -> list[str]:
    """The shard files of ``table``, in write order."""
    folder = parts / table
    if not folder.is_dir():
        return []
    return sorted(str(path) for path in folder.glob(f"*{_SHARD_SUFFIX}"))


def last_seq(parts: Path) -> int:
    """The highest shard number under ``parts`` (-1 when there is none)."""
    numbers = [
        int(path.stem)
        for path in parts.glob(f"*/*{_SHARD_SUFFIX}")
        if path.stem.isdigit() and not path.parent.name.startswith(".")
    ]
    return max(numbers, default=-1)

"""Run files damaged the ways a disk, a kill or a user can damage them."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

KINDS = ("truncated", "bitflipped", "empty", "foreign")


def plant_corrupt_runs(runs_dir: Path, healthy: Path, *, seed: int = 7) -> dict[str, Path]:
    """Write one damaged copy of ``healthy`` (a run file) per kind into ``runs_dir``; the file
    names sort after every generated run id, so they would be picked first as "latest"."""
    data = healthy.read_bytes()
    rng = random.Random(seed)
    flipped = bytearray(data)
    for _ in range(64):
        flipped[rng.randrange(len(flipped))] ^= 0xFF
    contents = {
        "truncated": data[: len(data) // 3],
        "bitflipped": bytes(flipped),
        "empty": b"",
        # an SQLite header: DuckDB would autoload (and download) its sqlite extension for it
        "foreign": b"SQLite format 3\x00" + bytes(rng.randrange(256) for _ in range(4096)),
    }
    planted = {}
    for kind in KINDS:
        path = runs_dir / f"zzzz-{kind}.duckdb"
        path.write_bytes(contents[kind])
        planted[kind] = path
    return planted


def copy_results(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target

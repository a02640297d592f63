"""The recorder-made Mastra database (datasets/samples/mastra_recorded.db) and copies to break."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

RECORDED = Path(__file__).resolve().parents[2] / "datasets" / "samples" / "mastra_recorded.db"


@pytest.fixture
def recorded() -> Path:
    """The committed database (open it read-only only)."""
    return RECORDED


@pytest.fixture
def recorded_copy(tmp_path: Path) -> Path:
    """A copy a test may alter."""
    return Path(shutil.copy(RECORDED, tmp_path / "copy.db"))

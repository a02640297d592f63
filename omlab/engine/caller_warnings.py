"""Warnings that point at the line of the user's code that caused them, not at omlab's."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

_PACKAGE_DIR = str(Path(__file__).resolve().parents[1]) + os.sep


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` attributed to the first frame outside the omlab package, however deep in
    omlab the warning is raised (a config read through ``from_json`` or a suite file alike)."""
    level = 2  # 1 is this function; 2 its caller
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


__all__ = ["warn_at_caller"]

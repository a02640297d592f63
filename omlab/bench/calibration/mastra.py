"""Calibrate from a Mastra database: production's ``data-om-*`` markers instead of a run's calls.

Each observation or reflection cycle's markers give the content it was given (``tokensToObserve``
/ ``tokensToBuffer``), the observation text it produced (its end marker's ``observations``), its
duration (``durationMs``) and whether it failed (a ``…-failed`` marker). Markers carry no token
usage of the model call, so the latency fit is ``base + observation tokens × output_s`` (no input
term) and the reply's extra tokens (hints) are not known (``overhead_tokens`` stays unset). The
model is not recorded either: fits are labelled ``mastra:<database file>`` unless ``model`` is
given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from omlab.bench.calibration.calibrate import DEFAULT_ROLES
from omlab.bench.calibration.fit import END_MARKERS, CalibrationError, cycle_sizes, fit_role
from omlab.bench.calibration.profile import ModelProfile

OPERATIONS = {"observer": "observation", "reflector": "reflection"}
FAILED_MARKERS = ("data-om-observation-failed", "data-om-buffering-failed")


def calibrate_mastra(
    location: str | Path, roles: Sequence[str] = DEFAULT_ROLES, *, model: str | None = None, **selection: Any
) -> ModelProfile:
    """A profile fitted on the OM markers of a Mastra database (``selection``: the threads, as
    :func:`omlab.bench.datasets.mastra.read_mastra` takes them).

    Raises:
        CalibrationError: A role that is not observer/reflector, or no cycle of a role's operation
            in the selected threads (the message names the role and the database).
        MastraImportError: The database cannot be read (see ``read_mastra``).
    """
    from omlab.bench.datasets.mastra import production_frames

    _, markers = production_frames(location, **selection)
    label = model or f"mastra:{Path(str(location)).name}"
    sizes = cycle_sizes(markers) if not markers.empty else {}
    fits = []
    for role in roles:
        if role not in OPERATIONS:
            raise CalibrationError(f"{location}: Mastra markers calibrate observer and reflector, not {role!r}")
        calls = _cycles_as_calls(markers, OPERATIONS[role], role, sizes)
        if calls.empty:
            raise CalibrationError(
                f"{location}: no {OPERATIONS[role]} markers in the selected threads, so nothing to fit for role "
                f"{role!r}; calibrate other roles with --role"
            )
        fit = fit_role(calls, sizes, role, label, source=f"Mastra markers of {location}")
        if fit.compression is not None:
            fit = replace(fit, compression=replace(fit.compression, overhead_tokens=None))
        fits.append(fit)
    return ModelProfile(fits=tuple(fits), source=f"omlab calibrate --mastra {location}")


def _cycles_as_calls(
    markers: pd.DataFrame, operation: str, role: str, sizes: dict[str, tuple[int, int]]
) -> pd.DataFrame:
    """One call-shaped row per cycle of ``operation`` (the columns :func:`fit_role` reads)."""
    if markers.empty or "operation_type" not in markers:
        return pd.DataFrame()
    of_op = markers[(markers["operation_type"] == operation) & markers["cycle_id"].notna()]
    rows = []
    for cycle, group in of_op.groupby("cycle_id", sort=False):
        failed = group["type"].isin(FAILED_MARKERS).any()
        ends = group[group["type"].isin(END_MARKERS)]
        duration = pd.to_numeric(ends["duration_ms"], errors="coerce").dropna()
        produced = sizes.get(str(cycle), (0, 0))[1]
        if ends.empty and not failed:
            continue  # a cycle still running when the database was copied
        rows.append(
            {
                "role": role,
                "resolved_model": None,
                "requested_model": None,
                "input_tokens": 0,  # unknown: markers hold no usage (so no input term in the latency fit)
                "output_tokens": produced if not failed else 0,
                "latency_s": float(duration.iloc[-1]) / 1000 if len(duration) else None,
                "cached": False,
                "error": "failed marker" if failed else None,
                "attempts": 1,
                "cycle_id": str(cycle),
            }
        )
    return pd.DataFrame(rows)


__all__ = ["calibrate_mastra"]

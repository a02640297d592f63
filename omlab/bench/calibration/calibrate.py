"""``calibrate_run``: a run's model calls → a :class:`~omlab.bench.calibration.profile.ModelProfile`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from omlab.bench.calibration.fit import CalibrationError, content_tokens_by_cycle, fit_role
from omlab.bench.calibration.profile import ModelProfile

DEFAULT_ROLES = ("observer", "reflector")


def default_profile_path(results_dir: str | Path, run_id: str) -> Path:
    """``<results>/profiles/<run id>.json``: where ``omlab calibrate`` writes by default."""
    return Path(results_dir) / "profiles" / f"{run_id}.json"


def calibrate_run(results_dir: str | Path, run_id: str, roles: Sequence[str] = DEFAULT_ROLES) -> ModelProfile:
    """Fit every model of ``roles`` in run ``run_id`` (one :class:`RoleFit` per role and model).

    Raises:
        CalibrationError: The run has no model call for one of ``roles`` (the message names the
            role and lists the roles it has), or only response-cache hits / failures for it.
    """
    from omlab.bench.results import calls_df, events_df, runs_df

    calls = calls_df(results_dir, run_id)
    present = sorted(set(calls["role"].dropna())) if not calls.empty else []
    for role in roles:
        if role not in present:
            raise CalibrationError(
                f"run {run_id} has no model calls for role {role!r} (roles with calls: {', '.join(present) or 'none'}); "
                "calibrate other roles with --role"
            )
    events = events_df(results_dir, run_id)
    content = content_tokens_by_cycle(events)
    suite = _suite_of(runs_df(results_dir), run_id)
    source = f"omlab calibrate: run {run_id}" + (f" (suite {suite})" if suite else "")
    fits = []
    for role in roles:
        of_role = calls[calls["role"] == role]
        models = of_role["resolved_model"].fillna(of_role["requested_model"]).fillna("unknown")
        for model in sorted(set(models)):
            chosen = of_role[models == model]
            fit = fit_role(chosen, content, role, str(model))
            if fit.latency is None and fit.compression is None:
                raise CalibrationError(
                    f"run {run_id}: the {len(chosen)} {role} calls of {model} are all failures or response-cache "
                    'hits; nothing to fit (rerun with [cache] mode = "off")'
                )
            fits.append(fit)
    return ModelProfile(fits=tuple(fits), source=source)


def _suite_of(runs: pd.DataFrame, run_id: str) -> str | None:
    if runs.empty or "suite" not in runs:
        return None
    row = runs[runs["run_id"] == run_id]
    return None if row.empty else str(row["suite"].iloc[0])


__all__ = ["DEFAULT_ROLES", "calibrate_run", "default_profile_path"]

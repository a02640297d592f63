"""``calibrate_run``: a run's model calls → a :class:`~omlab.bench.calibration.profile.ModelProfile`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from omlab.bench.calibration.fit import CalibrationError, cycle_sizes, fit_role
from omlab.bench.calibration.profile import ModelProfile

DEFAULT_ROLES = ("observer", "reflector")


def default_profile_path(results_dir: str | Path, run_id: str) -> Path:
    """``<results>/profiles/<run id>.json``: where ``omlab calibrate`` writes by default."""
    return Path(results_dir) / "profiles" / f"{run_id}.json"


def calibrate_run(
    results_dir: str | Path, run_ids: str | Sequence[str], roles: Sequence[str] = DEFAULT_ROLES
) -> ModelProfile:
    """Fit every model of ``roles`` in the run(s) ``run_ids`` (one :class:`RoleFit` per role and
    model, over the calls of all the runs: calibrate on the cells of a sweep to cover the content
    sizes the profile will be used at; outside them the curve's end ratios hold).

    Raises:
        CalibrationError: The runs have no model call for one of ``roles`` (the message names the
            role and lists the roles they have), or only response-cache hits / failures for it.
    """
    from omlab.bench.results import calls_df, events_df, runs_df

    ids = [run_ids] if isinstance(run_ids, str) else list(run_ids)
    if not ids:
        raise CalibrationError("no run to calibrate")
    label = ", ".join(ids)
    runs = "run" if len(ids) == 1 else "runs"
    calls = calls_df(results_dir, ids)
    present = sorted(set(calls["role"].dropna())) if not calls.empty else []
    for role in roles:
        if role not in present:
            raise CalibrationError(
                f"{runs} {label}: no model calls for role {role!r} (roles with calls: {', '.join(present) or 'none'}); "
                "calibrate other roles with --role"
            )
    sizes = cycle_sizes(events_df(results_dir, ids))
    suites = _suites_of(runs_df(results_dir), ids)
    source = f"omlab calibrate: {runs} {label}" + (f" (suite {', '.join(suites)})" if suites else "")
    fits = []
    for role in roles:
        of_role = calls[calls["role"] == role]
        models = of_role["resolved_model"].fillna(of_role["requested_model"]).fillna("unknown")
        for model in sorted(set(models)):
            chosen = of_role[models == model]
            fit = fit_role(chosen, sizes, role, str(model))
            if fit.latency is None and fit.compression is None:
                raise CalibrationError(
                    f"{runs} {label}: the {len(chosen)} {role} calls of {model} are all failures or response-cache "
                    'hits; nothing to fit (rerun with [cache] mode = "off")'
                )
            fits.append(fit)
    return ModelProfile(fits=tuple(fits), source=source)


def _suites_of(runs: pd.DataFrame, run_ids: list[str]) -> list[str]:
    if runs.empty or "suite" not in runs:
        return []
    return sorted(set(runs.loc[runs["run_id"].isin(run_ids), "suite"].astype(str)))


__all__ = ["DEFAULT_ROLES", "calibrate_run", "default_profile_path"]

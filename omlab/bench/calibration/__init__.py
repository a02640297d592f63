"""Calibrated offline models: fit a profile from a run (``omlab calibrate``), read profiles, and
apply them to a suite's offline Observer/Reflector (``[models.profiles]``)."""

from __future__ import annotations

from omlab.bench.calibration.calibrate import calibrate_run, default_profile_path
from omlab.bench.calibration.fit import CalibrationError
from omlab.bench.calibration.profile import ModelProfile, ProfileError, RoleFit, load_profile, shipped_profiles

__all__ = [
    "CalibrationError",
    "ModelProfile",
    "ProfileError",
    "RoleFit",
    "calibrate_run",
    "default_profile_path",
    "load_profile",
    "shipped_profiles",
]

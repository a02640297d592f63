"""A suite's ``[models.profiles]``: the offline Observer/Reflector follow a model profile.

::

    [models.profiles]
    observer = "profiles/20260101T120000-abc123.json"   # a file written by omlab calibrate
    reflector = "profiles/run.json#openai/gpt-4o-mini"  # '#MODEL' when the file has several

Paths are relative to the suite file; a bare name is a profile shipped with omlab. A profiled
``omlab/<role>`` not priced in ``[models.prices]`` is priced as the fit's model when that one has a
price. For each role:
the role's model must be the offline ``omlab/<role>`` (the profile stands in for the real model);
its output is sized by the fit's compression curve (``modelSettings.profile`` of the engine's model
spec, so it is part of the engine's config hash) and, when the fit has a latency, the role's
virtual latency is the fitted one (a ``calibrated`` entry of ``[latency]``; setting the role's
latency in ``[latency]`` as well is refused).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omlab.bench.calibration.profile import ProfileError, RoleFit, load_profile
from omlab.bench.suite.tables import SuiteError

PROFILE_ROLES = ("observer", "reflector")


def parse_profiles(table: Any, source: str, base_dir: str | Path) -> dict[str, RoleFit]:
    """``{role: fit}`` of ``[models.profiles]``; :class:`SuiteError` names the key of any problem
    (an unknown role, a profile that does not exist or does not parse, no fit for the role)."""
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise SuiteError(source, "models.profiles", "must be a table of role = profile (observer, reflector)")
    fits = {}
    for role, reference in table.items():
        where = f"models.profiles.{role}"
        if role not in PROFILE_ROLES:
            raise SuiteError(source, where, f"profiles apply to {' and '.join(PROFILE_ROLES)} only")
        if not isinstance(reference, str) or not reference.strip():
            raise SuiteError(
                source, where, f"must be a profile name or file ('FILE' or 'FILE#MODEL'), got {reference!r}"
            )
        name, _, model = reference.partition("#")
        try:
            fit = load_profile(name, base_dir).fit_for(role, model or None)
        except ProfileError as error:
            raise SuiteError(source, where, str(error)) from None
        if fit.compression is None:
            raise SuiteError(source, where, f"{reference}: the {role} fit has no compression curve to size output with")
        fits[role] = fit
    return fits


def latency_with_profiles(latency: dict[str, Any], fits: Mapping[str, RoleFit], source: str) -> dict[str, Any]:
    """``[latency]`` with each profiled role's fitted latency (refusing a role set twice)."""
    merged = copy.deepcopy(latency)
    for role, fit in fits.items():
        spec = fit.latency_spec()
        if spec is None:
            continue
        for key in (role, f"omlab/{role}"):
            if key in merged["by_name"]:
                raise SuiteError(
                    source,
                    f"latency.{key}",
                    f"[models.profiles] {role} already sets this role's latency (from its profile); remove one",
                )
        merged["by_name"][role] = spec
    return merged


def prices_with_profiles(prices: Mapping[str, Any], fits: Mapping[str, RoleFit]) -> dict[str, Any]:
    """``[models.prices]`` with each profiled ``omlab/<role>`` priced as its fit's model when the
    suite does not price it and that model has a price (litellm's map or ``[models.prices]``)."""
    from omlab.llm.pricing import price_call

    priced = dict(prices)
    for role, fit in fits.items():
        offline = f"omlab/{role}"
        if offline in priced or fit.model == offline:
            continue
        try:
            known = price_call(fit.model, 1_000_000, 1_000_000, overrides=priced) is not None
        except ValueError:  # a price cycle or a bad override: [models.prices] reports its own errors
            known = False
        if known:
            priced[offline] = fit.model
    return priced


def profiled_engine(engine: dict[str, Any], fits: Mapping[str, RoleFit], source: str) -> None:
    """Give the engine's observer/reflector model spec its profile (in place)."""
    for role, fit in fits.items():
        section = engine["observation" if role == "observer" else "reflection"]
        if section.get("model") != f"omlab/{role}":
            raise SuiteError(
                source,
                f"models.profiles.{role}",
                f"a profile sizes the offline omlab/{role}; the {role} model is {section.get('model')!r}",
            )
        assert fit.compression is not None  # parse_profiles refuses fits without one
        section["model"] = {"model": f"omlab/{role}", "modelSettings": {"profile": fit.compression.to_dict()}}


__all__ = ["PROFILE_ROLES", "latency_with_profiles", "parse_profiles", "prices_with_profiles", "profiled_engine"]

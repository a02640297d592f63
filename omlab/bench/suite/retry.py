"""Per-role model-call timeouts and deadlines: the suite's ``[retry]`` table and the CLI flags.

::

    [retry]
    timeout = 60          # seconds one request may take (every role)
    deadline = 300        # seconds one call may take with all its retries and fallbacks
    max_retries = 8       # retries after the first request
    backoff = 1.0         # seconds before the first retry (doubling, capped at 120 s)
    observer = { timeout = 120 }   # per role: observer, reflector, extractor, actor, judge

Defaults (a role's own default, then the table's top-level values, then the role's sub-table, then
``--timeout`` / ``--deadline``, which win): the Observer and Reflector write long outputs and get
120 s per request, the actor 60 s, the extractors 60 s, the judge (10 output tokens) 30 s; every
call stops retrying after 300 s. A hanging provider therefore costs one role's timeout per attempt,
and never more than the deadline per call. These settings never change a run's ``config_hash``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from omlab.bench.suite.tables import SuiteError, known_keys
from omlab.llm.retry import RetryPolicy

ROLES = ("observer", "reflector", "extractor", "actor", "judge")
SETTINGS = ("timeout", "deadline", "max_retries", "backoff")

DEFAULT_TIMEOUT_S = {"observer": 120.0, "reflector": 120.0, "extractor": 60.0, "actor": 60.0, "judge": 30.0}
DEFAULT_DEADLINE_S = 300.0


@dataclass(frozen=True, slots=True)
class RetrySpec:
    """Resolved ``timeout``/``deadline``/``max_retries`` overrides: ``common`` for every role and
    ``by_role`` per role (plain picklable dicts; see the module docstring)."""

    common: dict[str, float | int] = field(default_factory=dict)
    by_role: dict[str, dict[str, float | int]] = field(default_factory=dict)

    def policy_for(self, role: str) -> RetryPolicy:
        """The :class:`RetryPolicy` of ``role`` (defaults, then common, then the role's own)."""
        values: dict[str, Any] = {
            "timeout": DEFAULT_TIMEOUT_S.get(role, max(DEFAULT_TIMEOUT_S.values())),
            "deadline": DEFAULT_DEADLINE_S,
        }
        values.update(self.common)
        values.update(self.by_role.get(role, {}))
        options: dict[str, Any] = {"attempt_timeout_s": values["timeout"], "deadline_s": values["deadline"]}
        if "max_retries" in values:
            options["max_retries"] = values["max_retries"]
        if "backoff" in values:
            options["base_delay_s"] = values["backoff"]
            options["max_delay_s"] = max(values["backoff"], RetryPolicy().max_delay_s)
        options["attempt_timeout_s"] = min(
            options["attempt_timeout_s"], options["deadline_s"]
        )  # one request never outlives the call
        return RetryPolicy(**options)

    def policies(self) -> dict[str, RetryPolicy]:
        """``role -> RetryPolicy`` for every role (what the model client takes)."""
        return {role: self.policy_for(role) for role in ROLES}

    def overridden(self, *, timeout: Mapping[str, float] | None, deadline: Mapping[str, float] | None) -> RetrySpec:
        """This spec with the CLI's ``--timeout``/``--deadline`` applied (key ``""``: every role)."""
        common = dict(self.common)
        by_role = {role: dict(values) for role, values in self.by_role.items()}
        for name, given in (("timeout", timeout or {}), ("deadline", deadline or {})):
            for role, seconds in given.items():
                if role:
                    by_role.setdefault(role, {})[name] = seconds
                else:
                    common[name] = seconds
                    for values in by_role.values():
                        values.pop(name, None)  # a flag for every role beats the suite's per-role values
        return RetrySpec(common, by_role)


def parse_retry(table: Mapping[str, Any], source: str) -> RetrySpec:
    """``[retry]`` (module docstring); every bad value raises :class:`SuiteError` naming its key."""
    known_keys(table, (*SETTINGS, *ROLES), "retry", source)
    common = _settings(table, "retry", source, SETTINGS)
    by_role = {}
    for role in ROLES:
        if role in table:
            sub = table[role]
            if not isinstance(sub, Mapping):
                raise SuiteError(source, f"retry.{role}", "must be a table such as { timeout = 30, deadline = 120 }")
            known_keys(sub, SETTINGS, f"retry.{role}", source)
            by_role[role] = _settings(sub, f"retry.{role}", source, SETTINGS)
    return RetrySpec(common, by_role)


def parse_seconds_flag(text: str, flag: str) -> tuple[str, float]:
    """``--timeout 30`` (every role) or ``--timeout judge=10``: ``(role or "", seconds)``.

    Raises:
        ValueError: an unknown role or a value that is not a positive number of seconds.
    """
    role, _, value = text.rpartition("=")
    if role and role not in ROLES:
        raise ValueError(f"{flag} {text!r}: unknown role {role!r}; roles are {', '.join(ROLES)}")
    seconds = _positive_seconds(value)
    if seconds is None:
        raise ValueError(f"{flag} {text!r}: expected a positive number of seconds (or ROLE=SECONDS)")
    return role, seconds


def _settings(table: Mapping[str, Any], where: str, source: str, names: tuple[str, ...]) -> dict[str, float | int]:
    found: dict[str, float | int] = {}
    for name in names:
        if name not in table:
            continue
        value = table[name]
        if name == "max_retries":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SuiteError(source, f"{where}.{name}", f"must be a non-negative integer, got {value!r}")
            found[name] = value
            continue
        seconds = _positive_seconds(value)
        if seconds is None:
            raise SuiteError(source, f"{where}.{name}", f"must be a positive number of seconds, got {value!r}")
        found[name] = seconds
    return found


def _positive_seconds(value: Any) -> float | None:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


__all__ = [
    "DEFAULT_DEADLINE_S",
    "DEFAULT_TIMEOUT_S",
    "ROLES",
    "RetrySpec",
    "parse_retry",
    "parse_seconds_flag",
]

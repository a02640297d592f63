"""Model profiles: what a calibrated (or published) Observer/Reflector looks like to omlab.

A profile is a JSON file (written by ``omlab calibrate RUN``, or shipped in
``omlab/bench/calibration/profiles/``)::

    {
      "format": "omlab-model-profile",
      "version": 1,
      "source": "omlab calibrate: run 20260101T120000-abc123 (suite my-suite)",
      "fits": [
        {
          "role": "observer",                       # observer | reflector | extractor | actor | judge
          "model": "openai/gpt-4o-mini",            # the model that answered (resolved_model)
          "calls": 120,                             # calls of this model in this role
          "source": "...",                          # optional: where the figures come from
          "compression": {                          # observation tokens = content / ratio(content)
            "content_tokens": [310, 620, 1210],     #   content: message tokens observed, or the
            "ratios": [3.1, 4.0, 4.6],              #   observation tokens reflected (ascending)
            "min_output_tokens": 40,                #   never fewer observation tokens than this
            "overhead_tokens": 35,                  #   reply tokens beyond them (wrapper, hints)
            "calls": 118                            #   cycles the curve was fitted on
          },
          "output_tokens": {"p5": 80, "p50": 150, "p95": 300, "max": 420},  # whole replies
          "latency": {                              # seconds = (base_s + in × input_s + out × output_s)
            "base_s": 0.41, "input_s": 0.00001,     #   × a lognormal factor of mean 1 and shape sigma
            "output_s": 0.011, "sigma": 0.22,
            "p50_s": 2.1, "p95_s": 3.9, "calls": 118
          },
          "failure_rate": 0.01,                     # calls that failed after every retry
          "retry_rate": 0.05                        # calls that needed more than one attempt
        }
      ]
    }

Every section of a fit is optional except ``role`` and ``model``; a fit without ``latency`` leaves
the suite's ``[latency]`` in charge of that role, one without ``compression`` cannot size an
offline model. Content and observation tokens are the engine's own counts (what the ``data-om-*``
markers report: ``tokensToObserve``/``tokensToBuffer`` at the start of a cycle, the
``observations`` text at its end, without the continuation hints a reply also holds), so the
ratio is the one the reports call compression; input/output tokens of the latency fit and of
``output_tokens`` are the provider's reported usage of whole replies.

:func:`load_profile` reads a file or a shipped profile by name; :class:`ProfileError` names the
file and the field of anything wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omlab.llm.offline.sizing import OutputSizing, SizingError

FORMAT = "omlab-model-profile"
VERSION = 1
PROFILES_DIR = Path(__file__).with_name("profiles")
LATENCY_FIELDS = ("base_s", "input_s", "output_s", "sigma")


class ProfileError(ValueError):
    """A profile that cannot be used; the message names the file (or profile name) and the field."""

    def __init__(self, source: str, problem: str, key: str | None = None) -> None:
        self.source = source
        self.key = key
        super().__init__(f"{source}: {key}: {problem}" if key else f"{source}: {problem}")


@dataclass(frozen=True, slots=True)
class RoleFit:
    """One model in one role: its compression curve, output sizes, latency and failure rates."""

    role: str
    model: str
    calls: int = 0
    compression: OutputSizing | None = None
    compression_calls: int = 0
    output_tokens: dict[str, float] = field(default_factory=dict)
    latency: dict[str, float] | None = None
    failure_rate: float | None = None
    retry_rate: float | None = None
    source: str | None = None

    def latency_spec(self) -> dict[str, Any] | None:
        """The ``[latency]``-style entry of this fit (kind ``calibrated``), or None."""
        if self.latency is None:
            return None
        return {"kind": "calibrated", **{name: float(self.latency.get(name, 0.0)) for name in LATENCY_FIELDS}}

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "model": self.model, "calls": self.calls}
        if self.source:
            data["source"] = self.source
        if self.compression is not None:
            data["compression"] = {**self.compression.to_dict(), "calls": self.compression_calls}
        if self.output_tokens:
            data["output_tokens"] = dict(self.output_tokens)
        if self.latency is not None:
            data["latency"] = dict(self.latency)
        for name in ("failure_rate", "retry_rate"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        return data


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """A profile file: its source and its fits (one per model and role)."""

    fits: tuple[RoleFit, ...]
    source: str = ""
    name: str | None = None
    location: str = "<profile>"

    def fit_for(self, role: str, model: str | None = None) -> RoleFit:
        """The fit of ``role`` (and ``model`` when the profile has several models in that role).

        Raises:
            ProfileError: No fit for the role, an unknown model, or several models and none named.
        """
        candidates = [f for f in self.fits if f.role == role]
        if not candidates:
            roles = ", ".join(sorted({f.role for f in self.fits})) or "none"
            raise ProfileError(self.location, f"no fit for role {role!r} (roles in this profile: {roles})")
        if model is not None:
            chosen = [f for f in candidates if f.model == model]
            if not chosen:
                models = ", ".join(f.model for f in candidates)
                raise ProfileError(self.location, f"no {role} fit for model {model!r} (models: {models})")
            return chosen[0]
        if len(candidates) > 1:
            models = ", ".join(f.model for f in candidates)
            raise ProfileError(
                self.location, f"several {role} models ({models}): name one as 'PROFILE#MODEL'", key=role
            )
        return candidates[0]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": FORMAT, "version": VERSION}
        if self.name:
            data["name"] = self.name
        data["source"] = self.source
        data["fits"] = [f.to_dict() for f in self.fits]
        return data

    def write(self, path: str | Path) -> Path:
        """Write the profile as JSON (parent folders created); returns the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return target


def shipped_profiles() -> dict[str, Path]:
    """``{name: file}`` of the profiles shipped with omlab."""
    return {p.stem: p for p in sorted(PROFILES_DIR.glob("*.json"))} if PROFILES_DIR.is_dir() else {}


def load_profile(reference: str, base_dir: str | Path = ".") -> ModelProfile:
    """The profile ``reference`` names: a file (relative to ``base_dir``) or a shipped profile.

    Raises:
        ProfileError: Neither a file nor a shipped profile (the message lists the shipped names),
            or a file that is not a valid profile (the message names the field).
    """
    path = Path(reference).expanduser()
    if not path.is_absolute():
        path = Path(base_dir) / path
    shipped = shipped_profiles()
    if not path.is_file() and reference in shipped:
        path = shipped[reference]
    elif not path.is_file():
        names = ", ".join(shipped) or "none"
        raise ProfileError(
            reference, f"unknown profile: not a shipped profile (shipped: {names}) nor a file ({path} does not exist)"
        )
    source = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ProfileError(source, f"cannot read the file: {error}") from None
    except json.JSONDecodeError as error:
        raise ProfileError(source, f"not JSON (line {error.lineno}, column {error.colno}): {error.msg}") from None
    return parse_profile(data, source)


def parse_profile(data: Any, source: str = "<profile>") -> ModelProfile:
    """Validate a profile's parsed JSON (see the module docstring)."""
    if not isinstance(data, Mapping):
        raise ProfileError(source, f"a profile is a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise ProfileError(source, f"must be {FORMAT!r}, got {data.get('format')!r}", "format")
    if data.get("version") != VERSION:
        raise ProfileError(source, f"this omlab reads version {VERSION}, got {data.get('version')!r}", "version")
    fits = data.get("fits")
    if not isinstance(fits, list) or not fits:
        raise ProfileError(source, "must be a non-empty list of fits", "fits")
    parsed = tuple(_parse_fit(fit, source, f"fits[{i}]") for i, fit in enumerate(fits))
    return ModelProfile(
        fits=parsed,
        source=str(data.get("source", "")),
        name=data.get("name") if isinstance(data.get("name"), str) else None,
        location=source,
    )


def _parse_fit(data: Any, source: str, where: str) -> RoleFit:
    if not isinstance(data, Mapping):
        raise ProfileError(source, f"must be an object, got {type(data).__name__}", where)
    for name in ("role", "model"):
        if not isinstance(data.get(name), str) or not data[name]:
            raise ProfileError(source, f"must be a non-empty string, got {data.get(name)!r}", f"{where}.{name}")
    compression = None
    compression_calls = 0
    if data.get("compression") is not None:
        try:
            compression = OutputSizing.from_dict(data["compression"])
        except (SizingError, TypeError, ValueError) as error:
            raise ProfileError(source, str(error), f"{where}.compression") from None
        compression_calls = _count(data["compression"].get("calls", 0), source, f"{where}.compression.calls")
    latency = data.get("latency")
    if latency is not None:
        if not isinstance(latency, Mapping) or "base_s" not in latency:
            raise ProfileError(source, f"must be an object with base_s, got {latency!r}", f"{where}.latency")
        for name, value in latency.items():
            if not _number(value) or value < 0:
                raise ProfileError(source, f"must be a number >= 0, got {value!r}", f"{where}.latency.{name}")
        latency = {k: float(v) for k, v in latency.items()}
    rates = {}
    for name in ("failure_rate", "retry_rate"):
        value = data.get(name)
        if value is not None and (not _number(value) or not 0 <= value <= 1):
            raise ProfileError(source, f"must be a number in [0, 1], got {value!r}", f"{where}.{name}")
        rates[name] = None if value is None else float(value)
    output = data.get("output_tokens") or {}
    if not isinstance(output, Mapping) or not all(_number(v) for v in output.values()):
        raise ProfileError(source, f"must be an object of numbers, got {output!r}", f"{where}.output_tokens")
    return RoleFit(
        role=data["role"],
        model=data["model"],
        calls=_count(data.get("calls", 0), source, f"{where}.calls"),
        compression=compression,
        compression_calls=compression_calls,
        output_tokens={k: float(v) for k, v in output.items()},
        latency=latency,
        source=data.get("source") if isinstance(data.get("source"), str) else None,
        **rates,
    )


def _count(value: Any, source: str, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ProfileError(source, f"must be an integer >= 0, got {value!r}", where)
    return value


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


__all__ = [
    "FORMAT",
    "VERSION",
    "ModelProfile",
    "ProfileError",
    "RoleFit",
    "load_profile",
    "parse_profile",
    "shipped_profiles",
]

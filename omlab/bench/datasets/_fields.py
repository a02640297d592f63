"""Typed field access for loaders: every failure becomes a DatasetError naming file, record, field."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from omlab.bench.datasets.errors import DatasetError

_MISSING = object()


_KIND_NAMES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


def type_name(value: Any) -> str:
    """JSON-flavoured name of a value's type, for error messages."""
    return _KIND_NAMES.get(type(value), type(value).__name__)


@dataclass(frozen=True, slots=True)
class RecordContext:
    """Where a loader is: which file and which record; produces located errors and typed reads."""

    file: str
    record: str

    def error(self, field: str | None, problem: str) -> DatasetError:
        return DatasetError(problem, file=self.file, record=self.record, field=field)

    def get(
        self, obj: Any, key: str, kinds: type | tuple[type, ...], *, path: str | None = None, default: Any = _MISSING
    ) -> Any:
        """``obj[key]`` checked against ``kinds`` (bool never passes as int); ``default`` if absent."""
        field = f"{path}.{key}" if path else key
        if not isinstance(obj, dict):
            raise self.error(path, f"expected an object, got {type_name(obj)}")
        if key not in obj:
            if default is not _MISSING:
                return default
            raise self.error(field, "missing required field")
        value = obj[key]
        self.check(value, kinds, field)
        return value

    def check(self, value: Any, kinds: type | tuple[type, ...], field: str) -> None:
        kinds_tuple = kinds if isinstance(kinds, tuple) else (kinds,)
        is_bool_sneaking = isinstance(value, bool) and bool not in kinds_tuple
        if not isinstance(value, kinds_tuple) or is_bool_sneaking:
            wanted = " or ".join(_KIND_NAMES.get(kind, kind.__name__) for kind in kinds_tuple)
            raise self.error(field, f"expected {wanted}, got {type_name(value)} {_preview(value)}")


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def pace_delta(pace: timedelta | float, *, option: str = "turn_pace") -> timedelta:
    """A non-negative per-turn pace as a timedelta (numbers are seconds)."""
    delta = pace if isinstance(pace, timedelta) else timedelta(seconds=float(pace))
    if delta < timedelta(0):
        raise ValueError(f"{option} must be >= 0, got {pace!r}")
    return delta


def answer_text(value: Any, ctx: RecordContext, field: str) -> str:
    """A gold answer as a string: ints and floats are converted (some datasets store ``15``)."""
    ctx.check(value, (str, int, float), field)
    return value if isinstance(value, str) else str(value)

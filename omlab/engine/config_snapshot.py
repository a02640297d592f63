"""Values in a config's provenance snapshot: JSON-safe copies with secret-looking keys redacted,
callables and extractors described by name, other objects by type."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

_SECRET_KEY = re.compile(
    r"api[_-]?key|secret|password|passwd|authorization|bearer|access[_-]?token|"
    r"credential|private[_-]?key",
    re.IGNORECASE,
)


def json_safe(value: Any) -> Any:
    """A JSON-ready deep copy; secret-looking keys are redacted, objects become type names."""
    if isinstance(value, Mapping):
        return {str(k): "<redacted>" if _SECRET_KEY.search(str(k)) else json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if callable(value):
        return describe_callable(value)
    return type_name(value)


def type_name(value: Any) -> str:
    """``module.QualifiedName`` of the value's type."""
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def describe_callable(fn: Any) -> str | None:
    """``module.qualname`` of a function or callable object (``None`` stays ``None``)."""
    if fn is None:
        return None
    module = getattr(fn, "__module__", None) or type(fn).__module__
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{module}.{name}"


def describe_extractor(extractor: Any) -> Any:
    """An ``extract`` entry: as given when it is data, else its type and its named fields."""
    if isinstance(extractor, str | Mapping):
        return json_safe(extractor)
    described: dict[str, Any] = {"type": type_name(extractor)}
    for attribute in ("slug", "name", "instructions"):
        value = getattr(extractor, attribute, None)
        if isinstance(value, str):
            described[attribute] = value
        elif callable(value):
            described[attribute] = describe_callable(value)
    return described

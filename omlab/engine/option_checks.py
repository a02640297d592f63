"""Reading one option: camelCase/snake_case key spelling and the value checks every section shares.

Each check raises :class:`~omlab.engine.errors.ConfigError` naming the option's camelCase path.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from omlab.engine.errors import ConfigError


def snake(name: str) -> str:
    """``bufferTokens`` → ``buffer_tokens``."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def option_keys(*camel: str) -> dict[str, str]:
    """snake_case → camelCase for one level of options."""
    return {snake(name): name for name in camel}


def normalize(raw: Mapping[str, Any], keys: Mapping[str, str], prefix: str) -> dict[str, Any]:
    """Map camelCase/snake_case keys to snake_case; drop ``None`` values (= not given).

    Unknown names raise a ConfigError listing the valid ones (and the closest match).
    """
    camel_to_snake = {camel: name for name, camel in keys.items()}
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in raw.items():
        name = key if key in keys else camel_to_snake.get(key) if isinstance(key, str) else None
        if name is None:
            valid = ", ".join(keys.values())
            close = difflib.get_close_matches(str(key), [*keys.values(), *keys], n=1, cutoff=0.75)
            hint = f"did you mean {keys.get(close[0], close[0])!r}? " if close else ""
            raise ConfigError(f"{prefix}{key}", f"unknown option; {hint}valid options here: {valid}")
        if name in spelled:
            raise ConfigError(
                f"{prefix}{keys[name]}", f"given twice (as {spelled[name]!r} and {key!r}); keep one spelling"
            )
        spelled[name] = key
        if value is not None:
            out[name] = value
    return out


def section(given: dict[str, Any], name: str, keys: Mapping[str, str], prefix: str) -> dict[str, Any]:
    """The normalized options of the nested object ``given[name]`` (``{}`` when not given)."""
    raw = given.get(name)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(prefix.rstrip("."), f"expected an object of options, got {type(raw).__name__}")
    return normalize(raw, keys, prefix)


def check_bool(value: Any, option: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(option, f"expected true or false, got {value!r}")
    return value


def number(value: Any, option: str, expected: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(option, f"expected {expected}, got {value!r}")
    return value


def integer(value: Any, option: str, expected: str) -> int:
    value_number = number(value, option, expected)
    if isinstance(value_number, float):
        if not value_number.is_integer():
            raise ConfigError(option, f"expected {expected}, got {value!r}")
        return int(value_number)
    return value_number


def positive_int(value: Any, option: str) -> int:
    value_number = integer(value, option, "a positive whole number of tokens")
    if value_number <= 0:
        raise ConfigError(option, f"must be a positive number of tokens, got {value_number}")
    return value_number


def non_negative_int(value: Any, option: str) -> int:
    value_number = integer(value, option, "a whole number >= 0")
    if value_number < 0:
        raise ConfigError(option, f"must be >= 0, got {value_number}")
    return value_number


def optional_str(value: Any, option: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ConfigError(option, f"expected a string, got {type(value).__name__}")
    return value


def optional_callable(value: Any, option: str) -> Callable[..., Any] | None:
    if value is not None and not callable(value):
        raise ConfigError(option, f"expected a function, got {type(value).__name__}")
    return value


def choice(value: Any, allowed: tuple[str, ...], option: str) -> Any:
    if value not in allowed:
        raise ConfigError(option, f"must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


def extractors(value: Any, option: str) -> tuple[Any, ...]:
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise ConfigError(option, f"expected a list of extractors, got {type(value).__name__}")
    return tuple(value)

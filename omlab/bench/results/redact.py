"""Keeping credentials out of the results database.

Two rules, applied to every JSON column and to free-text error columns:

* **keys**: a mapping entry whose key names a credential is dropped, at any depth. A key names a
  credential when, lower-cased with ``-``, ``_`` and spaces removed, it contains ``apikey``,
  ``authorization``/``authorisation``, ``secret``, ``password``/``passwd``, ``credential``,
  ``cookie``, ``bearer``, ``privatekey`` or ``headers`` (a model's headers, all of them), is
  exactly ``auth``, or ends in the singular word
  ``token`` (``token``, ``access_token``, ``hfToken``). Token *counts* survive: ``input_tokens``,
  ``tokensObserved``, ``token_count``, ``max_tokens`` all stay.
* **values**: substrings shaped like well-known key formats (``sk-…``, ``Bearer …``, ``hf_…``,
  ``AIza…``, ``ghp_…``, ``xox?-…``) are replaced by ``[redacted]``, so an error message that
  quotes a key does not leak it; so is the value of every credential variable of the process
  environment (``OPENAI_API_KEY``… whatever its shape: :func:`omlab.llm.secrets.environment_secrets`,
  read once per process).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any

from omlab.llm.secrets import environment_secrets

REDACTED = "[redacted]"

_SECRET_WORDS = (
    "apikey",
    "authorization",
    "authorisation",
    "secret",
    "password",
    "passwd",
    "credential",
    "cookie",
    "bearer",
    "privatekey",
    # every header can carry a credential, whatever its name (X-Custom-Auth, X-Goog-Api-Client…)
    "headers",
)
_SECRET_VALUE = re.compile(
    r"\bsk-[A-Za-z0-9_-]{16,}"
    r"|\b[Bb]earer\s+[A-Za-z0-9._~+/=-]{12,}"
    r"|\bhf_[A-Za-z0-9]{20,}"
    r"|\bAIza[0-9A-Za-z_-]{30,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bxox[abpr]-[A-Za-z0-9-]{10,}"
)
_SCALARS = frozenset({str, int, float, bool, type(None)})
_KEY_VERDICTS: dict[str, bool] = {}
_KEY_VERDICTS_MAX = 10_000


def _normal(text: str) -> str:
    return text.lower().replace("-", "").replace("_", "").replace(" ", "")


def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a credential (see the module docstring)."""
    normal = _normal(key)
    return normal == "auth" or normal.endswith("token") or any(word in normal for word in _SECRET_WORDS)


def drop_secret_keys(value: Any) -> Any:
    """A copy of ``value`` with credential-named keys removed from every nested mapping
    (dataclass instances count as mappings of their fields)."""
    if is_dataclass(value) and not isinstance(value, type):
        value = _fields_of(value)
    if isinstance(value, Mapping):
        return {key: drop_secret_keys(item) for key, item in value.items() if not is_secret_key(str(key))}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [drop_secret_keys(item) for item in value]
    return value


_ENVIRONMENT: list[frozenset[str]] = []


def environment_values() -> frozenset[str]:
    """The environment's credential values, longest first when iterated via :func:`redact_text`
    (read once per process; :func:`forget_environment` reads them again)."""
    if not _ENVIRONMENT:
        _ENVIRONMENT.append(environment_secrets())
    return _ENVIRONMENT[0]


def forget_environment() -> None:
    """Read the environment's credentials again at the next redaction (after changing it)."""
    _ENVIRONMENT.clear()


def redact_text(text: str) -> str:
    """``text`` with key-shaped substrings and the environment's credential values replaced by
    ``[redacted]``."""
    # Substring tests are far cheaper than running the regex over every payload.
    if "sk-" in text or "earer" in text or "hf_" in text or "AIza" in text or "gh" in text or "xox" in text:
        text = _SECRET_VALUE.sub(REDACTED, text)
    for secret in environment_values():
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def secret_value_pattern() -> str:
    """A regex matching every substring :func:`redact_text` replaces (key shapes and the
    environment's credential values)."""
    values = "|".join(re.escape(value) for value in sorted(environment_values(), key=len, reverse=True))
    return _SECRET_VALUE.pattern + (f"|{values}" if values else "")


def to_safe_json(value: Any) -> str:
    """Serialise ``value`` as JSON text, credentials removed.

    Like ``json.dumps(default=str)``, except that dataclass instances, other mappings and sets
    are written as objects/arrays (so credentials inside them are found too). A ``str`` is taken
    to be JSON text already: it is parsed (so it must be valid JSON) and cleaned the same way.

    Raises:
        ValueError: ``value`` is a string that is not valid JSON, or cannot be written as JSON.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as error:
            raise ValueError(f"is a string but not valid JSON ({error})") from None
    try:
        text = _dumps(drop_secret_keys(value) if _needs_cleaning(value) else value)
    except (TypeError, ValueError) as error:  # e.g. a dict key json cannot write
        raise ValueError(f"cannot be written as JSON ({error})") from None
    return redact_text(text)


def _needs_cleaning(value: Any) -> bool:
    """Whether ``value`` holds a credential key, or a container only the slow path handles."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or _is_secret_key_cached(key):
                return True
            if type(item) not in _SCALARS and _needs_cleaning(item):
                return True
        return False
    if kind is list or kind is tuple:
        for item in value:
            if type(item) not in _SCALARS and _needs_cleaning(item):
                return True
        return False
    if kind in _SCALARS:
        return False
    return isinstance(value, (Mapping, set, frozenset, list, tuple)) or (
        is_dataclass(value) and not isinstance(value, type)
    )


def _is_secret_key_cached(key: str) -> bool:
    # Payload keys repeat across millions of rows; keys that are data (ids) must not grow this.
    known = _KEY_VERDICTS.get(key)
    if known is None:
        if len(_KEY_VERDICTS) >= _KEY_VERDICTS_MAX:
            _KEY_VERDICTS.clear()
        known = _KEY_VERDICTS[key] = is_secret_key(key)
    return known


def _fields_of(instance: Any) -> dict[str, Any]:
    return {field.name: getattr(instance, field.name) for field in fields(instance)}


def _plain(value: Any) -> Any:
    # json.dumps' fallback: containers it does not know become lists/dicts (so their keys are
    # visible to the scrubber), anything else its str().
    if is_dataclass(value) and not isinstance(value, type):
        return _fields_of(value)
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset)):
        return list(value)
    return str(value)


_ENCODER = json.JSONEncoder(default=_plain, ensure_ascii=False)


def _dumps(value: Any) -> str:
    return _ENCODER.encode(value)

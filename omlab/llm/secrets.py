"""Collecting the secret values a model configuration holds, to blank them out of error text.

A provider that rejects a request often echoes part of it (a header, the key it was given) in its
error message, and that message travels into results tables, events, logs and the terminal. The
client therefore knows every secret a request could carry and replaces each one with ``***``
before the text goes anywhere. A value is secret when:

* its key names a credential: it contains ``key``, ``token``, ``secret``, ``password``,
  ``credential`` or ``authorization`` (any case, ``-``/``_`` ignored; only string values, so
  ``maxTokens = 1000`` is not one), at any depth, e.g. ``providerOptions.anthropic.apiKey``;
* it is anywhere under a ``headers`` / ``extra_headers`` / ``api_key`` family key (every header
  value can carry a credential, whatever its name).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "***"
MIN_SECRET_CHARS = 4
"""Shorter values are not replaced: blanking ``"abc"`` everywhere would garble messages."""

_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "credential", "authorization", "authorisation")
_ALL_VALUES_SECRET = ("headers", "extraheaders", "apikey", "apikeys", "customheaders")


def _normal(key: object) -> str:
    return str(key).lower().replace("-", "").replace("_", "").replace(" ", "")


def secret_values(*trees: Any) -> set[str]:
    """Every secret string in ``trees`` (mappings, lists and scalars; see the module docstring)."""
    found: set[str] = set()
    for tree in trees:
        _collect(tree, False, found)
    return {value for value in found if len(value) >= MIN_SECRET_CHARS}


def _collect(value: Any, secret: bool, found: set[str]) -> None:
    if isinstance(value, str):
        if secret:
            found.add(value)
            stripped = value.split(None, 1)[-1]  # "Bearer <key>": the key alone is echoed too
            found.add(stripped)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            normal = _normal(key)
            below = secret or normal in _ALL_VALUES_SECRET or any(word in normal for word in _SECRET_WORDS)
            _collect(item, below, found)
        return
    if isinstance(value, Iterable) and not isinstance(value, bytes):
        for item in value:
            _collect(item, secret, found)


def redact_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every value of ``secrets`` replaced by ``***`` (longest first)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


__all__ = ["REDACTED", "redact_secrets", "secret_values"]

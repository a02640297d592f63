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

The process environment is the other place a key comes from: litellm reads ``OPENAI_API_KEY``,
``GROQ_API_KEY``, ``AWS_SECRET_ACCESS_KEY``, ``HF_TOKEN``… when a model's configuration gives none.
:func:`environment_secrets` is the value of every environment variable whose name has a
credential word as one of its ``_``-separated parts (``KEY``, ``TOKEN``, ``SECRET``,
``PASSWORD``, ``CREDENTIAL``, ``AUTH``…; ``TIKTOKEN_CACHE_DIR`` is not one), whatever the
value's shape: a 64-hex key is blanked as surely as an ``sk-…`` one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "***"
MIN_SECRET_CHARS = 4
"""Shorter values are not replaced: blanking ``"abc"`` everywhere would garble messages."""

_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "credential", "authorization", "authorisation")
_ALL_VALUES_SECRET = ("headers", "extraheaders", "apikey", "apikeys", "customheaders")


_ENV_SECRET_PARTS = frozenset(
    {"KEY", "KEYS", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "CREDENTIAL", "CREDENTIALS", "AUTH"}
)
_ENV_NOT_SECRET_SUFFIXES = ("_DIR", "_PATH", "_FILE", "_URL", "_BASE", "_HOST", "_PORT", "_MODEL")
MIN_ENV_SECRET_CHARS = 8
"""Shorter environment values (``1``, ``true``) are settings, not keys."""


def is_secret_variable(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential (module docstring)."""
    upper = name.upper()
    if upper.endswith(_ENV_NOT_SECRET_SUFFIXES):
        return False
    return any(part in _ENV_SECRET_PARTS for part in upper.replace("-", "_").split("_"))


def environment_secrets(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The values of the credential variables of ``environ`` (default: this process's
    environment) that are at least :data:`MIN_ENV_SECRET_CHARS` long."""
    source = os.environ if environ is None else environ
    found = {
        value.strip()
        for name, value in source.items()
        if is_secret_variable(name) and len(value.strip()) >= MIN_ENV_SECRET_CHARS
    }
    return frozenset(found | {value.split(None, 1)[-1] for value in found})


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


__all__ = ["REDACTED", "environment_secrets", "is_secret_variable", "redact_secrets", "secret_values"]

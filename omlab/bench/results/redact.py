"""Keeping credentials out of the results database.

Two rules, applied to every JSON column and to free-text error columns:

* **keys**: a mapping entry whose key names a credential is dropped, at any depth. A key names a
  credential when, lower-cased with ``-``, ``_`` and spaces removed, it contains ``apikey``,
  ``authorization``/``authorisation``, ``secret``, ``password``/``passwd``, ``credential``,
  ``cookie``, ``bearer`` or ``privatekey``, is exactly ``auth``, or ends in the singular word
  ``token`` (``token``, ``access_token``, ``hfToken``). Token *counts* survive: ``input_tokens``,
  ``tokensObserved``, ``token_count``, ``max_tokens`` all stay.
* **values**: substrings shaped like well-known key formats (``sk-…``, ``Bearer …``, ``hf_…``,
  ``AIza…``, ``ghp_…``, ``xox?-…``) are replaced by ``[redacted]``, so an error message that
  quotes a key does not leak it.
"""

from __future__ import annotations

import json
import re
from typing import Any

REDACTED = "[redacted]"

_SECRET_WORDS = (
    "apikey", "authorization", "authorisation", "secret", "password", "passwd", "credential",
    "cookie", "bearer", "privatekey",
)
# Cheap pre-check on serialised JSON: could any key be a credential? (Only then walk the object.)
_SUSPICIOUS_KEY = re.compile(
    r'"[^"\\]*(?:api[-_ ]?key|auth|secret|passw|credential|cookie|bearer|private[-_ ]?key|token(?!s))'
    r'[^"\\]*"\s*:',
    re.IGNORECASE,
)
_SECRET_VALUE = re.compile(
    r"\bsk-[A-Za-z0-9_-]{16,}"
    r"|\b[Bb]earer\s+[A-Za-z0-9._~+/=-]{12,}"
    r"|\bhf_[A-Za-z0-9]{20,}"
    r"|\bAIza[0-9A-Za-z_-]{30,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bxox[abpr]-[A-Za-z0-9-]{10,}"
)


def is_secret_key(key: str) -> bool:
    """Whether a mapping key names a credential (see the module docstring)."""
    normal = key.lower().replace("-", "").replace("_", "").replace(" ", "")
    return normal == "auth" or normal.endswith("token") or any(word in normal for word in _SECRET_WORDS)


def drop_secret_keys(value: Any) -> Any:
    """A copy of ``value`` with credential-named keys removed from every nested mapping."""
    if isinstance(value, dict):
        return {
            key: drop_secret_keys(item) for key, item in value.items() if not is_secret_key(str(key))
        }
    if isinstance(value, (list, tuple)):
        return [drop_secret_keys(item) for item in value]
    return value


def redact_text(text: str) -> str:
    """``text`` with key-shaped substrings replaced by ``[redacted]``."""
    return _SECRET_VALUE.sub(REDACTED, text)


def to_safe_json(value: Any) -> str:
    """Serialise ``value`` as JSON text (``json.dumps(default=str)``), credentials removed.

    A ``str`` is taken to be JSON text already: it is parsed (so it must be valid JSON) and
    cleaned the same way.

    Raises:
        ValueError: ``value`` is a string that is not valid JSON.
    """
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as error:
            raise ValueError(f"is a string but not valid JSON ({error})") from None
        text = value if not _SUSPICIOUS_KEY.search(value) else _dumps(drop_secret_keys(parsed))
    else:
        text = _dumps(value)
        if _SUSPICIOUS_KEY.search(text):
            text = _dumps(drop_secret_keys(value))
    return redact_text(text)


def _dumps(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)

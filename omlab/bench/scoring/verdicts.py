"""Turning a judge model's reply into a verdict.

The parse rule moves scores by points (benchmarks.md §4), so it is a named choice:

- ``parity`` (default): the reference OM harness's rule: the stripped, lower-cased reply equals
  ``yes`` or starts with ``yes.``. ``"Yes, because…"`` is therefore False. Always a bool.
- ``official``: LongMemEval's ``evaluate_qa.py`` rule: ``'yes' in reply.lower()`` (a substring:
  ``"yesterday"`` and ``"no, not yes"`` count as yes). Always a bool.
- ``strict``: the first word decides (after stripping quotes, markdown and punctuation):
  ``yes``/``correct``/``true`` -> True, ``no``/``incorrect``/``wrong``/``false`` -> False,
  anything else -> None (unparseable; the caller decides whether that is a failure).
- ``lenient``: look for those words anywhere as whole words; exactly one polarity found -> that
  verdict, none or both -> None. Handles "The response is correct: yes." but, like any keyword
  rule, not negations such as "not correct" (-> True).
"""

from __future__ import annotations

import re
from typing import Literal

VerdictMode = Literal["parity", "official", "strict", "lenient"]
VERDICT_MODES: tuple[str, ...] = ("parity", "official", "strict", "lenient")

VERDICT_RULES: dict[str, str] = {
    "parity": "the reference OM harness's rule: the reply is 'yes' or starts with 'yes.'",
    "official": "LongMemEval's evaluate_qa.py rule: 'yes' anywhere in the reply",
    "strict": "the reply's first word decides; anything else is no verdict",
    "lenient": "one polarity word anywhere in the reply; none or both is no verdict",
}
"""One line per verdict mode, for reports."""

_POSITIVE = frozenset({"yes", "correct", "true"})
_NEGATIVE = frozenset({"no", "incorrect", "wrong", "false"})
_WORD = re.compile(r"[a-z]+")


def parse_verdict(text: str, mode: VerdictMode = "parity") -> bool | None:
    """Parse a judge reply; see the module docstring for each mode. None means unparseable.

    Raises:
        ValueError: Unknown ``mode``.
    """
    lowered = (text or "").strip().lower()
    if mode == "parity":
        return lowered == "yes" or lowered.startswith("yes.")
    if mode == "official":
        return "yes" in lowered
    if mode == "strict":
        first = _WORD.search(lowered)
        if first is None or first.start() != _leading_noise(lowered):
            return None
        return _polarity(first.group())
    if mode == "lenient":
        found = {_polarity(word) for word in _WORD.findall(lowered)} - {None}
        return found.pop() if len(found) == 1 else None
    raise ValueError(f"verdict mode must be one of {', '.join(VERDICT_MODES)}, got {mode!r}")


def _leading_noise(text: str) -> int:
    """Index of the first character that is not quote/markdown/punctuation/space."""
    match = re.match(r"[\s\"'`*_#>\-:.(\[{]*", text)
    return match.end() if match else 0


def _polarity(word: str) -> bool | None:
    if word in _POSITIVE:
        return True
    if word in _NEGATIVE:
        return False
    return None

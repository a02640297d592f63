"""Telling an unusable actor or judge reply from a real one.

A provider can answer HTTP 200 with nothing in it, or a model can fall into a repetition loop
until its output budget (or the provider's) runs out. Neither is an answer or a verdict: the
harness retries such a reply once and then records the question as failed (actor) or its
verdict as missing (judge), never scores it.
"""

from __future__ import annotations

from omlab.engine.degenerate import is_degenerate
from omlab.engine.observation_text import sanitize_observation_lines

CHARS_PER_TOKEN_BOUND = 40
"""No tokenizer packs more characters than this into one output token: a longer reply than
``max_output_tokens * CHARS_PER_TOKEN_BOUND`` was not produced under that budget as asked."""


def reply_problem(text: str | None, *, max_output_tokens: int | None = None) -> str | None:
    """Why ``text`` is not a usable reply (``"empty reply"``, ``"degenerate reply …"``), or None."""
    if text is None or not text.strip():
        return "empty reply"
    if max_output_tokens is not None and len(text) > max_output_tokens * CHARS_PER_TOKEN_BOUND:
        return f"degenerate reply ({len(text):,} characters for a {max_output_tokens}-token budget)"
    if is_degenerate(sanitize_observation_lines(text)):
        return f"degenerate reply (a repetition loop of {len(text):,} characters)"
    return None


__all__ = ["CHARS_PER_TOKEN_BOUND", "reply_problem"]

"""ObservationalMemory() with no model and no provider key fails at once with the fix, instead of
retrying for minutes (issue 24 item 9). litellm refuses the call before any connection."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from omlab import Message, ObservationalMemory
from omlab.llm.client import ModelCallError, ModelClient


def test_the_default_model_without_its_key_fails_after_one_attempt_naming_the_fix(monkeypatch):
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    calls = []

    async def no_wait(_seconds: float) -> None:
        return None

    om = ObservationalMemory(client=ModelClient(sleep=no_wait, on_call=calls.append)).sync()
    om.add_messages("t1", [Message.of("user", "I moved to Lisbon last week.", datetime(2026, 1, 5, tzinfo=UTC))])
    with pytest.raises(ModelCallError) as info:
        om.observe("t1")
    message = str(info.value)
    assert [call.attempts for call in calls] == [1]
    assert "GEMINI_API_KEY" in message
    assert "`model` option" in message and "omlab/observer" in message

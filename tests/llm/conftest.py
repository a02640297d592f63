"""Fixtures for the model-layer tests: a scripted local OpenAI server and a virtual clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .fake_openai_server import FakeOpenAIServer


class FakeClock:
    """``now()`` and an async ``sleep()`` that only advances virtual time and records each wait."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.t = start
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.close()
        assert not server.is_running, "the fake server thread outlived its test"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()

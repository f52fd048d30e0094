"""Fixtures for the llm tests: a scripted OpenAI-compatible server on loopback (see llm_fakes)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# Test modules import the fakes as a top-level module; keep that working under any import mode.
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))

from llm_fakes import FakeOpenAIServer  # noqa: E402


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    server = FakeOpenAIServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()

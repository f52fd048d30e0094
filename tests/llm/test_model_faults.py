"""Twelve ways a model server fails, over real HTTP: each ends in an answer or a ModelError that
says what the server did (never a silent empty reply, never a bare library exception)."""

from __future__ import annotations

import time

import pytest
from fault_server import HUGE_BYTES, FaultServer

from kgteam.llm.base import ModelError
from kgteam.llm.openai_model import OpenAIChatModel

MSGS = [{"role": "user", "content": "Say ok."}]
TIMEOUT_S = 1.0

# mode -> the reply text, or the words the error must hold
EXPECTED = {
    "valid": ("answer", "ok"),
    "slow_drip": ("answer", "ok"),  # a slow but complete reply within the timeout is fine
    "429_retry_after": ("answer", "ok"),  # waited as told, then answered
    "wrong_content_type": ("answer", "ok"),  # the JSON is right, the label on it is not
    "hang": ("error", f"did not answer within {TIMEOUT_S:g} s (after 2 attempt(s))"),
    "html_200": ("error", "returned an HTML page titled 'Sign in - Corporate Proxy'"),
    "http_500": ("error", "HTTP 500: CUDA out of memory"),
    "malformed_json": ("error", "returned text that is not JSON"),
    "empty_choices": ("error", "chat completion with no choices"),
    "truncated_body": ("error", "broke before a complete reply"),
    "connection_reset": ("error", "broke before a complete reply"),
    "huge_body": ("error", f"{(HUGE_BYTES + 200) / 1e6:.1f} MB reply, more than"),
}


def client(server: FaultServer) -> OpenAIChatModel:
    return OpenAIChatModel(server.base_url, "fault-model", api_key="k", timeout_s=TIMEOUT_S, max_retries=1,
                           backoff_initial_s=0.01, backoff_max_s=0.05)


@pytest.mark.parametrize("mode", list(EXPECTED))
async def test_each_fault_mode_ends_in_an_answer_or_an_error_that_says_what_happened(mode):
    outcome, expected = EXPECTED[mode]
    with FaultServer(mode) as server:
        started = time.perf_counter()
        if outcome == "answer":
            reply = await client(server).chat(MSGS, role="r")
            assert reply.text == expected
        else:
            with pytest.raises(ModelError) as info:
                await client(server).chat(MSGS, role="r")
            message = str(info.value)
            assert expected in message, message
            assert server.base_url in message  # which server misbehaved
        assert time.perf_counter() - started < 4 * TIMEOUT_S + 1  # bounded: short timeout, one retry


def test_every_mode_of_the_fault_server_is_covered():
    from fault_server import MODES

    assert set(EXPECTED) == set(MODES)


def test_a_client_left_behind_by_an_ended_loop_goes_quietly(caplog):
    """One model used from two ``asyncio.run`` loops (Team.ask, CLI commands): collecting the first
    loop's connection pool must not log a failed close task (a traceback on the user's terminal)."""
    import asyncio
    import gc
    import logging

    caplog.set_level(logging.ERROR, logger="asyncio")
    with FaultServer("valid") as server:
        first = client(server)
        asyncio.run(first.chat(MSGS, role="r"))

        async def later() -> None:
            nonlocal first
            first = None  # the pool of the ended loop is now garbage
            gc.collect()
            await asyncio.sleep(0.05)
            await client(server).chat(MSGS, role="r")

        asyncio.run(later())
        gc.collect()
    assert not [r for r in caplog.records if r.name == "asyncio"], caplog.text

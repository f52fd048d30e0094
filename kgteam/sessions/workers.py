"""Which worker runs a turn, and whether it is still alive: how a dead worker's turn is told
from one still being answered.

SQLite is one machine's file: a worker is ``host:pid:start`` (the process start time from
``/proc`` guards against a reused pid) and is alive while that process exists. PostgreSQL
workers hold an advisory lock instead (see :mod:`kgteam.sessions.postgres_store`), which the
server drops the moment the worker's connection dies.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path


def _start_time(pid: int) -> str | None:
    """The process start time in clock ticks since boot (Linux), or None where /proc is absent."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()
    return fields[19] if len(fields) > 19 else None  # field 22 of the whole line


def local_worker_id() -> str:
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_time(pid) or '-'}"


def local_worker_alive(worker: str | None) -> bool:
    """True while the process named by ``worker`` runs on this host; a turn written by a version
    without worker ids (``None``) or on another host counts as dead."""
    if not worker:
        return False
    host, _, rest = worker.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return True
    now_start = _start_time(pid)
    if now_start is not None:
        return start in ("-", now_start)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

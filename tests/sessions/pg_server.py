"""Start and stop a throwaway PostgreSQL server on 127.0.0.1 (tests and benchmarks).

The Debian server binaries (``initdb``, ``postgres``; ``apt-get install postgresql``, which
``scripts/system-deps.sh`` does) run in a temporary directory that holds the cluster and the
Unix socket, on a free loopback port, with trust authentication for a superuser ``kgteam``.
``initdb`` and ``postgres`` refuse to run as root: as root they run as the ``postgres`` system
user (made by the Debian package), else as ``nobody``, through ``setpriv``, and the temporary
directory is handed to that user. The server is stopped by the PID we started (SIGQUIT, the
"immediate" shutdown: the cluster is thrown away), never by name.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SUPERUSER = "kgteam"


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries, or no driver to talk to one."""


def postgres_bindir() -> Path | None:
    """``$KGTEAM_PG_BIN``, else ``pg_config --bindir``, else the newest /usr/lib/postgresql/*/bin."""
    candidates = []
    if os.environ.get("KGTEAM_PG_BIN"):
        candidates.append(Path(os.environ["KGTEAM_PG_BIN"]))
    if shutil.which("pg_config"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, timeout=10).stdout
            candidates.append(Path(out.strip()))
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                                           key=lambda p: int(p.split("/")[-2]) if p.split("/")[-2].isdigit() else 0,
                                           reverse=True)]
    for bindir in candidates:
        if (bindir / "initdb").exists() and (bindir / "postgres").exists():
            return bindir
    return None


def unavailable_reason() -> str | None:
    """Why PostgreSQL tests cannot run here, or None when they can."""
    if postgres_bindir() is None:
        return ("PostgreSQL server binaries (initdb, postgres) not found: apt-get install postgresql "
                "(scripts/system-deps.sh does), or set KGTEAM_PG_BIN")
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg 3 / psycopg-pool not installed: pip install 'kgteam[postgres]'"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "running as root and setpriv (util-linux) is missing: cannot drop privileges for initdb"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> tuple[list[str], pwd.struct_passwd | None]:
    """The command prefix that drops root (initdb and postgres refuse it), and the user it drops to."""
    if os.geteuid() != 0:
        return [], None
    for name in ("postgres", "nobody"):
        try:
            user = pwd.getpwnam(name)
        except KeyError:
            continue
        return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"], user
    raise PostgresUnavailable("running as root and neither a 'postgres' nor a 'nobody' user exists")


@dataclass
class PostgresServer:
    workdir: Path
    port: int
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _databases: int = 0

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, prefix: str = "kgteam") -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        self._databases += 1
        name = f"{prefix}_{os.getpid()}_{self._databases}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def sql(self, statement: str, database: str = "postgres") -> list[tuple]:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cur = conn.execute(statement)
            return list(cur.fetchall()) if cur.description else []

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                # immediate shutdown: no checkpoint, the cluster is deleted next anyway
                os.kill(self.proc.pid, signal.SIGQUIT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.proc = None
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_postgres(*, durable: bool = False, timeout_s: float = 60.0) -> PostgresServer:
    """initdb + postgres on a free 127.0.0.1 port. ``durable=False`` (tests) turns fsync off;
    ``durable=True`` (benchmarks) keeps PostgreSQL's default commit durability."""
    reason = unavailable_reason()
    if reason:
        raise PostgresUnavailable(reason)
    bindir = postgres_bindir()
    assert bindir is not None
    prefix, user = _run_as()
    workdir = Path(tempfile.mkdtemp(prefix="kgteam-pg-"))
    if user is not None:
        os.chown(workdir, user.pw_uid, user.pw_gid)
    data = workdir / "data"
    log = workdir / "postgres.log"
    server = PostgresServer(workdir=workdir, port=free_port())
    try:
        init = subprocess.run([*prefix, str(bindir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust",
                               "-E", "UTF8", "--no-locale", "--no-sync"],
                              capture_output=True, text=True, timeout=120, cwd=workdir)
        if init.returncode != 0:
            raise PostgresUnavailable(f"initdb failed ({init.returncode}): {(init.stdout + init.stderr)[-2000:]}")
        settings = ["-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={workdir}",
                    "-c", "max_connections=200", "-c", "shared_buffers=32MB"]
        if not durable:
            settings += ["-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off"]
        with open(log, "wb") as out:
            server.proc = subprocess.Popen([*prefix, str(bindir / "postgres"), "-D", str(data), "-p", str(server.port),
                                            *settings], stdout=out, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, cwd=workdir)
        _wait_ready(server, log, timeout_s)
    except BaseException:
        server.stop()
        raise
    return server


def _wait_ready(server: PostgresServer, log: Path, timeout_s: float) -> None:
    import psycopg

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert server.proc is not None
        if server.proc.poll() is not None:
            raise PostgresUnavailable(f"postgres exited with {server.proc.returncode}: {_tail(log)}")
        try:
            with psycopg.connect(server.url(), connect_timeout=2):
                return
        except psycopg.OperationalError:
            time.sleep(0.1)
    raise PostgresUnavailable(f"postgres not ready after {timeout_s:g} s: {_tail(log)}")


def _tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-2000:]
    except OSError:
        return "(no log)"

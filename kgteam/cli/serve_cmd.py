"""``kgteam serve``: the HTTP API and web chat for one team, under uvicorn."""

from __future__ import annotations

import contextlib
import errno
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from kgteam.cli.errors import fail
from kgteam.cli.team_setup import (
    CORPUS_HELP,
    KG_HELP,
    MODEL_HELP,
    TEAM_HELP,
    choose_team,
    ensure_kg,
    kg_choice,
    session_db_path,
    session_settings,
)

SESSIONS_HELP = "session store: a SQLite file (default <home>/sessions.sqlite) or a postgresql:// URL"


def bind_socket(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the team is built so a taken port is said at once."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise fail(f"--host {host}: cannot resolve it ({exc.strerror})", 2) from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise fail(f"port {port} on {host} is already in use (another kgteam serve?): "
                       f"stop that process or choose another port with --port") from None
        if exc.errno == errno.EACCES:
            raise fail(f"no permission to listen on {host}:{port}: use a port above 1023") from None
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def quiet_exit_server(config: Any) -> Any:
    """A uvicorn server that, on SIGINT/SIGTERM, shuts down gracefully and returns (exit 0).

    uvicorn re-raises the signal after its shutdown, so the process would die by it before the
    team (KG, store) is closed; this keeps its graceful shutdown and drops the re-raise.
    """
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return Server(config)


def open_session_store(target: str | None, home: Path | None) -> Any:
    """The store ``--sessions`` names: a SQLite file or ``sqlite:///PATH`` (default
    ``<home>/sessions.sqlite``) or ``postgresql://...`` (several workers share it)."""
    from kgteam.sessions import open_session_store as open_store

    where = target or str(session_db_path(home))
    try:
        return open_store(where)
    except Exception as exc:  # bad URL, no server, not a database, no permission: said plainly
        raise fail(f"--sessions: cannot open the session store: {exc}", 2) from None


def serve(
    team: Annotated[Path | None, typer.Option("--team", "-t", help=TEAM_HELP)] = None,
    host: Annotated[str, typer.Option("--host", help="address to listen on (127.0.0.1: this machine only)")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535, help="TCP port")] = 8000,
    kg_flags: Annotated[list[str] | None, typer.Option("--kg", help=KG_HELP)] = None,
    corpus: Annotated[str | None, typer.Option("--corpus", help=CORPUS_HELP)] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP)] = None,
    sessions: Annotated[str | None, typer.Option("--sessions", help=SESSIONS_HELP)] = None,
    home: Annotated[Path | None, typer.Option("--home", help="kgteam home (default $KGTEAM_HOME or ~/.kgteam)")] = None,
    access_log: Annotated[bool, typer.Option("--access-log", help="log every HTTP request on stderr")] = False,
) -> None:
    """Serve a team over HTTP: sessions, streamed answers (SSE), an OpenAI-compatible API, the web chat.

    API keys come from KGTEAM_API_KEYS (comma-separated); without it the API is open to whoever
    reaches the port. Limits: KGTEAM_RATE_LIMIT, KGTEAM_RATE_BURST, KGTEAM_MAX_REQUEST_BYTES,
    KGTEAM_MAX_QUESTION_CHARS, KGTEAM_MAX_RUNNING (docs/serve.md)."""
    kg = kg_choice(kg_flags)
    import uvicorn

    from kgteam.api import Team
    from kgteam.serve import ServeSettings, TeamService, create_app
    from kgteam.serve.settings import SettingsError
    from kgteam.team_builder import TeamBuildError

    try:
        settings = ServeSettings.from_env()
    except SettingsError as exc:
        raise fail(str(exc), 2) from None
    spec, _ = choose_team(team, model=model, kg=kg, corpus=corpus, home=home)
    sock = bind_socket(host, port)
    try:
        ensure_kg(spec, home, say=lambda m: typer.echo(m, err=True))
        store = open_session_store(sessions, home)
        try:
            served = Team(spec, home=home, sessions=store)
        except TeamBuildError as exc:
            store.close()
            raise fail(f"cannot build team {spec.name!r}: {exc}", 2) from None
        with served:
            service = TeamService(served, settings=settings, home=home,
                                  session_settings=session_settings(spec, team, model, kg, corpus))
            app = create_app(service, settings)
            shown = f"[{host}]" if ":" in host else host
            typer.echo(f"kgteam serve: team {spec.name!r} on KG {service.kg_id!r} at http://{shown}:{port} "
                       f"(API keys: {'on' if settings.api_keys else 'off'}; docs at /docs)", err=True)
            config = uvicorn.Config(app, log_level="info" if access_log else "warning", access_log=access_log,
                                    timeout_graceful_shutdown=5, lifespan="on")
            quiet_exit_server(config).run(sockets=[sock])
    finally:
        sock.close()
    sys.stderr.flush()


def register(app: typer.Typer) -> None:
    """Adds ``serve`` to the ``kgteam`` app."""
    app.command("serve")(serve)

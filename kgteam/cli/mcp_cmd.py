"""``kgteam mcp``: the KG tools and the team's ``ask`` as an MCP server (stdio or streamable HTTP).

The team, KG and model are chosen as ``ask`` and ``serve`` choose them; HTTP binds before the
team is built (a taken port is said at once) and listens on this machine only unless told. The
KG tools need no model: where the local model is not installed, the KG tools are served alone
and ``ask`` says what to install.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from pathlib import Path
from typing import Annotated

import typer

from kgteam.cli.errors import fail
from kgteam.cli.team_setup import KG_HELP, MODEL_HELP, TEAM_HELP, choose_team, ensure_kg, kg_choice

TRANSPORTS = ("stdio", "http")


def mcp(
    transport: Annotated[str, typer.Option(
        "--transport", help="stdio (the client starts kgteam) or http (streamable HTTP at /mcp)")] = "stdio",
    host: Annotated[str, typer.Option("--host", help="address for http (127.0.0.1: this machine only)")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535, help="TCP port for http")] = 8765,
    kg_flags: Annotated[list[str] | None, typer.Option("--kg", help=KG_HELP)] = None,
    team: Annotated[Path | None, typer.Option("--team", "-t", help=TEAM_HELP)] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP)] = None,
    home: Annotated[Path | None, typer.Option("--home", help="kgteam home (default $KGTEAM_HOME or ~/.kgteam)")] = None,
) -> None:
    """Serve the KG tools (search_entities, neighbors, entity_schema, run_sparql, similar_triples) and the
    team's ask over the Model Context Protocol, for agents, desktop clients and IDEs (docs/mcp.md)."""
    if transport not in TRANSPORTS:
        raise fail(f"--transport {transport}: use stdio or http", 2)
    if importlib.util.find_spec("mcp") is None:
        raise fail("`kgteam mcp` needs the MCP SDK: pip install 'kgteam[mcp]'", 2)
    from kgteam.cli.serve_cmd import bind_socket

    spec, _ = choose_team(team, model=model, kg=kg_choice(kg_flags))
    with contextlib.ExitStack() as stack:
        sock = None
        if transport == "http":
            sock = bind_socket(host, port)
            stack.callback(sock.close)
        from kgteam.api import Team
        from kgteam.mcp_server import build_server
        from kgteam.team_builder import TeamBuildError

        ensure_kg(spec, home, say=lambda m: typer.echo(m, err=True))
        try:
            served: object = stack.enter_context(Team(spec, home=home))
        except TeamBuildError as exc:
            why = _local_model_missing(exc)
            if why is None:
                raise fail(f"cannot build team {spec.name!r}: {exc}", 2) from None
            served = _tools_only(spec, home, stack, why)
        try:
            server = build_server(served)
        except ImportError as exc:  # installed, yet it cannot be imported (a broken dependency)
            raise fail(f"{exc} ({exc.__cause__ or 'import failed'})", 2) from None
        kg_name = spec.kg_title
        if sock is None:
            typer.echo(f"kgteam mcp: team {spec.name!r} on KG {kg_name!r} over stdio", err=True)
            with contextlib.suppress(KeyboardInterrupt):
                server.run("stdio")
        else:
            _serve_http(server, sock, host, port, f"team {spec.name!r} on KG {kg_name!r}")
    sys.stderr.flush()


def _local_model_missing(exc: Exception) -> str | None:
    """Why ``ask`` cannot run when the team failed only for want of the local model package (the
    ``local`` extra); None for any other failure, which stops the command as before."""
    from kgteam.llm.local_server import SMOLLM2_PACKAGE, LocalServerError, llama_cpp_available

    if not isinstance(exc.__cause__, LocalServerError):
        return None
    if llama_cpp_available() and importlib.util.find_spec(SMOLLM2_PACKAGE) is not None:
        return None  # installed, yet it would not start: a real fault, said as one
    return str(exc.__cause__)


def _tools_only(spec: object, home: Path | None, stack: contextlib.ExitStack, why: str) -> object:
    """The KG tools without the team: they need no model, so the server starts and lists them."""
    from kgteam.mcp_server import ToolsOnly
    from kgteam.team_builder import TeamBuildError, open_team_kg_tools

    try:
        tools = open_team_kg_tools(spec, stack, home)  # type: ignore[arg-type]
    except TeamBuildError as exc:
        raise fail(f"cannot open the KG of team {spec.name!r}: {exc}", 2) from None  # type: ignore[attr-defined]
    typer.echo(f"kgteam mcp: the team's model cannot start ({why}); serving the KG tools, without ask", err=True)
    return ToolsOnly(spec, tools, f"ask needs the team's model, which cannot start here: {why}")


def _serve_http(server: object, sock: object, host: str, port: int, what: str) -> None:
    import uvicorn

    from kgteam.cli.serve_cmd import quiet_exit_server

    app = server.streamable_http_app(host=host)  # type: ignore[attr-defined]
    shown = f"[{host}]" if ":" in host else host
    loopback = host in ("127.0.0.1", "localhost", "::1")
    typer.echo(f"kgteam mcp: {what} at http://{shown}:{port}/mcp"
               + ("" if loopback else " (reachable from other machines, with no authentication)"), err=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=5, lifespan="on")
    quiet_exit_server(config).run(sockets=[sock])


def register(app: typer.Typer) -> None:
    """Adds ``mcp`` to the ``kgteam`` app."""
    app.command("mcp")(mcp)

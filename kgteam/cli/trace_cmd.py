"""``kgteam trace ID``: print or export a session's whole run (messages, tool calls, LLM calls)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from kgteam.cli.team_setup import DB_HELP, open_store, session_db_path, store_exists


def trace(
    session_id: Annotated[str | None, typer.Argument(help="session id (omit with --list)")] = None,
    jsonl: Annotated[Path | None, typer.Option("--jsonl", help="export the trace as JSON lines to this file")] = None,
    list_sessions: Annotated[bool, typer.Option("--list", "-l", help="list stored sessions")] = False,
    home: Annotated[Path | None, typer.Option("--home", help="kgteam home (default $KGTEAM_HOME or ~/.kgteam)")] = None,
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
) -> None:
    """Print a session's trace, or export it as JSONL with --jsonl FILE."""
    from kgteam.agents.trace import export_jsonl, render_text
    from kgteam.sessions.postgres_store import redact

    path = db or str(session_db_path(home))
    if not store_exists(path):
        typer.echo(f"no session database at {path}", err=True)
        raise typer.Exit(1)
    with contextlib.closing(open_store(path)) as store:
        if list_sessions or session_id is None:
            sessions = store.list_sessions()
            if not sessions:
                typer.echo("no sessions yet")
                return
            table = Table(title=f"sessions in {redact(path)}")
            for col in ("session", "updated", "questions", "interrupted", "title"):
                table.add_column(col)
            for s in sessions:
                table.add_row(s.session_id, s.updated_at[:19], str(s.turns), str(s.incomplete_turns or ""),
                              Text(s.title or ""))  # titles are questions: plain text, not markup
            Console().print(table)
            return
        if not store.turns(session_id):
            known = ", ".join(s.session_id for s in store.list_sessions()[:10])
            typer.echo(f"unknown session {session_id!r}; recent sessions: {known or '(none)'}", err=True)
            raise typer.Exit(1)
        if jsonl is not None:
            try:
                count = export_jsonl(store, session_id, jsonl)
            except OSError as exc:  # a folder, a missing parent, no permission
                typer.echo(f"cannot write {jsonl}: {exc.strerror or exc}", err=True)
                raise typer.Exit(2) from None
            typer.echo(json.dumps({"session_id": session_id, "file": str(jsonl), "records": count}))
            return
        typer.echo(render_text(store, session_id))


def register(app: typer.Typer) -> None:
    """Adds ``trace`` to the ``kgteam`` app."""
    app.command("trace")(trace)

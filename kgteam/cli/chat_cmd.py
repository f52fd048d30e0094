"""``kgteam chat``: a multi-turn terminal session that shows the team working, message by message."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from kgteam.cli.render import RoleColors, budget_table, cost_text, event_line, print_answer
from kgteam.cli.team_setup import (
    CORPUS_HELP,
    DB_HELP,
    KG_HELP,
    MODEL_HELP,
    NEW_SESSION_HELP,
    TEAM_HELP,
    check_session_ids,
    choose_team,
    ensure_kg,
    kg_choice,
    new_session_id,
    run_question,
    session_choices,
    session_corpus,
    session_settings,
    sessions_url,
    team_runtime,
)
from kgteam.config.resolve import resolve_team
from kgteam.protocols.envelope import Envelope

HELP = ("commands: /trace (this session's full trace) · /budget (limits and last question's use) · "
        "/new (fresh session) · /quit · Ctrl-C cancels a running question")


def _show_history(console: Console, store: Any, session_id: str) -> int:
    turns = store.turns(session_id)
    if not turns:
        console.print(f"[yellow]session {session_id} has no questions yet; starting it[/]")
        return 0
    console.print(f"[bold]resuming session {session_id}[/] ({len(turns)} earlier question(s))")
    for t in turns:
        # Stored questions and answers are user/LLM text: never interpret them as rich markup.
        console.print(Text.assemble("  ", ("you", "bold white"), " ", t.question))
        if t.complete and t.answer is not None:
            style = "green" if t.answer.status == "answered" else "yellow"
            console.print(Text.assemble("  ", ("team", style), " ", t.answer.text, "  ",
                                        (f"({t.answer.status}; {cost_text(t.answer)})", "dim")))
        else:
            console.print("  [red]team (interrupted before answering; ask again)[/]")
    return len(turns)


def chat(
    team: Annotated[Path | None, typer.Option("--team", "-t", help=TEAM_HELP)] = None,
    session: Annotated[str | None, typer.Option("--session", "-s", help="resume this session (an unknown id is "
                                                                       "an error that lists the recent ones)")] = None,
    new_session: Annotated[str | None, typer.Option("--new-session", help=NEW_SESSION_HELP)] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP)] = None,
    kg_flags: Annotated[list[str] | None, typer.Option("--kg", help=KG_HELP)] = None,
    corpus: Annotated[str | None, typer.Option("--corpus", help=CORPUS_HELP)] = None,
    home: Annotated[Path | None, typer.Option("--home", help="kgteam home (default $KGTEAM_HOME or ~/.kgteam)")] = None,
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="do not stream the roles' messages")] = False,
) -> None:
    """Talk to a team: streams each role's messages, shows evidence and cost per answer."""
    kg = kg_choice(kg_flags)
    console = Console(highlight=False)
    check_session_ids(sessions_url(db, team, home), session, new_session)
    corpus = session_corpus(sessions_url(db, team, home), session, corpus)
    team, model, kg = session_choices(sessions_url(db, team, home), session, team, model, kg)
    spec, _ = choose_team(team, model=model, kg=kg, corpus=corpus, home=home)
    settings = session_settings(spec, team, model, kg, corpus)
    ensure_kg(spec, home, say=lambda m: console.print(Text(m, style="dim")))
    roles = resolve_team(spec).roles
    has_ctx = any(r.role == "contextualizer" for r in roles.values())
    with team_runtime(spec, home=home, db=db) as (runner, store), asyncio.Runner() as loop:
        console.print(f"[bold]kgteam chat[/] · team [bold]{escape(spec.name)}[/] ({escape(', '.join(roles))}) · kg "
                      f"{escape(spec.kg_title)}")
        console.print("[dim]" + ("follow-up questions are rewritten by the contextualizer" if has_ctx else
                                 "this team has no contextualizer: ask standalone questions") + "[/]")
        console.print(f"[dim]{HELP}[/]")
        session_id = session or new_session or new_session_id()
        if session:
            _show_history(console, store, session_id)
        else:
            console.print(f"[dim]session {session_id} (resume with --session {session_id})[/]")
        last: Any = None
        asked: str | None = session_id if session and store.turns(session_id) else None
        interactive = sys.stdin.isatty()
        colors = RoleColors()
        while True:
            try:
                line = console.input("[bold white]you>[/] ")
                if not interactive:  # piped input: show what was read, as a terminal would
                    console.print(line.rstrip("\n"), markup=False, highlight=False)
            except EOFError:
                console.print()
                break
            except KeyboardInterrupt:
                console.print("\n[dim](type /quit to leave)[/]")
                continue
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                command = text.split()[0].lower()
                if command in ("/quit", "/exit", "/q"):
                    break
                if command == "/new":
                    session_id = new_session_id()
                    last = None
                    console.print(f"[dim]new session {session_id}[/]")
                elif command == "/budget":
                    console.print(budget_table(runner.budgets, last))
                elif command == "/trace":
                    from kgteam.agents.trace import render_text

                    console.print(render_text(store, session_id), markup=False, highlight=False)
                else:
                    console.print(f"[dim]{HELP}[/]")
                continue
            def on_event(env: Envelope) -> None:
                if not quiet and env.kind != "answer" and env.sender != "user":
                    console.print(event_line(env, colors))

            store.save_settings(session_id, settings)  # the first question fixes the session's KG and team
            asked = session_id
            answer = run_question(loop, runner, text, session_id, on_event)
            if answer is None:
                console.print("[yellow]run cancelled; the session goes on[/]")
                continue
            last = runner.last_run.used if runner.last_run is not None else None  # the supervisor's own count
            print_answer(console, answer)
        # the session with questions in it (after /new with nothing asked, the one before); its
        # team, KG and model are restored from the session itself
        resumable = session_id if store.turns(session_id) else asked
        if resumable:
            console.print(Text(f"bye — resume with: kgteam chat --session {resumable}", style="dim"))
        else:
            console.print(Text("bye", style="dim"))


def register(app: typer.Typer) -> None:
    """Adds ``chat`` to the ``kgteam`` app."""
    app.command("chat")(chat)

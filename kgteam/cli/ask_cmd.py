"""``kgteam ask "question"``: one question, answered with evidence, cost and stop reason."""

from __future__ import annotations

import asyncio
import contextlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from kgteam.cli.errors import fail
from kgteam.cli.render import RoleColors, answer_json, event_line, print_answer
from kgteam.cli.team_setup import (
    CORPUS_HELP,
    DB_HELP,
    KG_HELP,
    LANG_HELP,
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
from kgteam.protocols.envelope import Envelope


def ask(
    question: Annotated[str, typer.Argument(help="the question, in natural language")],
    team: Annotated[Path | None, typer.Option("--team", "-t", help=TEAM_HELP)] = None,
    session: Annotated[str | None, typer.Option("--session", "-s", help="add the question to this session (an "
                                                                       "unknown id is an error)")] = None,
    new_session: Annotated[str | None, typer.Option("--new-session", help=NEW_SESSION_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the answer as JSON (evidence, cost, stop reason)")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="show each role's messages as they happen")] = False,
    model: Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP)] = None,
    kg_flags: Annotated[list[str] | None, typer.Option("--kg", help=KG_HELP)] = None,
    corpus: Annotated[str | None, typer.Option("--corpus", help=CORPUS_HELP)] = None,
    lang: Annotated[str | None, typer.Option("--lang", help=LANG_HELP)] = None,
    home: Annotated[Path | None, typer.Option("--home", help="kgteam home (default $KGTEAM_HOME or ~/.kgteam)")] = None,
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
    proposals: Annotated[Path | None, typer.Option(
        "--proposals", help="append the triples the team read from documents to this file (JSON lines "
                            "stamped with the question and UTC time), for review and `kgteam kg add`")] = None,
) -> None:
    """Answer one question with a team; prints the answer, its evidence, cost and why the run stopped."""
    kg = kg_choice(kg_flags)
    console = Console(highlight=False, stderr=as_json)
    check_session_ids(sessions_url(db, team, home), session, new_session)
    corpus = session_corpus(sessions_url(db, team, home), session, corpus)
    team, model, kg = session_choices(sessions_url(db, team, home), session, team, model, kg)
    spec, _ = choose_team(team, model=model, kg=kg, corpus=corpus, home=home, lang=lang)
    ensure_kg(spec, home, say=lambda m: console.print(Text(m, style="dim")))
    session_id = session or new_session or new_session_id()
    colors = RoleColors()

    # on a terminal, a spinner with the latest role message (a local model takes a minute);
    # nothing when piped, every message with --verbose
    progress = Console(stderr=True, highlight=False)
    spinning = not verbose and progress.is_terminal
    status = progress.status("starting the team", spinner="dots") if spinning else contextlib.nullcontext()

    def on_event(env: Envelope) -> None:
        if verbose:
            console.print(event_line(env, colors))
        elif spinning:
            status.update(Text.assemble("asking the team:", event_line(env, colors)))  # type: ignore[union-attr]

    with status, team_runtime(spec, home=home, db=db) as (runner, store), asyncio.Runner() as loop:
        store.save_settings(session_id, session_settings(spec, team, model, kg, corpus))
        if spinning:
            status.update("asking the team")  # type: ignore[union-attr]
        answer = run_question(loop, runner, question, session_id, on_event)
    if answer is None:
        console.print("[yellow]cancelled[/]")
        raise typer.Exit(130)
    if proposals is not None:
        if answer.proposals:
            append_proposals(proposals, answer.proposals, question)
            console.print(Text(f"{len(answer.proposals)} proposed triple(s) appended to {proposals}: review them, "
                               f"then `kgteam kg add {spec.kg.name or 'KG'} {proposals}`", style="dim"))
        else:
            console.print(Text(f"no proposed triples; {proposals} left as it was", style="dim"))
    if as_json:
        typer.echo(json.dumps(answer_json(answer, session_id=session_id, question=question), indent=2))
    else:
        console.print(Text(f"team {spec.name} · session {session_id}", style="dim"))
        print_answer(console, answer)
    if answer.stopped_by == "cancelled":  # Ctrl-C: the partial answer is shown, the exit code says so
        raise typer.Exit(130)
    if answer.status == "error":
        raise typer.Exit(1)


def append_proposals(path: Path, proposed: list, question: str) -> None:
    """One JSON object per line, appended so earlier asks' proposals stay for review: the shape
    ``kgteam kg add`` reads back, stamped with the question and the UTC time it was asked."""
    asked_at = datetime.now(UTC).isoformat(timespec="seconds")
    try:
        with open(path, "a", encoding="utf-8") as fh:
            for p in proposed:
                line = {**p.model_dump(mode="json"), "question": question, "asked_at": asked_at}
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise fail(f"cannot write {path}: {exc}") from None


def register(app: typer.Typer) -> None:
    """Adds ``ask`` to the ``kgteam`` app."""
    app.command("ask")(ask)

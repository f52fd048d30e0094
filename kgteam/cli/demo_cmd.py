"""``kgteam demo``: the whole path on the embedded defaults — demo KG, local model, Triad, evidence."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from kgteam.cli.render import RoleColors, event_line, print_answer
from kgteam.cli.team_setup import (
    DB_HELP,
    MODEL_HELP,
    choose_team,
    ensure_kg,
    new_session_id,
    run_question,
    session_settings,
    team_runtime,
)
from kgteam.config.defaults import DEMO_QUESTIONS
from kgteam.protocols.envelope import Envelope

REAL_MODEL_HINT = """\
The embedded model is SmolLM2-135M: tiny. It proves the pipeline runs end to end on a laptop, \
but on its own it picks badly: most of the work above was done by retrieval and deterministic \
scoring, and answers can be wrong. For real answers point kgteam at a capable model:

  export KGTEAM_LLM_BASE_URL=https://api.openai.com/v1
  export KGTEAM_LLM_MODEL=gpt-4o-mini
  export KGTEAM_LLM_API_KEY=...

(vLLM, Ollama, llama.cpp and LM Studio work the same way), then run kgteam demo, kgteam chat \
or kgteam ask "...". Or write a team file (see examples/teams/triad.yaml and docs/teams.md) \
and pass --team FILE."""


def demo(
    questions: Annotated[int, typer.Option("--questions", "-n", min=1, max=len(DEMO_QUESTIONS), help="how many sample questions to ask")] = len(DEMO_QUESTIONS),
    model: Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP)] = None,
    home: Annotated[Path | None, typer.Option("--home", help="kgteam home (default $KGTEAM_HOME or ~/.kgteam)")] = None,
    db: Annotated[str | None, typer.Option("--db", help=DB_HELP)] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="do not stream the roles' messages")] = False,
) -> None:
    """Install the demo KG if needed, start the local model (unless an API is configured), answer samples."""
    console = Console(highlight=False)
    spec, _ = choose_team(None, model=model)
    uses_api = spec.model.provider == "openai"
    console.print(Panel.fit(
        "[bold]kgteam demo[/]: the Triad team (generalist → decision maker → advisor) answers "
        f"{questions} MetaQA movie questions over the demo KG, showing each role's messages, the "
        "evidence triples and SPARQL behind each answer, and what it cost.", border_style="cyan"))
    ensure_kg(spec, home, say=lambda m: console.print(Text(m, style="dim")))
    if uses_api:
        console.print(Text(f"model: {spec.model.model or '(KGTEAM_LLM_MODEL)'} at "
                           f"{spec.model.base_url or os.environ.get('KGTEAM_LLM_BASE_URL') or 'OpenAI'}"))
    elif spec.model.provider == "local":
        console.print("model: starting the embedded SmolLM2-135M-Instruct (llama.cpp server on 127.0.0.1) …")
    elif spec.model.provider == "none":
        console.print("model: none — the deterministic scorers decide alone (no model server)")
    else:
        console.print(f"model: {spec.model.provider}")
    session_id = new_session_id()
    colors = RoleColors()
    hits = failed = 0
    first_error = ""
    started = time.perf_counter()
    try:
        with team_runtime(spec, home=home, db=db) as (runner, store), asyncio.Runner() as loop:
            store.save_settings(session_id, session_settings(spec, None, model, None))  # whose session it is
            for i, (question, expected) in enumerate(DEMO_QUESTIONS[:questions], start=1):
                console.rule(f"[bold]{i}/{questions}[/] {question}")

                def on_event(env: Envelope) -> None:
                    if not quiet and env.kind != "answer" and env.sender != "user":
                        console.print(event_line(env, colors))

                answer = run_question(loop, runner, question, session_id, on_event)
                if answer is None or answer.stopped_by == "cancelled":  # Ctrl-C ends the whole demo
                    raise KeyboardInterrupt
                print_answer(console, answer)
                if answer.status == "error":
                    failed += 1
                    first_error = first_error or (answer.error or answer.text)
                got = {v.label.casefold() for v in answer.values}
                ok = bool(got) and got == {e.casefold() for e in expected}
                hits += ok
                console.print(f"  expected (MetaQA gold): {', '.join(expected)} → "
                              + ("[green]match[/]" if ok else "[yellow]differs[/]"))
    except KeyboardInterrupt:
        console.print("\n[yellow]demo interrupted; the local model server was stopped[/]")
        raise typer.Exit(130) from None
    console.rule()
    console.print(f"{hits}/{questions} answers match the gold answers · {time.perf_counter() - started:.1f}s total"
                  f" · trace: kgteam trace {session_id}")
    if failed == questions:  # nothing was answered (e.g. the model server is unreachable): a failed run
        console.print(Text(f"every question failed; the first: {first_error}", style="red"))
        raise typer.Exit(1)
    if spec.model.provider == "local":
        console.print(Panel(REAL_MODEL_HINT, title="about the model", border_style="yellow"))


def register(app: typer.Typer) -> None:
    """Adds ``demo`` to the ``kgteam`` app."""
    app.command("demo")(demo)

"""What ask, chat and demo share: choosing the team, overriding model/KG from flags, the session DB."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer

from kgteam.config.defaults import DEMO_KG, default_team_spec, with_overrides
from kgteam.config.loader import TeamConfigError, load_team
from kgteam.config.schema import ModelSpec, TeamSpec
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer

TEAM_HELP = "team YAML file (default: the built-in Triad team on the demo MetaQA KG)"
MODEL_HELP = ("override the team's model: 'none' (deterministic scorers only, no model server), "
              "'local' (embedded SmolLM2), 'openai:MODEL' or 'openai:MODEL@BASE_URL', 'scripted:FILE'")
KG_HELP = ("override the team's KG: an installed KG name or a KG folder; repeat it to read several KGs at once "
           "(--kg mykg --kg metaqa)")


def kg_choice(flags: list[str] | None) -> str | list[str] | None:
    """Repeated ``--kg`` as one KG (a string, as sessions have always recorded it) or several (a list)."""
    if not flags:
        return None
    return flags[0] if len(flags) == 1 else list(flags)
CORPUS_HELP = ("the document corpus the team's web search reads, instead of the team file's: one made with "
               "`kgteam corpus add`, or the built-in movie-notes")
LANG_HELP = "label language shown first, e.g. de or pt-br (default: untagged and English names, then any)"


def kg_home_dir(home: Path | None = None) -> Path:
    if home is not None:
        return home
    from kgteam.tools.kg import kg_home

    return kg_home()


def session_db_path(home: Path | None = None) -> Path:
    """Sessions live beside the KGs: ``<kg_home>/sessions.sqlite``."""
    return kg_home_dir(home) / "sessions.sqlite"


DB_HELP = ("where sessions are kept: a file, sqlite:///PATH or postgresql://USER@HOST:PORT/DB (default: the "
           "team file's sessions:, else <home>/sessions.sqlite)")


def sessions_url(db: str | None, team: Path | None, home: Path | None) -> str:
    """``--db``, else the team file's ``sessions:``, else ``<home>/sessions.sqlite``."""
    if db:
        return db
    if team is not None:
        try:
            spec = load_team(team)
        except TeamConfigError:
            spec = None  # choose_team reports the file's problems
        if spec is not None and spec.sessions:
            return spec.sessions
    return str(session_db_path(home))


def store_exists(url: str) -> bool:
    """False for a SQLite file not created yet (reading it must not create it); a server is asked."""
    from kgteam.sessions.urls import scheme_of, sqlite_path

    if scheme_of(url) not in (None, "sqlite"):
        return True
    path = sqlite_path(url)
    return path == ":memory:" or Path(path).expanduser().exists()


def open_store(url: str) -> Any:
    """The session store at ``url``; a bad URL or an unreachable server exits with code 2."""
    from kgteam.sessions import SessionStoreError, open_session_store

    try:
        return open_session_store(url)
    except SessionStoreError as exc:
        typer.echo(f"session store: {exc}", err=True)
        raise typer.Exit(2) from None


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


def parse_model_flag(flag: str) -> ModelSpec:
    from kgteam.config.defaults import model_from_flag

    try:
        return model_from_flag(flag)
    except ValueError:
        raise typer.BadParameter(f"{flag!r}: expected {MODEL_HELP}", param_hint="--model") from None


def choose_team(team: Path | None, *, model: str | None = None, kg: str | list[str] | None = None,
                corpus: str | None = None, home: Path | None = None, lang: str | None = None) -> tuple[TeamSpec, bool]:
    """The spec to run and whether it is the built-in default. Config errors, an unknown
    ``corpus`` and a bad ``lang`` tag exit with code 2."""
    if team is None:
        spec, is_default = default_team_spec(), True
    else:
        try:
            spec = load_team(team)
        except TeamConfigError as exc:
            typer.echo(f"{team}: invalid team file ({len(exc.issues)} error(s)):", err=True)
            for issue in exc.issues:
                typer.echo(f"  {issue}", err=True)
            raise typer.Exit(2) from None
        is_default = False
    if corpus is not None:
        check_corpus(corpus, home)
    try:
        spec = with_overrides(spec, kg=kg or None, model=parse_model_flag(model) if model else None,
                              corpus=corpus or None)
    except ValueError as exc:  # e.g. the same KG named twice
        typer.echo(f"--kg: {exc}", err=True)
        raise typer.Exit(2) from None
    if lang is not None:
        try:
            spec = with_lang(spec, lang)
        except ValueError as exc:
            typer.echo(f"--lang: {exc}", err=True)
            raise typer.Exit(2) from None
    return spec, is_default


def with_lang(spec: TeamSpec, lang: str) -> TeamSpec:
    """The spec with every KG's label language set to ``lang`` (checked)."""
    from kgteam.tools.naming import check_lang

    tag = check_lang(lang)
    update: dict[str, Any] = {"kg": spec.kg.model_copy(update={"lang": tag})}
    if spec.kgs:
        update["kgs"] = [k.model_copy(update={"lang": tag}) for k in spec.kgs]
    return spec.model_copy(update=update)


def check_corpus(name: str, home: Path | None) -> None:
    """``--corpus NAME`` must name a corpus of the home or a built-in one; else exit 2 listing them."""
    from kgteam.tools.web.builtin import known_corpora

    known = known_corpora(home)
    if name not in known:
        from kgteam.tools.web import corpora_dir

        typer.echo(f"--corpus: no corpus {name!r}; known corpora: {', '.join(known)} (in {corpora_dir(home)} "
                   f"or built in); make one with `kgteam corpus add {name} FILES...`", err=True)
        raise typer.Exit(2)


def kg_identity(spec: TeamSpec) -> str:
    """Which KG a spec runs on, as a session records it."""
    return spec.kg_id


NEW_SESSION_HELP = "start a new session with this id (for scripts); an id already in use is refused"
RECENT_SHOWN = 5


def _known(store: Any, session: str) -> bool:
    return store.session(session) is not None or store.settings(session) is not None


def recent_sessions(store: Any, limit: int = RECENT_SHOWN) -> list[str]:
    """``ID  (team T, KG K) "first question"`` for the newest sessions, newest first."""
    lines = []
    for info in store.list_sessions()[:limit]:
        saved = store.settings(info.session_id) or {}
        where = f"team {saved.get('team_name') or '?'}, KG {saved.get('kg_id') or '?'}"
        first = f" {info.title!r}" if info.title else ""
        lines.append(f"{info.session_id}  ({where}){first}")
    return lines


def check_session_ids(db: str, session: str | None, new_session: str | None) -> None:
    """``--session`` must name a session in the store and ``--new-session`` one that is not there
    (exit 2, no traceback): a typo must not silently start an empty session."""
    if session is not None and new_session is not None:
        typer.echo("give either --session ID (resume) or --new-session ID (start), not both", err=True)
        raise typer.Exit(2)
    wanted = session or new_session
    if wanted is None:
        return
    store = open_store(db) if store_exists(db) else None
    try:
        known = store is not None and _known(store, wanted)
        recent = recent_sessions(store) if store is not None and session is not None and not known else []
    finally:
        if store is not None:
            store.close()
    if new_session is not None and known:
        typer.echo(f"session {new_session} exists already: resume it with --session {new_session}", err=True)
        raise typer.Exit(2)
    if session is not None and not known:
        if not recent:
            typer.echo(f"no session {session!r}: there are no sessions in {db} yet. Leave out --session to "
                       f"start one.", err=True)
        else:
            typer.echo(f"no session {session!r}. The most recent sessions, newest first:", err=True)
            for line in recent:
                typer.echo(f"  {line}", err=True)
            typer.echo("Resume one with --session ID, or leave out --session to start a new session.", err=True)
        raise typer.Exit(2)


def session_choices(db: str, session: str | None, team: Path | None, model: str | None, kg: str | list[str] | None
                    ) -> tuple[Path | None, str | None, str | list[str] | None]:
    """The team, model and KG flags to run ``session`` with: what it was started with, unless the
    command line says otherwise. Another team or KG than the session's is refused (exit 2): its
    follow-up questions would be answered from another graph. A new session takes the flags as given."""
    if session is None or not store_exists(db):
        return team, model, kg
    store = open_store(db)
    try:
        saved = store.settings(session)
    finally:
        store.close()
    if saved is None:
        return team, model, kg
    if kg is not None:
        spec, _ = choose_team(Path(saved["team"]) if saved.get("team") else None, kg=kg)
        if kg_identity(spec) != saved.get("kg_id"):
            shown = " --kg ".join(kg) if isinstance(kg, list) else kg
            typer.echo(f"session {session} runs on KG {saved.get('kg_id')!r}; resuming it with --kg {shown} would "
                       f"answer its follow-ups from another graph. Resume it without --kg, or start a new "
                       f"session (leave out --session).", err=True)
            raise typer.Exit(2)
    if team is not None and str(team.resolve()) != saved.get("team"):
        typer.echo(f"session {session} was started with team {saved.get('team') or 'the built-in team'}; resume "
                   f"it without --team, or start a new session (leave out --session).", err=True)
        raise typer.Exit(2)
    stored_team = Path(saved["team"]) if saved.get("team") else None
    return stored_team, model or saved.get("model"), kg or saved.get("kg")


def session_settings(spec: TeamSpec, team: Path | None, model: str | None, kg: str | list[str] | None,
                     corpus: str | None = None) -> dict[str, Any]:
    """What a session records about itself: the flags to rebuild its team, and the KG it runs on."""
    return {"team": str(team.resolve()) if team else None, "model": model, "kg": kg, "kg_id": kg_identity(spec),
            "team_name": spec.name, **({"corpus": corpus} if corpus else {})}


def session_corpus(db: str, session: str | None, corpus: str | None) -> str | None:
    """``--corpus``, else the one a resumed session was started with (its follow-ups read the same documents)."""
    if corpus is not None or session is None or not store_exists(db):
        return corpus
    store = open_store(db)
    try:
        saved = store.settings(session)
    finally:
        store.close()
    return (saved or {}).get("corpus")


def ensure_kg(spec: TeamSpec, home: Path | None, *, say: Callable[[str], None]) -> None:
    """The demo KG is installed on first use; any other KG must exist already."""
    if not any(kg.backend == "oxigraph" and kg.name == DEMO_KG for kg in spec.kg_specs):
        return
    from kgteam.tools.kg import ensure_demo_kg, list_kgs

    if any(m.name == DEMO_KG for m in list_kgs(home)):
        return
    say(f"installing the demo KG '{DEMO_KG}' into {kg_home_dir(home) / 'kgs'} (one time) …")
    ensure_demo_kg(home=home, progress=True).close()


@contextlib.contextmanager
def team_runtime(spec: TeamSpec, *, home: Path | None, db: str | None) -> Iterator[tuple[Any, Any]]:
    """A runner wired to the session store (``--db``, else the team's ``sessions:``, else
    ``<home>/sessions.sqlite``); everything is released on exit (also on Ctrl-C)."""
    from kgteam.team_builder import TeamBuildError, build_team

    with contextlib.ExitStack() as stack:
        store = open_store(db or spec.sessions or str(session_db_path(home)))
        stack.callback(store.close)
        try:
            runner = build_team(spec, stack=stack, home=home, session_store=store)
        except TeamBuildError as exc:
            typer.echo(f"cannot build team {spec.name!r}: {exc}", err=True)
            raise typer.Exit(2) from None
        yield runner, store


def run_question(loop: asyncio.Runner, runner: Any, question: str, session_id: str,
                 on_event: Callable[[Envelope], None] | None = None) -> Answer | None:
    """Ask one question. Ctrl-C cancels this run only: the first press asks the team to stop
    (it answers with ``stopped_by="cancelled"``), a second press abandons the run (``None``)."""

    async def _ask() -> Answer:
        cancel = asyncio.Event()
        task = asyncio.current_task()
        aloop = asyncio.get_running_loop()
        presses = 0

        def on_sigint() -> None:
            nonlocal presses
            presses += 1
            cancel.set()
            if presses > 1 and task is not None:
                task.cancel()

        installed = False
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            aloop.add_signal_handler(signal.SIGINT, on_sigint)
            installed = True
        try:
            return await runner.ask(question, session_id=session_id, on_event=on_event, cancel=cancel)
        finally:
            if installed:
                aloop.remove_signal_handler(signal.SIGINT)

    try:
        return loop.run(_ask())
    except (KeyboardInterrupt, asyncio.CancelledError):
        return None

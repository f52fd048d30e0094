"""kgteam from Python: a team in three lines, quiet by default.

    from kgteam import Team

    with Team.from_yaml("my-team.yaml") as team:     # or Team.default(kg="mykg", model="none")
        answer = team.ask("who directed Kismet")     # an Answer: text, values, evidence, cost
        chat = team.session()                        # follow-ups share a history
        chat.ask("what else did he direct?")

``aask`` and ``stream`` are the async forms (for notebooks with a running event loop and for
apps); ``stream`` yields every role message as it happens, the answer last.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from kgteam.config.defaults import with_overrides
from kgteam.config.schema import ModelSpec, TeamSpec
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer


def _quiet_logs() -> None:
    """Warnings only, on stderr, unless the program configured structlog itself."""
    import structlog

    if not structlog.is_configured():
        from kgteam.agents.logging import configure_logging

        configure_logging("WARNING", json=False)


class Team:
    """A built team: its model server, KG and session store stay open until :meth:`close`."""

    def __init__(self, spec: TeamSpec, *, home: str | Path | None = None, sessions: str | Path | Any = None) -> None:
        """``sessions``: where sessions are kept, a path or URL (``sqlite:///PATH``,
        ``postgresql://...``) or an open session store (closed with the team); default: the team
        file's ``sessions:``, else in memory."""
        from kgteam.sessions import open_session_store
        from kgteam.team_builder import build_team

        _quiet_logs()
        self.spec = spec
        self._stack = contextlib.ExitStack()
        home_path = Path(home).expanduser() if home is not None else None
        try:
            sessions = sessions if sessions is not None else spec.sessions
            if sessions is None or hasattr(sessions, "begin_turn"):
                self._store = sessions
            else:
                self._store = open_session_store(sessions)
            if self._store is not None:
                self._stack.callback(self._store.close)
            self._runner = build_team(spec, stack=self._stack, home=home_path, session_store=self._store)
        except BaseException:
            self._stack.close()
            raise

    # -- building ------------------------------------------------------------------------------
    @classmethod
    def from_yaml(cls, path: str | Path, *, kg: str | list[str] | None = None, model: str | ModelSpec | None = None,
                  home: str | Path | None = None, sessions: str | Path | None = None) -> Team:
        """The team of a YAML file (``TeamConfigError`` with file:line issues when it is invalid);
        ``kg`` (a KG name or folder, or a list of them to read several KGs at once) and ``model``
        (``"none"``, ``"openai:gpt-4o-mini"`` ...) override it."""
        from kgteam.config import load_team

        return cls(with_overrides(load_team(path), kg=kg, model=model), home=home, sessions=sessions)

    @classmethod
    def default(cls, *, kg: str | list[str] | None = None, model: str | ModelSpec | None = None,
                home: str | Path | None = None, sessions: str | Path | None = None) -> Team:
        """The built-in Triad team (on the demo KG unless ``kg`` is given: a KG, or a list of KGs read at once)."""
        from kgteam.config.defaults import default_team_spec

        return cls(with_overrides(default_team_spec(), kg=kg, model=model), home=home, sessions=sessions)

    # -- asking --------------------------------------------------------------------------------
    def ask(self, question: str, *, session: str | None = None) -> Answer:
        """Answer one question (blocking). In a running event loop (Jupyter), use ``await aask``."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._ask_once(question, session))
        raise RuntimeError("Team.ask() blocks, and an event loop is running here (Jupyter?): "
                           "use `await team.aask(question)` instead")

    async def _ask_once(self, question: str, session: str | None) -> Answer:
        """One question on a loop of its own: the model clients' connections are closed before the
        loop ends (left open, the garbage collector would close them on a dead loop, noisily)."""
        try:
            return await self.aask(question, session=session)
        finally:
            for model in {id(m): m for m in (self._runner.model, *self._runner.role_models.values())}.values():
                close = getattr(model, "aclose", None)
                if close is not None:
                    with contextlib.suppress(Exception):
                        await close()

    async def aask(self, question: str, *, session: str | None = None,
                   on_event: Callable[[Envelope], Any] | None = None,
                   on_trace: Callable[[str, dict[str, Any]], None] | None = None,
                   cancel: asyncio.Event | None = None, turn: int | None = None) -> Answer:
        """``on_event`` hears every message as it is persisted, ``on_trace`` every tool and LLM call;
        setting ``cancel`` stops the run (its answer then says ``stopped_by="cancelled"``); ``turn``
        is one already begun in the session store. Questions of different sessions may run at once."""
        return await self._runner.ask(question, session_id=session, on_event=on_event, on_trace=on_trace,
                                      cancel=cancel, turn=turn)

    async def stream(self, question: str, *, session: str | None = None,
                     cancel: asyncio.Event | None = None) -> AsyncIterator[Envelope]:
        """Every message of the run as it happens (``env.kind``, ``env.sender``, ``env.payload``),
        the answer last; leaving the loop early (or setting ``cancel``) cancels the run."""
        async for env in self._runner.stream(question, session_id=session, cancel=cancel):
            yield env

    # -- what a server needs -------------------------------------------------------------------
    @property
    def store(self) -> Any:
        """The session store (None when the team keeps sessions in memory only)."""
        return self._store

    @property
    def runner(self) -> Any:
        """The built ``TeamRunner``: its resolved budgets and routes (read them; do not change them)."""
        return self._runner

    def session(self, session_id: str | None = None) -> Session:
        """A conversation: follow-up questions see the earlier ones (with a contextualizer role)."""
        return Session(self, session_id or uuid.uuid4().hex[:12])

    # -- lifetime ------------------------------------------------------------------------------
    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> Team:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Session:
    """Questions asked in one conversation."""

    def __init__(self, team: Team, session_id: str) -> None:
        self.team = team
        self.id = session_id

    def ask(self, question: str) -> Answer:
        return self.team.ask(question, session=self.id)

    async def aask(self, question: str) -> Answer:
        return await self.team.aask(question, session=self.id)

    def stream(self, question: str) -> AsyncIterator[Envelope]:
        return self.team.stream(question, session=self.id)

    def history(self) -> list[tuple[str, Answer]]:
        return self.team._runner.history(self.id)


__all__ = ["Session", "Team"]

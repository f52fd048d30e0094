"""The served team and its sessions, as the HTTP routes see them (no HTTP in here).

Sessions belong to the API key that created it: the owner (a hash of the key) is recorded with
the session's settings (team, KG, model: the same record ``kgteam chat`` keeps), and a session
of another owner is reported as not found. With auth off every session is visible.
"""

from __future__ import annotations

import inspect
import re
import uuid
from pathlib import Path
from typing import Any

from kgteam.agents.sessions import TurnRecord
from kgteam.serve.errors import ApiError
from kgteam.serve.events import answer_json
from kgteam.serve.runs import QuestionRun, QuestionRuns, SessionBusy, off_loop
from kgteam.serve.settings import ServeSettings

SESSION_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def new_session_id() -> str:
    return uuid.uuid4().hex[:12]


def turn_status(turn: TurnRecord, running_turn: int | None) -> str:
    """done | running | interrupted | cancelled. A store that keeps the status itself is believed;
    else an unfinished turn is running if this process runs it, and was interrupted if not."""
    kept = getattr(turn, "status", None)
    if kept in ("running", "interrupted", "cancelled", "done"):
        return str(kept)
    if not turn.complete:
        return "running" if turn.turn == running_turn else "interrupted"
    if turn.answer is not None and turn.answer.stopped_by == "cancelled":
        return "cancelled"
    return "done"


class TeamService:
    def __init__(self, team: Any, *, settings: ServeSettings | None = None,
                 session_settings: dict[str, Any] | None = None, home: Path | None = None):
        if team.store is None:
            raise ValueError("kgteam serve needs a team with a session store")
        self.team = team
        self.store = team.store
        self.settings = settings or ServeSettings()
        self.home = home
        spec = team.spec
        self.kg_id = spec.kg_id
        self._kg_names = {str(k.name or k.path or k.endpoint) for k in spec.kg_specs}
        self.session_settings = session_settings or {"team": None, "model": None, "kg": None, "kg_id": self.kg_id,
                                                     "team_name": spec.name}
        self.team_name = str(self.session_settings.get("team_name") or spec.name)
        self.runs = QuestionRuns(team, self.settings.max_running, self.settings.max_active)
        # stores that record a session's owner themselves are told it (the settings record it too)
        self._store_keeps_owner = "owner" in inspect.signature(self.store.create_session).parameters

    @property
    def name(self) -> str:
        return str(self.team.spec.name)

    # -- sessions ------------------------------------------------------------------------------
    def _owner_matches(self, saved: dict[str, Any] | None, owner: str | None) -> bool:
        if owner is None:
            return True
        return saved is not None and saved.get("owner") == owner

    def _require(self, session_id: str, owner: str | None) -> dict[str, Any]:
        """The session's settings; 404 when it does not exist or is another key's."""
        not_found = ApiError(404, "session_not_found", f"no session {session_id!r}")
        if not SESSION_ID.match(session_id):
            raise not_found
        saved = self.store.settings(session_id)
        if saved is None and not self.store.turns(session_id):
            raise not_found
        if not self._owner_matches(saved, owner):
            raise not_found
        return saved or {}

    def create(self, owner: str | None, title: str | None = None, session_id: str | None = None) -> dict[str, Any]:
        session_id = session_id or new_session_id()
        if self._store_keeps_owner:
            info = self.store.create_session(session_id, title=title, owner=owner)
        else:
            info = self.store.create_session(session_id, title=title)
        self.store.save_settings(session_id, {**self.session_settings, "owner": owner})
        return {"id": info.session_id, "title": info.title, "created": info.created_at}

    def session_for_chat(self, session_id: str | None, owner: str | None) -> str:
        """The OpenAI facade's session: the one named (created on first use), else a new one."""
        if session_id is None:
            return str(self.create(owner)["id"])
        if not SESSION_ID.match(session_id):
            raise ApiError(400, "bad_session_id", "a session id (X-Session-Id or 'user') is 1-64 letters, digits, "
                                                  "'.', '_' or '-'")
        if self.exists_for(session_id, owner):
            return session_id
        if self.store.settings(session_id) is None and not self.store.turns(session_id):
            self.create(owner, session_id=session_id)
            return session_id
        raise ApiError(404, "session_not_found", f"no session {session_id!r}")

    def exists_for(self, session_id: str, owner: str | None) -> bool:
        try:
            self._require(session_id, owner)
        except ApiError:
            return False
        return True

    def foreign(self, saved: dict[str, Any] | None) -> str | None:
        """Why this server must not answer in a session recorded with ``saved`` settings (its team
        or KG is not the served one), or None. Sessions the CLI or another server started record
        both; one with no record (the Python API's) is taken as it is. The team is compared by
        name: the CLI and the server may see the same team file at different paths."""
        if not saved:
            return None
        team, kg = saved.get("team_name"), saved.get("kg_id")
        if team not in (None, self.team_name):
            return (f"it was started with team {team!r} on KG {kg!r}; this server serves team {self.team_name!r} "
                    f"on KG {self.kg_id!r}")
        if kg not in (None, self.kg_id):
            return f"it runs on KG {kg!r}; this server serves {self.kg_id!r}"
        return None

    def mine(self, saved: dict[str, Any] | None) -> bool:
        """The session's record names this server's team and KG. A home keeps one sessions file for
        every team and KG, so a session with no record (or one naming neither) is not listed: it
        may be of any of them."""
        return bool(saved) and saved.get("team_name") == self.team_name and saved.get("kg_id") == self.kg_id

    def list(self, owner: str | None, limit: int) -> list[dict[str, Any]]:
        """The owner's sessions of this server's team and KG (not every session in a shared store)."""
        out = []
        for info in self.store.list_sessions():
            saved = self.store.settings(info.session_id)
            if not self._owner_matches(saved, owner) or not self.mine(saved):
                continue
            run = self.runs.get(info.session_id)
            out.append({"id": info.session_id, "title": info.title, "created": info.created_at,
                        "updated": info.updated_at, "turns": info.turns, "running": run is not None})
            if len(out) >= limit:
                break
        return out

    def detail(self, session_id: str, owner: str | None) -> dict[str, Any]:
        saved = self._require(session_id, owner)
        run = self.runs.get(session_id)
        running_turn = run.turn if run is not None else None
        if hasattr(self.store, "session"):
            info = self.store.session(session_id)
        else:
            info = next((s for s in self.store.list_sessions() if s.session_id == session_id), None)
        turns = [{"turn": t.turn, "question": t.question, "status": turn_status(t, running_turn),
                  "answer": answer_json(t.answer) if t.answer is not None else None,
                  "started": t.started_at, "finished": t.finished_at}
                 for t in self.store.turns(session_id)]
        if run is not None and running_turn is None:  # started, its turn not written yet
            turns.append({"turn": len(turns), "question": run.question, "status": "running", "answer": None,
                          "started": None, "finished": None})
        return {"id": session_id, "title": info.title if info else None,
                "created": info.created_at if info else None, "updated": info.updated_at if info else None,
                "team": saved.get("team_name"), "kg": saved.get("kg_id"), "running": run is not None,
                "turns": turns}

    def delete(self, session_id: str, owner: str | None) -> None:
        self._require(session_id, owner)
        if self.runs.get(session_id) is not None:
            raise ApiError(409, "session_busy", f"session {session_id!r} has a question running: cancel it first")
        self.store.delete_session(session_id)

    def trace_lines(self, session_id: str, owner: str | None) -> list[str]:
        from kgteam.agents.trace import jsonl_lines

        self._require(session_id, owner)
        return list(jsonl_lines(self.store, session_id))

    # -- questions -----------------------------------------------------------------------------
    async def ask(self, session_id: str, owner: str | None, question: str) -> QuestionRun:
        saved = await off_loop(self.store, self._require, session_id, owner)
        why = self.foreign(saved)
        if why is not None:
            code = "session_on_other_team" if saved.get("team_name") not in (None, self.team_name) \
                else "session_on_other_kg"
            raise ApiError(409, code, f"session {session_id!r} is not this server's: {why}. Go on with it where "
                                      f"it was started (kgteam chat --session {session_id}), or start a new session")
        question = question.strip()
        if not question:
            raise ApiError(422, "invalid_request", "question: must not be empty")
        if len(question) > self.settings.max_question_chars:
            raise ApiError(422, "invalid_request",
                           f"question: at most {self.settings.max_question_chars} characters (got {len(question)})")
        if self.runs.full():
            raise ApiError(503, "busy", f"{len(self.runs)} questions are running on this server: try again shortly",
                           {"Retry-After": "1"})
        try:
            return await self.runs.start(session_id, question)
        except SessionBusy:
            raise ApiError(409, "session_busy",
                           f"session {session_id!r} already has a question running: wait for its answer, "
                           f"or POST /v1/sessions/{session_id}/cancel") from None

    async def cancel(self, session_id: str, owner: str | None) -> bool:
        await off_loop(self.store, self._require, session_id, owner)
        return self.runs.cancel(session_id)

    # -- catalogue -----------------------------------------------------------------------------
    def kgs(self) -> list[dict[str, Any]]:
        from kgteam.tools.kg import list_kgs

        out = []
        for m in list_kgs(self.home):
            out.append({"name": m.name, "triples": m.counts.triples, "facts": m.counts.facts,
                        "entities": m.counts.entities, "relations": m.counts.relations, "format": m.format,
                        "created": m.created_at, "vectors": m.vectors is not None,
                        "served": m.name in self._kg_names})
        if not any(k["served"] for k in out):  # a KG folder or endpoint, not an installed name
            out.insert(0, {"name": self.kg_id, "triples": None, "served": True})
        out.sort(key=lambda k: not k["served"])
        return out

    def teams(self) -> list[dict[str, Any]]:
        from kgteam.config.playbooks import playbook_names
        from kgteam.config.resolve import resolve_team

        spec = self.team.spec
        runner = self.team.runner
        served = {"name": spec.name, "description": spec.description, "playbook": spec.playbook,
                  "roles": list(runner.roles), "budgets": runner.budgets.model_dump(), "kg": self.kg_id,
                  "model": spec.model.provider if spec.model.provider in ("none", "local", "scripted")
                  else spec.model.model, "served": True}
        out = [served]
        for name in playbook_names():
            if name == spec.playbook:
                continue
            try:
                from kgteam.config.schema import TeamSpec

                resolved = resolve_team(TeamSpec(name=name, playbook=name))
            except Exception:  # a broken plugin playbook is left out of the list, not fatal
                continue
            out.append({"name": name, "description": "", "playbook": name, "roles": list(resolved.roles),
                        "budgets": resolved.budgets.model_dump(), "served": False})
        return out

"""Small real roles and a playbook, registered under test names, so config tests don't depend on Triad."""

from __future__ import annotations

import sys
import types

import pytest
from pydantic import BaseModel, ConfigDict

from kgteam.config import registry
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer, Payload, Question
from kgteam.protocols.routes import Route
from kgteam.roles.base import Role, RoleContext


class ResponderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prefix: str = "echo: "
    max_items: int = 3


class Responder(Role):
    """Answers a question by echoing it (no model, no KG)."""

    name = "t_responder"
    consumes = ("question",)
    produces = ("answer",)
    settings_model = ResponderSettings

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        assert isinstance(message.payload, Question)
        return [Answer(text=self.settings.prefix + message.payload.text)]


class Rewriter(Role):
    """Passes a question on, unchanged; takes no settings."""

    name = "t_rewriter"
    consumes = ("question",)
    produces = ("question",)
    tools = ("search_entities",)

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        return [message.payload]


class NeedsMissingTool(Role):
    name = "t_needs_tool"
    consumes = ("question",)
    produces = ("answer",)
    tools = ("web_search_nowhere",)

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        return []


TEST_PLAYBOOK = {
    "roles": {"rewriter": "t_rewriter", "responder": "t_responder"},
    "routes": [Route(kind="question", sender="user", to=["rewriter"]),
               Route(kind="question", sender="rewriter", to=["responder"])],
    "entry": "rewriter",
    "answer_role": "responder",
}


@pytest.fixture(autouse=True)
def test_roles(monkeypatch: pytest.MonkeyPatch):
    module = types.ModuleType("kgteam_config_test_roles")
    for cls in (Responder, Rewriter, NeedsMissingTool):
        setattr(module, cls.__name__, cls)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(registry.BUILTIN_ROLES, "t_responder", f"{module.__name__}:Responder")
    monkeypatch.setitem(registry.BUILTIN_ROLES, "t_rewriter", module.__name__)  # class found by name
    monkeypatch.setitem(registry.BUILTIN_ROLES, "t_needs_tool", f"{module.__name__}:NeedsMissingTool")
    registry.refresh()
    from kgteam.config import resolve

    books = {**resolve._playbooks(), "t_echo": TEST_PLAYBOOK}
    monkeypatch.setattr(resolve, "_playbooks", lambda: books)
    yield
    monkeypatch.undo()
    registry.refresh()


@pytest.fixture
def write(tmp_path):
    def _write(text: str, name: str = "team.yaml"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return _write

"""Small real roles and a playbook, registered under test names, so config tests don't depend on Triad."""

from __future__ import annotations

import sys
import types

import pytest
from pydantic import BaseModel, ConfigDict

from kgteam.config import playbooks, registry
from kgteam.protocols.payloads import Answer, AnswerType, Question
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contract import handles


class ResponderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prefix: str = "echo: "
    max_items: int = 3


class Responder(Role[ResponderSettings]):
    """Answers a question by echoing it (no model, no KG)."""

    name = "t_responder"

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Answer]:
        return [Answer(confidence=1.0, text=self.settings.prefix + q.text)]


class Rewriter(Role):
    """Passes a question on, unchanged; takes no settings."""

    name = "t_rewriter"
    tools = ("search_entities",)

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Question]:
        return [q]


class TypedReader(Role):
    """Answers with the answer type a parser would have produced upstream (it reads it)."""

    name = "t_typed_reader"
    reads = (AnswerType,)

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Answer]:
        kind = ctx.ancestor(AnswerType)
        return [Answer(confidence=1.0, text=kind.type if kind else "no type")]


class NeedsMissingTool(Role):
    name = "t_needs_tool"
    tools = ("web_search_nowhere",)

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Answer]:
        return []


TEST_PLAYBOOK = """\
name: t_echo
roles: {rewriter: t_rewriter, responder: t_responder}
routes:
  - {kind: question, sender: user, to: rewriter}
  - {kind: question, sender: rewriter, to: responder}
entry: rewriter
answer_role: responder
"""


def register(monkeypatch: pytest.MonkeyPatch, group: str, name: str, target: str) -> None:
    """Add an entry to the live registry for this test (undone by monkeypatch)."""
    monkeypatch.setitem(registry.entry_table(group), name, registry.Entry(group, name, target, "tests"))


@pytest.fixture(autouse=True)
def test_roles(monkeypatch: pytest.MonkeyPatch):
    module = types.ModuleType("kgteam_config_test_roles")
    for cls in (Responder, Rewriter, NeedsMissingTool, TypedReader):
        setattr(module, cls.__name__, cls)
    module.TEST_PLAYBOOK = TEST_PLAYBOOK
    monkeypatch.setitem(sys.modules, module.__name__, module)
    registry.refresh()
    playbooks.refresh()
    register(monkeypatch, "roles", "t_responder", f"{module.__name__}:Responder")
    register(monkeypatch, "roles", "t_rewriter", module.__name__)  # class found by name
    register(monkeypatch, "roles", "t_needs_tool", f"{module.__name__}:NeedsMissingTool")
    register(monkeypatch, "roles", "t_typed_reader", f"{module.__name__}:TypedReader")
    register(monkeypatch, "playbooks", "t_echo", f"{module.__name__}:TEST_PLAYBOOK")
    yield
    monkeypatch.undo()
    registry.refresh()
    playbooks.refresh()


@pytest.fixture
def write(tmp_path):
    def _write(text: str, name: str = "team.yaml"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return _write

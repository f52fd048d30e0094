"""An out-of-tree role and tool, installed with pip, found by entry point, used by short name in a YAML team;
the role's prompt ships in the plugin package."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from kgteam.agents.sessions import SqliteSessionStore
from kgteam.cli.app import app
from kgteam.config import load_team, registry
from kgteam.protocols.payloads import Answer, AnswerValue, Question
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.contract import handles

KGTEAM = [str(Path(sys.executable).with_name("kgteam"))]


class Years(BaseModel):
    years: list[str]


class Oracle(Role):
    """Answers from the model alone (scripted here), leaving duplicates and odd order in place;
    names it can find in the KG get their IRIs."""

    name = "t_oracle"
    tools = ("search_entities",)

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Answer]:
        reply = await ctx.model.chat([{"role": "user", "content": q.text}], role=self.name)
        names = Years.model_validate_json(reply.text).years
        values = []
        for name in names:
            hits = [h for h in await ctx.tools["search_entities"](name, k=1) if h.exact]
            values.append(AnswerValue(label=name, iri=hits[0].iri if hits else None))
        return [Answer(confidence=1.0, text=" ".join(names), values=values)]


TEAM = """\
name: formatted
model: {provider: scripted, script: script.json}
kg: {backend: oxigraph, name: mini}
roles:
  oracle: t_oracle
  fmt:
    role: answer_formatter
    settings: {max_values: 2}
routes:
  - {kind: question, sender: user, to: oracle}
  - {kind: answer, sender: oracle, to: fmt}
"""


@pytest.fixture
def oracle_role(monkeypatch):
    module = types.ModuleType("kgteam_plugin_test_roles")
    module.Oracle = Oracle
    monkeypatch.setitem(sys.modules, module.__name__, module)
    registry.refresh()
    monkeypatch.setitem(registry.entry_table("roles"), "t_oracle",
                        registry.Entry("roles", "t_oracle", f"{module.__name__}:Oracle", "tests"))
    yield
    monkeypatch.undo()
    registry.refresh()


@pytest.fixture
def mini_home(tmp_path_factory, monkeypatch) -> Path:
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("home")
    kb = home / "kb.txt"
    kb.write_text("Valley of the Dolls|release_year|1967\n"
                  "Alpha Film|directed_by|Zed Maker\nBeta Film|directed_by|Zed Maker\nGamma Film|directed_by|Amy Auteur\n",
                  encoding="utf-8")
    build_kg([kb], "mini", home=home, format="metaqa", progress=False)
    monkeypatch.setenv("KGTEAM_HOME", str(home))
    return home


def test_roles_command_lists_the_plugin(installed_plugin):
    out = subprocess.run([*KGTEAM, "roles", "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    (info,) = [r for r in json.loads(out.stdout) if r["name"] == "answer_formatter"]
    assert info["package"] == "kgteam-answer-formatter" and info["error"] is None
    assert info["consumes"] == ["answer"] and info["produces"] == ["answer"]
    assert info["tools"] == ["entity_degree"]
    table = subprocess.run([*KGTEAM, "roles"], capture_output=True, text=True, timeout=60).stdout
    assert "answer_formatter" in table and "kgteam-answer-formatter" in table


def test_yaml_team_runs_the_plugin_role(installed_plugin, oracle_role, mini_home, tmp_path):
    (tmp_path / "script.json").write_text(json.dumps(
        {"rules": [{"role": "t_oracle", "match": "Sharon Tate", "reply": {"years": ["1968", "1967", "1968", "1969"]}}]}))
    team = tmp_path / "team.yaml"
    team.write_text(TEAM)
    spec = load_team(team)  # the plugin's settings model validated the YAML settings
    assert spec.roles["fmt"].role == "answer_formatter"
    db = tmp_path / "s.sqlite"
    result = CliRunner().invoke(app, ["ask", "the films acted by Sharon Tate were released in which years",
                                      "--team", str(team), "--db", str(db), "--new-session", "p1", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["text"] == "1967, 1968 and 1 more"  # deduped, sorted, capped at max_values=2
    assert [v["label"] for v in data["values"]] == ["1967", "1968", "1969"]
    assert data["cost"]["llm_calls"] == 1 and data["stopped_by"] == "done"
    with SqliteSessionStore(db) as store:
        assert [(m.sender, m.kind) for m in store.messages("p1")] == [
            ("user", "question"), ("oracle", "answer"), ("fmt", "answer")]
        (event,) = [e for e in store.events("p1") if e["event"] == "answer_formatted"]
        assert (event["before"], event["after"]) == (4, 3)


def test_bad_plugin_setting_is_reported_with_line(installed_plugin, oracle_role, mini_home, tmp_path):
    (tmp_path / "script.json").write_text("{\"rules\": []}")
    team = tmp_path / "team.yaml"
    team.write_text(TEAM.replace("{max_values: 2}", "{max_values: 0}"))
    result = CliRunner().invoke(app, ["validate", str(team)])
    assert result.exit_code == 1
    assert f"{team}:8: roles.fmt.settings.max_values" in result.output


def test_plugin_tool_and_plugin_prompt_from_a_yaml_team(installed_plugin, oracle_role, mini_home, tmp_path):
    """The formatter sorts by the plugin tool (Zed Maker directed two films, Amy Auteur one) and
    phrases with the model through the prompt file shipped in the plugin package."""
    (tmp_path / "script.json").write_text(json.dumps({"rules": [
        {"role": "t_oracle", "match": "directors", "reply": {"years": ["Amy Auteur", "Zed Maker"]}},
        {"role": "fmt", "match": "names every one of these values", "reply": {"sentence": "Zed Maker and Amy Auteur."}},
    ]}))
    team = tmp_path / "team.yaml"
    team.write_text(TEAM.replace("{max_values: 2}", "{sort: degree, phrase_with_model: true}"))
    db = tmp_path / "s.sqlite"
    result = CliRunner().invoke(app, ["ask", "which directors are there", "--team", str(team), "--db", str(db),
                                      "--new-session", "p2", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [v["label"] for v in data["values"]] == ["Zed Maker", "Amy Auteur"]  # by degree, not alphabet
    assert data["text"] == "Zed Maker and Amy Auteur." and data["cost"]["llm_calls"] == 2
    with SqliteSessionStore(db) as store:
        calls = [e for e in store.events("p2") if e["event"] == "tool_call" and e["tool"] == "entity_degree"]
        assert [c["role"] for c in calls] == ["fmt", "fmt"] and sorted(c["result"] for c in calls) == [2, 3]  # labels count too


def test_a_role_may_only_call_granted_tools(installed_plugin, oracle_role, mini_home, tmp_path):
    team = tmp_path / "team.yaml"
    team.write_text(TEAM.replace("    settings: {max_values: 2}", "    settings: {sort: degree}\n    tools: []"))
    (tmp_path / "script.json").write_text("{\"rules\": []}")
    result = CliRunner().invoke(app, ["validate", str(team)])
    assert result.exit_code == 1
    assert f"{team}:9: roles.fmt.tools:" in result.output and "entity_degree" in result.output


def test_shipped_plugin_team_validates(installed_plugin):
    out = subprocess.run([*KGTEAM, "validate", str(installed_plugin / "team.yaml")], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "formatter=answer_formatter" in out.stdout

"""build_team's parts: models (per-role overrides, shared instances), roles with parsed settings, errors."""

from __future__ import annotations

import contextlib
import json

import pytest

from kgteam.config import load_team
from kgteam.config.schema import KGSpec
from kgteam.llm.scripted import ScriptedModel
from kgteam.team_builder import DefaultMaxTokens, TeamBuildError, build_models, build_roles, open_kg_tools

TEAM = """\
name: f
model: {provider: scripted, script: a.json}
roles:
  rewriter: t_rewriter
  responder:
    role: t_responder
    settings: {prefix: "> "}
    model: {script: b.json, max_tokens: 64}
  second:
    role: t_responder
    model: {script: b.json, max_tokens: 64}
routes:
  - {kind: question, sender: user, to: rewriter}
  - {kind: question, sender: rewriter, to: [responder, second]}
"""


@pytest.fixture
def spec(write, tmp_path):
    for name, reply in (("a.json", "from a"), ("b.json", "from b")):
        (tmp_path / name).write_text(json.dumps({"name": name, "rules": [{"reply": reply}]}))
    return load_team(write(TEAM))


async def test_per_role_models_and_sharing(spec):
    with contextlib.ExitStack() as stack:
        default, by_role = build_models(spec, stack)
    assert isinstance(default, ScriptedModel) and default.name == "a.json"
    assert set(by_role) == {"responder", "second"}
    assert isinstance(by_role["responder"], DefaultMaxTokens) and by_role["responder"].max_tokens == 64
    assert by_role["responder"].inner is by_role["second"].inner  # same settings -> one model
    reply = await by_role["responder"].chat([{"role": "user", "content": "hi"}], role="t_responder")
    assert reply.text == "from b"


def test_roles_get_parsed_settings_and_instance_names(spec):
    roles = build_roles(spec)
    assert roles["responder"].settings.prefix == "> " and roles["responder"].instance_name == "responder"
    assert roles["second"].settings.prefix == "echo: "  # the role's default
    assert type(roles["rewriter"].settings).__name__ == "NoSettings"  # a role without settings takes none


def test_missing_script_file(spec, tmp_path):
    (tmp_path / "a.json").unlink()
    with pytest.raises(TeamBuildError, match="a.json does not exist"), contextlib.ExitStack() as stack:
        build_models(spec, stack)


def test_openai_needs_a_model_name_and_a_set_key_variable(write, monkeypatch):
    monkeypatch.delenv("KGTEAM_LLM_MODEL", raising=False)
    spec = load_team(write(TEAM.replace("{provider: scripted, script: a.json}", "{provider: openai}")
                           .replace("model: {script: b.json, max_tokens: 64}", "model: {max_tokens: 64}")))
    with pytest.raises(TeamBuildError, match="model.model is not set"), contextlib.ExitStack() as stack:
        build_models(spec, stack)
    monkeypatch.delenv("KGTEAM_TEST_KEY", raising=False)
    spec = load_team(write(TEAM.replace("{provider: scripted, script: a.json}",
                                        "{provider: openai, model: m, api_key_env: KGTEAM_TEST_KEY}")
                           .replace("model: {script: b.json, max_tokens: 64}", "model: {max_tokens: 64}")))
    with pytest.raises(TeamBuildError, match="KGTEAM_TEST_KEY"), contextlib.ExitStack() as stack:
        build_models(spec, stack)
    monkeypatch.setenv("KGTEAM_TEST_KEY", "sk-test")
    with contextlib.ExitStack() as stack:
        default, by_role = build_models(spec, stack)
    assert default.api_key == "sk-test" and default.structured_mode == "json_schema"
    assert by_role["responder"].inner.model == "m"


def test_missing_kg_is_a_build_error_with_hint(tmp_path):
    with pytest.raises(TeamBuildError, match="cannot open KG 'nokg'") as info, contextlib.ExitStack() as stack:
        open_kg_tools(KGSpec(name="nokg"), stack, home=tmp_path)
    assert "kgteam load" in str(info.value)


async def test_open_team_runs_and_build_team_owns_resources_without_a_stack(spec, tmp_path):
    from kgteam.team_builder import build_team, open_team
    from kgteam.tools.loading import build_kg

    (tmp_path / "kb.txt").write_text("Kismet|directed_by|William Dieterle\n")
    build_kg([tmp_path / "kb.txt"], "metaqa", home=tmp_path / "home", format="metaqa", progress=False)
    with open_team(spec, home=tmp_path / "home") as runner:
        answer = await runner.ask("who directed Kismet")
    assert answer.text == "> who directed Kismet" and answer.stopped_by == "done"
    assert runner.budgets == spec.budgets and set(runner.role_models) == {"responder", "second"}

    runner = build_team(spec, home=tmp_path / "home")
    assert (await runner.ask("again")).text == "> again"
    runner.resources.close()


def test_bad_yaml_script_is_a_build_error_naming_the_file(write, tmp_path):
    (tmp_path / "bad.yaml").write_text("rules: [ {reply: x\n")
    spec = load_team(write(TEAM.replace("script: a.json", "script: bad.yaml")))
    with pytest.raises(TeamBuildError, match="bad.yaml.*invalid YAML"), contextlib.ExitStack() as stack:
        build_models(spec, stack)


def test_local_server_failure_is_a_build_error(write, monkeypatch):
    import kgteam.llm.local_server as local_server

    monkeypatch.setattr(local_server, "llama_cpp_available", lambda: False)
    spec = load_team(write(TEAM.replace("{provider: scripted, script: a.json}", "{provider: local}")
                           .replace("model: {script: b.json, max_tokens: 64}", "model: {max_tokens: 64}")))
    with pytest.raises(TeamBuildError, match="llama-cpp-python is not installed"), contextlib.ExitStack() as stack:
        build_models(spec, stack)


def test_unknown_store_option_is_a_build_error_with_field_path(tmp_path):
    kg = KGSpec(backend="sparql", endpoint="http://127.0.0.1:9/sparql", options={"bogus": 1},
                labels={"backend": "tantivy", "path": str(tmp_path)})
    with pytest.raises(TeamBuildError, match=r"kg\.options: .*'bogus'.*accepted: .*timeout_s"), \
            contextlib.ExitStack() as stack:
        open_kg_tools(kg, stack)


def test_bad_store_option_value_is_a_build_error(tmp_path):
    kg = KGSpec(backend="sparql", endpoint="not a url", labels={"backend": "tantivy", "path": str(tmp_path)})
    with pytest.raises(TeamBuildError, match=r"^kg: backend 'sparql' cannot be opened: invalid IRI"), \
            contextlib.ExitStack() as stack:
        open_kg_tools(kg, stack)


def test_labels_folder_that_is_not_an_index_is_a_build_error(tmp_path):
    (tmp_path / "empty").mkdir()
    kg = KGSpec(backend="sparql", endpoint="http://127.0.0.1:9/sparql",
                labels={"backend": "tantivy", "path": str(tmp_path / "empty")})
    with pytest.raises(TeamBuildError, match=r"kg\.labels\.path: .*no label index"), contextlib.ExitStack() as stack:
        open_kg_tools(kg, stack)

"""Team YAML loading: valid files load; every kind of mistake names file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgteam.config import TeamConfigError, load_team, load_team_text, resolve_team
from kgteam.config.schema import TeamSpec

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
name: echo
description: two test roles
model:
  provider: openai
  base_url: http://127.0.0.1:9/v1
  model: tiny
kg:
  backend: oxigraph
  name: metaqa
roles:
  rewriter:
    role: t_rewriter
  responder:
    role: t_responder
    settings:
      prefix: "A: "
routes:
  - kind: question
    sender: user
    to: rewriter
  - {kind: question, sender: rewriter, to: [responder]}
budgets:
  max_turns: 5
entry: rewriter
answer_role: responder
"""


def errors_of(path) -> list:
    with pytest.raises(TeamConfigError) as info:
        load_team(path)
    return info.value.issues


def test_valid_team_loads_with_friendly_shapes(write):
    spec = load_team(write(GOOD))
    assert spec.name == "echo"
    assert spec.roles["responder"].settings == {"prefix": "A: "}
    assert spec.routes[0].to == ["rewriter"]  # "to: rewriter" became a list
    assert spec.budgets.max_turns == 5 and spec.budgets.max_retries == 3  # defaults kept


def test_roles_as_list_and_shorthand(write):
    text = GOOD.replace("""roles:
  rewriter:
    role: t_rewriter
  responder:
    role: t_responder
    settings:
      prefix: "A: "
""", """roles:
  - {name: rewriter, role: t_rewriter}
  - t_responder
""").replace("to: [responder]", "to: [t_responder]").replace("answer_role: responder", "answer_role: t_responder")
    spec = load_team(write(text))
    assert {k: v.role for k, v in spec.roles.items()} == {"rewriter": "t_rewriter", "t_responder": "t_responder"}


def test_unknown_field_names_line_and_suggests(write):
    (issue,) = errors_of(write(GOOD.replace("  max_turns: 5", "  max_turns: 5\n  max_retires: 2")))
    assert issue.line == 24 and issue.field == "budgets.max_retires"
    assert "did you mean 'max_retries'" in issue.message and "allowed:" in issue.message
    assert str(issue).startswith(f"{issue.file}:24: budgets.max_retires: unknown field")


def test_wrong_type_names_line_and_value(write):
    (issue,) = errors_of(write(GOOD.replace("max_turns: 5", "max_turns: lots")))
    assert (issue.line, issue.field) == (23, "budgets.max_turns")
    assert "integer" in issue.message and "'lots'" in issue.message


def test_several_errors_reported_together(write):
    text = GOOD.replace("max_turns: 5", "max_turns: -1").replace("  model: tiny", "  model: tiny\n  temprature: 0")
    issues = errors_of(write(text))
    assert [(i.line, i.field) for i in issues] == [(7, "model.temprature"), (24, "budgets.max_turns")]


def test_errors_of_every_stage_are_reported_together_in_line_order(write):
    """A duplicate key (read stage), a bad value (structure) and an unknown role (installed names):
    all three at once, sorted by line, not only the first stage's."""
    text = (GOOD.replace("max_turns: 5", "max_turns: 5\n  max_turns: 6")
            .replace("  model: tiny", "  model: tiny\n  temprature: 0"))
    issues = errors_of(write(text))
    assert [(i.line, i.field) for i in issues] == [(7, "model.temprature"), (25, "budgets.max_turns")]
    text = GOOD.replace("max_turns: 5", "max_turns: 5\n  max_turns: 6").replace("role: t_responder", "role: nope")
    issues = errors_of(write(text))
    assert [(i.line, i.field) for i in issues] == [(14, "roles.responder.role"), (24, "budgets.max_turns")]
    assert "unknown role 'nope'" in issues[0].message and "duplicate key" in issues[1].message


def test_unknown_role_lists_installed(write):
    (issue,) = errors_of(write(GOOD.replace("role: t_responder", "role: t_responsder")))
    assert (issue.line, issue.field) == (14, "roles.responder.role")
    assert "unknown role 't_responsder'" in issue.message
    assert "t_responder" in issue.message and "t_rewriter" in issue.message  # installed names listed
    assert "did you mean 't_responder'" in issue.message


def test_role_settings_are_validated_by_the_role(write):
    (issue,) = errors_of(write(GOOD.replace('prefix: "A: "', "max_items: many")))
    assert (issue.line, issue.field) == (16, "roles.responder.settings.max_items")
    issues = errors_of(write(GOOD.replace('prefix: "A: "', "prefx: x")))
    assert issues[0].field == "roles.responder.settings.prefx" and "did you mean 'prefix'" in issues[0].message


def test_settings_for_a_role_without_settings(write):
    text = GOOD.replace("    role: t_rewriter\n", "    role: t_rewriter\n    settings: {x: 1}\n")
    (issue,) = errors_of(write(text))
    assert issue.field == "roles.rewriter.settings" and "takes no settings" in issue.message


def test_missing_env_var_names_file_line(write, monkeypatch):
    monkeypatch.delenv("KGTEAM_TEST_URL", raising=False)
    path = write(GOOD.replace("http://127.0.0.1:9/v1", "${KGTEAM_TEST_URL}"))
    (issue,) = errors_of(path)
    assert (issue.file, issue.line, issue.field) == (str(path), 5, "model.base_url")
    assert "KGTEAM_TEST_URL" in issue.message and "not set" in issue.message
    monkeypatch.setenv("KGTEAM_TEST_URL", "http://127.0.0.1:1234/v1")
    assert load_team(path).model.base_url == "http://127.0.0.1:1234/v1"


def test_env_default_and_escape(write, monkeypatch):
    monkeypatch.delenv("KGTEAM_TEST_MODEL", raising=False)
    text = GOOD.replace("model: tiny", "model: ${KGTEAM_TEST_MODEL:-fallback-model}").replace(
        "description: two test roles", "description: costs $${HOME} dollars")
    spec = load_team(write(text))
    assert spec.model.model == "fallback-model"
    assert spec.description == "costs ${HOME} dollars"


def test_bad_route_target_names_unknown_instance(write):
    (issue,) = errors_of(write(GOOD.replace("to: [responder]", "to: [responder, judge]")))
    assert (issue.line, issue.field) == (21, "routes[1].to[1]")
    assert "'judge'" in issue.message and "responder, rewriter" in issue.message


def test_bad_route_sender_and_kind(write):
    issues = errors_of(write(GOOD.replace("sender: rewriter", "sender: nobody").replace(
        "- kind: question", "- kind: questoin")))
    by_field = {i.field: i for i in issues}
    assert "unknown payload kind 'questoin'" in by_field["routes[0].kind"].message
    assert by_field["routes[0].kind"].line == 18
    assert "did you mean 'question'" in by_field["routes[0].kind"].message
    assert "'nobody'" in by_field["routes[1].sender"].message


def test_yaml_syntax_error_has_line(write):
    (issue,) = errors_of(write(GOOD.replace("  - {kind: question, sender: rewriter, to: [responder]}",
                                            "  - {kind: question, sender: rewriter, to: [responder}")))
    assert issue.line == 21 and "YAML syntax error" in issue.message


def test_duplicate_key_is_an_error(write):
    (issue,) = errors_of(write(GOOD.replace("name: echo\n", "name: echo\nname: again\n")))
    assert (issue.line, issue.field) == (2, "name") and "duplicate key (first defined on line 1)" in issue.message


def test_unknown_backend_lists_installed(write):
    (issue,) = errors_of(write(GOOD.replace("backend: oxigraph", "backend: neo4j\n  endpoint: x\n"
                                                                  "  labels: {backend: tantivy, path: x}")))
    assert (issue.line, issue.field) == (8, "kg.backend")
    assert "unknown backend 'neo4j'" in issue.message and "oxigraph" in issue.message and "sparql" in issue.message


def test_backend_requirements(write):
    (issue,) = errors_of(write(GOOD.replace("backend: oxigraph\n  name: metaqa", "backend: sparql")))
    assert (issue.line, issue.field) == (7, "kg") and "needs 'endpoint'" in issue.message


def test_role_needing_uninstalled_tool(write):
    issues = errors_of(write(GOOD.replace("role: t_rewriter", "role: t_needs_tool")))
    issue = next(i for i in issues if "web_search_nowhere" in i.message)
    assert issue.field == "roles.rewriter.role"
    # t_needs_tool answers instead of passing the question on: the graph check says what breaks
    assert any("route for 'question' from 'rewriter'" in i.message for i in issues)
    assert "search_entities" in issue.message  # lists installed tools


def test_entry_and_answer_role_must_exist(write):
    issues = errors_of(write(GOOD.replace("entry: rewriter", "entry: rewritter")))
    assert [(i.line, i.field) for i in issues] == [(24, "entry")]


def test_routes_and_playbook_exclusive(write):
    (issue,) = errors_of(write(GOOD + "playbook: t_echo\n"))
    assert issue.field == "" and "either 'routes' or 'playbook'" in issue.message


def test_playbook_supplies_roles_and_routes(write):
    text = "name: p\nplaybook: t_echo\nroles:\n  responder:\n    role: t_responder\n    settings: {prefix: '> '}\n"
    spec = load_team(write(text))
    team = resolve_team(spec)
    assert set(team.roles) == {"rewriter", "responder"}
    assert team.roles["responder"].settings == {"prefix": "> "}
    assert team.entry == "rewriter" and team.answer_role == "responder" and len(team.routes) == 2
    (issue,) = errors_of(write("name: p\nplaybook: t_echoo\n"))
    assert issue.line == 2 and "unknown playbook 't_echoo'" in issue.message and "t_echo" in issue.message


def test_extra_routes_appended_and_checked(write):
    text = "name: p\nplaybook: t_echo\nextra_routes:\n  - {kind: answer, sender: responder, to: ghost}\n"
    (issue,) = errors_of(write(text))
    assert (issue.line, issue.field) == (4, "extra_routes[0].to[0]")


def test_per_role_model_override_is_merged_and_checked(write):
    text = GOOD.replace('      prefix: "A: "\n', '      prefix: "A: "\n    model:\n      model: bigger\n'
                                                   '      temperature: 0.7\n')
    spec = load_team(write(text))
    merged = spec.roles["responder"].model.apply_to(spec.model)
    assert (merged.model, merged.temperature, merged.base_url) == ("bigger", 0.7, "http://127.0.0.1:9/v1")
    issues = errors_of(write(text.replace("model: bigger", "provider: scripted")))
    assert issues[0].field == "roles.responder.model" and "needs 'script" in issues[0].message


def test_relative_paths_are_relative_to_the_file(write, tmp_path):
    text = GOOD.replace("  provider: openai\n  base_url: http://127.0.0.1:9/v1\n  model: tiny\n",
                        "  provider: scripted\n  script: scripts/s.yaml\n")
    spec = load_team(write(text))
    assert spec.model.script == str((tmp_path / "scripts" / "s.yaml").resolve())


def test_not_a_mapping_and_empty_file(write):
    assert "must be a mapping" in errors_of(write("- a\n- b\n"))[0].message
    assert "empty" in errors_of(write(""))[0].message


def test_missing_file():
    (issue,) = errors_of("/nonexistent/team.yaml")
    assert "cannot read team file" in issue.message


def test_spec_usable_from_python():
    spec = TeamSpec.model_validate({"name": "x", "roles": ["t_responder"],
                                    "routes": [{"kind": "question", "to": "t_responder"}]})
    assert spec.routes[0].to == ["t_responder"] and spec.roles["t_responder"].role == "t_responder"


def test_text_loader_reports_source():
    with pytest.raises(TeamConfigError) as info:
        load_team_text("name: [", source="inline.yaml")
    assert str(info.value).startswith("inline.yaml:1:")


def test_shipped_example_teams_load(monkeypatch):
    monkeypatch.delenv("KGTEAM_LLM_BASE_URL", raising=False)
    files = sorted((ROOT / "examples" / "teams").glob("*.yaml"))
    assert any(f.name == "triad.yaml" for f in files)
    for path in files:
        spec = load_team(path)
        assert resolve_team(spec).roles, path


def test_backend_options_checked_against_the_constructor(write):
    sparql = ("backend: sparql\n  endpoint: http://127.0.0.1:9/sparql\n  options: {bogus: 1, timeout_s: 5}\n"
              "  labels: {backend: elastic, url: 'http://127.0.0.1:9', options: {verify_certs: false}}")
    (issue,) = errors_of(write(GOOD.replace("backend: oxigraph\n  name: metaqa", sparql)))
    assert (issue.line, issue.field) == (10, "kg.options")
    assert "'bogus'" in issue.message and "timeout_s" in issue.message  # lists what it accepts
    ok = write(GOOD.replace("backend: oxigraph\n  name: metaqa", sparql.replace("bogus: 1, ", "")))
    assert load_team(ok).kg.options == {"timeout_s": 5}  # elastic passes extra options to its client

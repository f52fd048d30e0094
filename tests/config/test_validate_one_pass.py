"""``kgteam validate`` reports every problem of a team file in one run, not stage by stage: the
installed-name, role-setting and route checks still run on the parts whose structure holds."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kgteam.cli.app import app

runner = CliRunner()

# Five kinds of mistakes at once: two the structure check finds (a wrong type, a value out of
# range), an unknown field, a bad role setting, an unknown setting and an unknown role.
BROKEN = """\
name: mine
colour: blue
concurrency: many
model:
  provider: none
  timeout_s: -3
kg:
  backend: oxigraph
  name: metaqa
playbook: triad
roles:
  contextualizer:
    settings:
      history_turns: lots
      bogus_setting: 1
  ghost:
    role: no_such_role
"""

# A route the structure check rejects must not shift the index of the routes after it, and a
# role whose entry is rejected must not make the routes naming it fail a second time.
ROUTES = """\
name: wired
model: {provider: none}
kg: {backend: oxigraph, name: metaqa}
roles:
  ctx: contextualizer
  odd:
    role: [1, 2]
routes:
  - {kind: question, to: ctx, sender: user}
  - {to: odd, sender: user}
  - {kind: question, to: nobody, sender: user}
"""


def _issues(tmp_path, text: str) -> dict[str, str]:
    path = tmp_path / "team.yaml"
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["validate", "--json", str(path)])
    assert result.exit_code == 1, result.output
    out = json.loads(result.output)
    assert out["ok"] is False
    return {i["field"]: i["message"] for i in out["issues"]}


def test_every_kind_of_mistake_is_reported_in_one_run(tmp_path):
    issues = _issues(tmp_path, BROKEN)
    assert "unknown field 'colour'" in issues["colour"]
    assert "valid integer" in issues["concurrency"]
    assert "greater than 0" in issues["model.timeout_s"]
    assert "valid integer" in issues["roles.contextualizer.settings.history_turns"]
    assert "unknown field 'bogus_setting'" in issues["roles.contextualizer.settings.bogus_setting"]
    assert "unknown role 'no_such_role'" in issues["roles.ghost.role"]


def test_a_rejected_route_or_role_keeps_the_others_where_they_are(tmp_path):
    issues = _issues(tmp_path, ROUTES)
    assert "valid string" in issues["roles.odd.role"]
    assert "missing" in issues["routes[1].kind"]
    assert "'nobody' is not a role" in issues["routes[2].to[0]"]
    assert not any("'odd'" in message for message in issues.values())  # no second report for odd


def test_the_human_report_counts_them_all(tmp_path):
    path = tmp_path / "team.yaml"
    path.write_text(BROKEN, encoding="utf-8")
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    assert "6 error(s)" in result.output
    assert "team.yaml:17: roles.ghost.role" in result.output  # with its line


def test_rules_over_several_fields_are_reported_with_the_field_errors(tmp_path):
    # pydantic checks "either routes or playbook" and "searxng needs url" only once every field
    # validates: they must not wait for the next run either
    issues = _issues(tmp_path, "name: x\nplaybook: triad\nroutes: []\nbogus: 1\n"
                               "web: {provider: searxng, timeout_s: -1}\n")
    assert "unknown field 'bogus'" in issues["bogus"]
    assert "greater than 0" in issues["web.timeout_s"]
    assert "needs 'url'" in issues["web"]
    assert "not both" in issues[""]

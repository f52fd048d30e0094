"""The team check reads the roles' typed contracts: a broken message graph is an error at its line."""

from __future__ import annotations

from typer.testing import CliRunner

from kgteam.cli.app import app
from kgteam.config import TeamConfigError, load_team

HEAD = """\
name: graph
model: {provider: scripted, script: none.json}
kg: {backend: oxigraph, name: metaqa}
"""

GOOD = HEAD + """\
roles:
  rewriter: t_rewriter
  responder: t_responder
routes:
  - {kind: question, sender: user, to: rewriter}
  - {kind: question, sender: rewriter, to: responder}
"""


def issues(path):
    try:
        load_team(path)
    except TeamConfigError as exc:
        return exc.issues
    return []


def test_a_good_graph_has_no_issues(write):
    assert issues(write(GOOD)) == []


def test_validate_reports_each_graph_error_with_file_and_line(write):
    path = write(HEAD + """\
roles:
  rewriter: t_rewriter
  reader: t_typed_reader
  responder: t_responder
routes:
  - {kind: question, sender: user, to: rewriter}
  - {kind: question, sender: rewriter, to: [reader, responder]}
  - {kind: axiom, to: responder}
  - {kind: retry_signal, to: rewriter, when: {phase: parsin}}
""")
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    out = " ".join(result.output.split())
    # a route to a kind nobody produces
    assert f"{path}:11: routes[2].kind: route for 'axiom': no role of this team produces it" in out
    # a role that reads a kind nobody upstream produces
    assert f"{path}:6: roles.reader: role 'reader' (t_typed_reader) reads 'answer_type', but nothing upstream" in out
    # a when value outside the payload's Literal
    assert f"{path}:12: routes[3].when.phase: retry_signal.phase: 'parsin' is not one of 'parsing'" in out
    lines = [int(x.strip().split(":")[1]) for x in result.output.splitlines() if x.strip().startswith(str(path) + ":") and x.strip().split(":")[1].isdigit()]
    assert lines == sorted(lines)  # every error, in line order


def test_when_conditions_are_checked_against_the_payload_type(write):
    base = GOOD + "  - {kind: answer, sender: responder, to: rewriter, when: %s}\n"
    bad_field = issues(write(base % "{stauts: answered}"))
    assert any("Answer has no field 'stauts'" in i.message for i in bad_field)
    bad_bool = issues(write(base % "{grounded: 'yes'}"))
    assert any("'yes' is not a boolean" in i.message for i in bad_bool)
    bad_operand = issues(write(base % "{envelope.depth: {lt: max_deep}}"))
    assert any("lt needs a number or a budget name" in i.message for i in bad_operand)
    bad_envelope = issues(write(base % "{envelope.color: red}"))
    assert any("the envelope has no field 'color'" in i.message for i in bad_envelope)
    good = issues(write(base % "{status: [answered, unknown], envelope.depth: {lt: max_depth}}"))
    assert not any("when" in i.field for i in good)


def test_a_target_without_a_handler_and_an_unreached_role(write):
    found = issues(write(HEAD + """\
roles:
  rewriter: t_rewriter
  responder: t_responder
  orphan: t_responder
routes:
  - {kind: question, sender: user, to: rewriter}
  - {kind: question, sender: rewriter, to: responder}
  - {kind: answer, sender: responder, to: rewriter}
"""))
    messages = [i.message for i in found]
    assert any("role 'rewriter' has no handler for 'answer'" in m for m in messages)
    assert any("role 'orphan' is never reached" in m for m in messages)


def test_a_produced_kind_nobody_takes_is_an_error(write):
    found = issues(write(HEAD + """\
roles:
  rewriter: t_rewriter
  responder: t_responder
routes:
  - {kind: question, sender: user, to: rewriter}
"""))
    assert any("role 'rewriter' (t_rewriter) produces 'question', but no route takes it" in i.message for i in found)
    assert any("role 'responder' is never reached" in i.message for i in found)


def test_builtin_playbook_validates():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for team in ("triad.yaml", "triad-local.yaml"):
        spec = load_team(root / "examples" / "teams" / team)
        assert spec.playbook == "triad"

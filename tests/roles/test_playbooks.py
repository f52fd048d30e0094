"""The built-in Triad playbook: routes by kind and phase, registry names, prompt placeholders."""

from __future__ import annotations

from kgteam.agents.routing import route
from kgteam.prompts import placeholders
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Question, RetrySignal, SparqlTemplate
from kgteam.roles.playbooks import BUILTIN_ROLES, PLAYBOOKS, build_roles


def _env(payload, sender):
    return Envelope(session_id="s", sender=sender, payload=payload)


def test_triad_routes():
    pb = PLAYBOOKS["triad"]
    assert route(_env(Question(text="q"), "user"), pb.routes) == ["contextualizer"]
    assert route(_env(Question(text="q"), "contextualizer"), pb.routes) == ["generalist"]
    assert route(_env(SparqlTemplate(template="t"), "generalist"), pb.routes) == ["decision_maker"]
    assert route(_env(RetrySignal(phase="parsing", reason="empty_result"), "advisor"), pb.routes) == ["generalist"]
    assert route(_env(RetrySignal(phase="linking", reason="empty_result"), "advisor"), pb.routes) == ["decision_maker"]
    assert pb.entry == "contextualizer" and pb.answer_role == "advisor" and pb.default_budgets.max_retries == 3


def test_builtin_roles_and_prompts_agree():
    assert set(BUILTIN_ROLES) == {"generalist", "decision_maker", "advisor", "contextualizer"}
    roles = build_roles(PLAYBOOKS["triad"], {"decision_maker": {"k_entities": 3}})
    assert roles["decision_maker"].cfg.k_entities == 3
    for cls in BUILTIN_ROLES.values():
        for name in cls.prompts:
            assert placeholders(name)  # the template exists and has slots

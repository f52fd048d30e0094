"""The built-in Triad playbook (a YAML file registered as an entry point): routes, roles, prompts."""

from __future__ import annotations

from kgteam.agents.routing import route
from kgteam.config import registry
from kgteam.config.playbooks import load_playbook
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Question, RetrySignal, SparqlTemplate
from kgteam.roles.base import prompt_for
from kgteam.team_builder import playbook_runner
from kgteam.tools.toolbox import Toolbox


def _env(payload, sender):
    return Envelope(session_id="s", sender=sender, payload=payload)


def test_triad_routes():
    pb = load_playbook("triad").spec
    assert route(_env(Question(text="q"), "user"), pb.routes) == ["contextualizer"]
    assert route(_env(Question(text="q"), "contextualizer"), pb.routes) == ["generalist"]
    assert route(_env(SparqlTemplate(template="t"), "generalist"), pb.routes) == ["decision_maker"]
    assert route(_env(RetrySignal(phase="parsing", reason="empty_result"), "advisor"), pb.routes) == ["generalist"]
    assert route(_env(RetrySignal(phase="linking", reason="empty_result"), "advisor"), pb.routes) == ["decision_maker"]
    assert pb.entry == "contextualizer" and pb.answer_role == "advisor" and pb.budgets.max_retries == 3
    assert load_playbook("triad").source.endswith("triad/playbook.yaml")


def test_builtin_roles_and_prompts_agree():
    assert {"generalist", "decision_maker", "advisor", "contextualizer"} <= set(registry.installed("roles"))
    runner = playbook_runner("triad", model=None, tools=Toolbox(), settings={"decision_maker": {"k_entities": 3}})
    assert runner.roles["decision_maker"].settings.k_entities == 3
    for name in ("generalist", "decision_maker", "advisor", "contextualizer"):
        cls = registry.role_class(name)
        for prompt in cls.prompts:
            assert prompt_for(cls, prompt).placeholders  # shipped beside the role, with slots

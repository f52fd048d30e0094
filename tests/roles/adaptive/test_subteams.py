"""A playbook that runs another playbook as one of its parts: the adaptive router in front of a KG team."""

from __future__ import annotations

import pytest

from kgteam.agents.routing import route
from kgteam.config import TeamConfigError, load_team_text, resolve_team
from kgteam.config.resolve import playbook_parts
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer, Question, RetrievalPlan, RetrySignal

TEAM = """\
name: t
model: {provider: none}
kg: {backend: oxigraph, name: metaqa}
playbook: adaptive
"""


def _env(payload, sender):
    return Envelope(session_id="s", sender=sender, payload=payload)


def test_the_sub_teams_roles_join_under_its_slot_name_and_its_answer_goes_to_the_generator():
    roles, routes = playbook_parts("adaptive")
    assert {"graph_planner", "graph_schema_filter", "graph_retriever", "graph_summarizer"} <= set(roles)
    assert roles["graph_planner"].role == "planner"
    # the router's question enters the sub-team; the user's question goes to the parent's entry only
    assert route(_env(Question(text="q"), "router"), routes) == ["graph_contextualizer"]
    assert route(_env(Question(text="q"), "user"), routes) == ["contextualizer"]
    # the sub-team's answer is not the run's answer: it goes on to the generator
    assert route(_env(Answer(confidence=1.0, text="a"), "graph_summarizer"), routes) == ["generator"]


def test_sub_team_routes_without_a_sender_only_hear_the_sub_team():
    _, routes = playbook_parts("adaptive")
    plan = RetrievalPlan(question="q", stage="expanded", topic_entities=[])
    assert route(_env(plan, "graph_planner"), routes) == ["graph_schema_filter"]
    assert route(_env(plan, "someone_else"), routes) == []


def test_a_team_file_picks_another_playbook_for_the_slot():
    spec = load_team_text(TEAM + "subteams:\n  graph: {playbook: triad}\n", check_installed=False)
    team = resolve_team(spec)
    assert {"graph_generalist", "graph_decision_maker", "graph_advisor"} <= set(team.roles)
    assert not any(name.startswith("graph_planner") for name in team.roles)
    # Triad's retry signals stay inside the sub-team
    retry = RetrySignal(phase="parsing", reason="empty_result")
    assert route(_env(retry, "graph_advisor"), team.routes) == ["graph_generalist"]
    assert route(_env(retry, "answer_grader"), team.routes) == []
    assert route(_env(Answer(confidence=1.0, text="a"), "graph_advisor"), team.routes) == ["generator"]


def test_an_unknown_slot_is_a_file_line_error():
    with pytest.raises(TeamConfigError) as info:
        resolve_team(load_team_text(TEAM + "subteams:\n  web: {playbook: triad}\n", check_installed=False),
                     source="team.yaml")
    assert "no sub-team slot 'web'" in str(info.value)


def test_a_playbook_with_sub_teams_cannot_be_a_sub_team():
    with pytest.raises(TeamConfigError) as info:
        resolve_team(load_team_text(TEAM + "subteams:\n  graph: {playbook: adaptive}\n", check_installed=False))
    assert "cannot contain itself" in str(info.value)

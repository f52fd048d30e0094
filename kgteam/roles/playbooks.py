"""Built-in playbooks: role instances plus routes, so a team YAML can say ``playbook: triad``."""

from __future__ import annotations

from dataclasses import dataclass, field

from kgteam.protocols.budgets import Budgets
from kgteam.protocols.routes import Route
from kgteam.roles.base import Role
from kgteam.roles.contextualizer import Contextualizer
from kgteam.roles.triad import Advisor, DecisionMaker, Generalist


@dataclass(frozen=True)
class Playbook:
    name: str
    roles: dict[str, str]  # instance name -> role short name
    routes: list[Route]
    entry: str
    answer_role: str
    default_budgets: Budgets = field(default_factory=Budgets)
    description: str = ""


BUILTIN_ROLES: dict[str, type[Role]] = {
    cls.name: cls for cls in (Generalist, DecisionMaker, Advisor, Contextualizer)
}

TRIAD = Playbook(
    name="triad",
    description="Triad: contextualizer -> generalist -> decision maker -> advisor, with typed retries",
    roles={"contextualizer": "contextualizer", "generalist": "generalist",
           "decision_maker": "decision_maker", "advisor": "advisor"},
    routes=[
        Route(kind="question", to=["contextualizer"], sender="user"),
        Route(kind="question", to=["generalist"], sender="contextualizer"),
        Route(kind="sparql_template", to=["decision_maker"]),
        Route(kind="query_result", to=["advisor"]),
        Route(kind="retry_signal", to=["generalist"], when={"phase": "parsing"}),
        Route(kind="retry_signal", to=["decision_maker"], when={"phase": ["linking", "query"]}),
    ],
    entry="contextualizer",
    answer_role="advisor",
    # T = 3 retries (Triad's optimum); ~7 model calls per question without repairs
    default_budgets=Budgets(max_retries=3, max_llm_calls=30, max_turns=60, timeout_s=120.0),
)

PLAYBOOKS: dict[str, Playbook] = {TRIAD.name: TRIAD}


def build_roles(playbook: Playbook, settings: dict[str, dict] | None = None) -> dict[str, Role]:
    """Instantiate a playbook's roles with default (or given) settings; handy for tests and scripts."""
    settings = settings or {}
    out: dict[str, Role] = {}
    for instance, short in playbook.roles.items():
        cls = BUILTIN_ROLES[short]
        raw = settings.get(instance)
        model = cls.settings_model
        parsed = model.model_validate(raw or {}) if model is not None else None
        out[instance] = cls(parsed, instance_name=instance)
    return out

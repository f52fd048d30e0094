"""Router: should the answer come from the KG, from documents (the web), or from both?

The deterministic decision reads the KG (see ``route_signals``): names it knows, whether the
relations near them are what the question asks, words of time after the KG's snapshot. A model,
when there is one, votes among the routes; its vote can only widen a KG route to "both" (more
evidence, never less), so a small model cannot send a question away from the facts that answer
it. A KG route hands the question to the
graph sub-team; a web route goes to the query rewriter; "both" asks the graph first and then
the documents (the generator sends that on once the graph has answered).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence
from kgteam.protocols.payloads import Question, RouteDecision, RouteName
from kgteam.roles.adaptive.route_signals import route_signals
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, choose
from kgteam.roles.contract import handles
from kgteam.roles.semantic import SemanticLayer, SemanticSettings
from kgteam.roles.semantic.similarity import team_similarity

ROUTES: tuple[RouteName, ...] = ("kg", "web", "both")
MEANING = {"kg": "the knowledge graph alone", "web": "documents found by a search alone",
           "both": "the knowledge graph first, then documents to finish or check the answer"}


class RouterSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model vote on the route")
    snapshot_year: int | None = Field(None, description="the year the KG describes; later years go to the web")
    hops: int = Field(2, ge=1, le=3, description="relation hops around the question's entities that may explain it")
    force: RouteName | None = Field(None, description="always take this route (baselines and tests)")
    semantic: SemanticSettings = Field(default_factory=SemanticSettings, description="the path scorer's settings")


class Router(Role[RouterSettings]):
    name: ClassVar[str] = "router"
    tools: ClassVar[tuple[str, ...]] = ("search_entities", "entity_schema", "run_sparql", "relation_names", "labels_for")
    prompts: ClassVar[tuple[str, ...]] = ("adaptive_route",)
    informs = (RouteDecision,)

    @handles
    async def on_question(self, question: Question, ctx: RoleContext) -> list[RouteDecision | Question]:
        if self.settings.force is not None:
            decision = RouteDecision(route=self.settings.force, reason="the team always takes this route",
                                     question=question.text)
        else:
            decision = await self._decide(question.text, ctx)
        out: list[RouteDecision | Question] = [decision]
        if decision.route in ("kg", "both"):
            out.append(question.model_copy(update={"route": decision.route}))
        ctx.trace.record("route", role=self.instance_name, route=decision.route, reason=decision.reason,
                         signals=decision.signals)
        return out

    async def _decide(self, text: str, ctx: RoleContext) -> RouteDecision:
        layer = SemanticLayer(ctx.tools, team_similarity(ctx.tools), self.settings.semantic)
        signals = await route_signals(text, ctx.tools, layer, snapshot_year=self.settings.snapshot_year,
                                      hops=self.settings.hops)
        route, reason = signals.decide()
        if self.settings.use_model and route == "kg":
            options = [Option(key=r, label=f"{r}: {MEANING[r]}", score=1.0 if r == route else 0.0) for r in ROUTES]
            res = await choose(ctx, role=self.instance_name, decision="route", prompt=self.prompt("adaptive_route"),
                               options=options, k=1, ask_when_trivial=True,
                               values={"question": fence(text, tag="question"),
                                       "signals": fence(reason, tag="signals")})
            if res.source == "llm" and res.llm_picked == ["both"]:
                route = "both"
                reason = f"the model asked for documents too ({res.reason or 'no reason given'}); the KG's signals: {reason}"
        return RouteDecision(route=route, reason=reason, question=text, signals=signals.as_dict())

"""Pseudo-graph generator: the facts the question needs, then the team's belief about them as Turtle.

With a model: it lists the facts it needs, then writes what it believes about them as Turtle
(``_:answer`` marks what the question asks for); the Turtle is parsed by the RDF parser kgteam
ships, and a parse error is repaired once, then sent back as a typed retry signal (phase
``parsing``, reason ``parse_error``) while the supervisor allows retries. Without a model, or
when retries are spent, the semantic layer's reading of the question is the pseudo-graph.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.llm.fencing import fence
from kgteam.llm.no_model import model_available
from kgteam.protocols.payloads import PseudoGraph, Question, RetryHint, RetrySignal
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles
from kgteam.roles.pgakv.pseudo_code import PseudoCodeError, parse_pseudo_graph
from kgteam.roles.pgakv.reading import open_graph, reading_graph
from kgteam.roles.pgakv.writing import is_open_ended
from kgteam.roles.semantic import SemanticSettings
from kgteam.tools.types import ToolError


class GeneratorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model write the pseudo-graph (else: the semantic layer's reading)")
    max_triples: int = Field(40, ge=1, le=200, description="pseudo-triples kept from the model's Turtle")
    max_walks: int = Field(1000, ge=1, le=5000, description="walks of the reading's path turned into pseudo-triples "
                           "(one per answer: fewer leaves answers out)")
    max_relations: int = Field(8, ge=1, le=50, description="relations of the topic an open-ended question asks about")
    max_repairs: int = Field(1, ge=0, le=3, description="repairs asked after Turtle that does not parse")
    semantic: SemanticSettings = Field(default_factory=SemanticSettings, description="the model-free reading's ranking")


class PseudoCode(BaseModel):
    facts_needed: list[str] = Field(default_factory=list, max_length=12)
    turtle: str = Field(max_length=8000)


class PseudoGraphGenerator(Role[GeneratorSettings]):
    name: ClassVar[str] = "pseudo_graph_generator"
    tools: ClassVar[tuple[str, ...]] = ("search_entities", "entity_schema", "run_sparql", "labels_for",
                                        "relation_names")
    prompts: ClassVar[tuple[str, ...]] = ("pgakv_generate",)
    reads = (Question,)

    @handles
    async def on_question(self, question: Question, ctx: RoleContext) -> PseudoGraph | RetrySignal:
        return await self._generate(question.text, ctx, hint="", attempt=1)

    @handles
    async def on_retry(self, signal: RetrySignal, ctx: RoleContext) -> PseudoGraph | RetrySignal:
        question = ctx.ancestor(Question)
        return await self._generate(question.text if question else "", ctx, hint=signal.hint.note,
                                    attempt=signal.attempt + 1)

    async def _generate(self, text: str, ctx: RoleContext, *, hint: str, attempt: int) -> PseudoGraph | RetrySignal:
        if not (self.settings.use_model and model_available(ctx.model)):
            return await self._reading(text, ctx)
        errors: list[str] = []

        def validate(out: PseudoCode) -> str | None:
            try:
                parse_pseudo_graph(out.turtle, max_triples=self.settings.max_triples)
            except PseudoCodeError as exc:
                errors.append(str(exc))
                return f"the Turtle does not parse: {exc}"
            return None

        res = await produce(ctx, role=self.instance_name, decision="pseudo_graph", prompt=self.prompt("pgakv_generate"),
                            output=PseudoCode, validate=validate, fallback=lambda: None,
                            values={"question": fence(text, tag="question"),
                                    "hint": fence(hint or "none", tag="previous_error")},
                            max_repairs=self.settings.max_repairs, max_tokens=512)
        if res.value is None:
            if errors and ctx.budgets.remaining("max_retries") > 0:
                return RetrySignal(phase="parsing", reason="parse_error", attempt=attempt,
                                   hint=RetryHint(note=f"the Turtle did not parse: {errors[-1]}"))
            ctx.trace.record("pseudo_graph_fallback", role=self.instance_name, reason=res.reason)
            return await self._reading(text, ctx)
        triples = parse_pseudo_graph(res.value.turtle, max_triples=self.settings.max_triples)
        graph = PseudoGraph(triples=triples, code=res.value.turtle, question=text, plan=list(res.value.facts_needed),
                            open_ended=is_open_ended(text), source="llm")
        ctx.trace.record("pseudo_graph", role=self.instance_name, source="llm", triples=len(triples))
        return graph

    async def _reading(self, text: str, ctx: RoleContext) -> PseudoGraph:
        try:
            if is_open_ended(text):
                graph = await open_graph(text, ctx.tools, max_relations=self.settings.max_relations)
            else:
                graph = await reading_graph(text, ctx.tools, self.settings.semantic, max_walks=self.settings.max_walks)
        except ToolError as exc:
            graph = PseudoGraph(triples=[], question=text, plan=[f"reading the question failed: {exc}"])
        ctx.trace.record("pseudo_graph", role=self.instance_name, source="reading", triples=len(graph.triples))
        return graph

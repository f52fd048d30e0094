"""Planner: the question's topic entities, then one schema-level hop of the plan per message.

On a question it finds the topic entities (the label index's exact spans, plus names the model
copies out of the question when a model is there) and lists the relations around them with
their counts and value types (``entity_schema``), never their instances. On a plan the filter
called insufficient it grows the kept paths by one hop, and so the plan goes one level deeper.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence
from kgteam.protocols.payloads import Question, RetrievalPlan, TopicMention
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles
from kgteam.roles.fewshot import worked_examples
from kgteam.roles.kerag.retrieval import combine_of
from kgteam.roles.semantic.mentions import is_exact_hit
from kgteam.roles.semantic.path_planning import Limits, expand
from kgteam.roles.semantic.topics import find_topics, topic_from_text
from kgteam.tools.types import ToolError


class PlannerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model propose topic mentions (checked against the KG)")
    max_mentions: int = Field(3, ge=1, le=10, description="topic mentions per question")
    max_entities: int = Field(3, ge=1, le=10, description="KG entities tried per mention")
    max_repairs: int = Field(1, ge=0, le=3, description="repairs asked after an invalid model reply")
    worked_examples: int = Field(3, ge=0, le=10, description="examples of the KG's bank nearest the question "
                                 "shown to the model as worked examples (0: none; no bank: none)")


class ProposedMentions(BaseModel):
    mentions: list[str] = Field(default_factory=list, max_length=10)


class Planner(Role[PlannerSettings]):
    name: ClassVar[str] = "planner"
    tools: ClassVar[tuple[str, ...]] = ("search_entities", "entity_schema", "run_sparql", "labels_for")
    prompts: ClassVar[tuple[str, ...]] = ("kerag_topics",)
    deepens = (RetrievalPlan,)

    @handles
    async def on_question(self, question: Question, ctx: RoleContext) -> RetrievalPlan:
        topics = await self._topics(question.text, ctx)
        ctx.trace.record("plan_topics", role=self.instance_name, topics=[t.model_dump() for t in topics])
        plan = RetrievalPlan(topic_entities=[i for t in topics for i in t.iris[: self.settings.max_entities]],
                             question=question.text, mentions=topics, combine=combine_of(question.text, topics),
                             hops=1, stage="expanded")
        if not topics:
            return plan.model_copy(update={"sufficient": True, "stage": "filtered",
                                           "reason": "no entity of the question was found in the knowledge graph"})
        plan.candidates = await expand(ctx.tools, topics, [], 1, self._limits())
        return plan

    @handles
    async def on_plan(self, plan: RetrievalPlan, ctx: RoleContext) -> RetrievalPlan:
        """Grow the kept paths one hop (routed here only while the filter says the plan is short)."""
        hop = plan.hops + 1
        candidates = await expand(ctx.tools, plan.mentions, plan.kept, hop, self._limits())
        grown = plan.model_copy(update={"hops": hop, "stage": "expanded", "candidates": candidates, "reason": ""})
        if not candidates:
            return grown.model_copy(update={"hops": plan.hops, "stage": "filtered", "sufficient": True,
                                            "reason": "no relation leads further from the kept paths"})
        return grown

    async def _worked(self, question: str, ctx: RoleContext, topics: list[TopicMention]) -> str:
        """The bank's nearest worked examples, ending in a blank line (nothing without them)."""
        block = await worked_examples(question, ctx, self.settings.worked_examples, role=self.instance_name,
                                      mentions=[t.text for t in topics])
        return block + "\n\n" if block else ""

    def _limits(self) -> Limits:
        return Limits(max_entities=self.settings.max_entities)

    async def _topics(self, question: str, ctx: RoleContext) -> list[TopicMention]:
        spotted = await find_topics(question, ctx.tools, max_mentions=self.settings.max_mentions)
        if not self.settings.use_model or len(spotted) >= self.settings.max_mentions:
            return spotted  # the model could add nothing

        def validate(out: ProposedMentions) -> str | None:
            absent = [m for m in out.mentions if not m.strip() or m.strip().lower() not in question.lower()]
            return f"copy mentions from the question; not in it: {absent[:3]}" if absent else None

        worked = await self._worked(question, ctx, spotted)
        res = await produce(ctx, role=self.instance_name, decision="topics", prompt=self.prompt("kerag_topics"),
                            output=ProposedMentions, validate=validate, fallback=lambda: ProposedMentions(),
                            values={"question": fence(question, tag="question"), "worked": worked,
                                    "max_mentions": self.settings.max_mentions},
                            max_repairs=self.settings.max_repairs, max_tokens=96)
        topics = list(spotted)
        for text in res.value.mentions:
            if any(text.strip().lower() == t.text.lower() for t in topics):
                continue
            try:
                hits = await ctx.tools["search_entities"](text.strip(), k=5)
            except ToolError:
                continue
            iris = list(dict.fromkeys(h.iri for h in hits if is_exact_hit(h, text.strip())))
            placed = topic_from_text(question, text.strip(), iris) if iris else None
            if placed and not any(placed.start < t.end and t.start < placed.end for t in topics):
                topics.append(placed)  # a model's mention only where the KG knows it exactly
        return topics[: self.settings.max_mentions]

"""Anchor extractor: the entities a question is about, from the entity linker and the model, united.

The linker is the label index's mention spotting (KERAG's topic finder). A model, when there is
one, may add names it copies out of the question; each must occur in the question word for word
and be a name the KG knows exactly, else it is dropped (a model cannot add an entity the KG lacks).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence
from kgteam.protocols.payloads import Anchors, Question
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles
from kgteam.roles.r3.rules import question_form
from kgteam.roles.semantic.mentions import is_exact_hit
from kgteam.roles.semantic.topics import find_topics, topic_from_text
from kgteam.tools.types import ToolError


class AnchorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model add names from the question")
    max_anchors: int = Field(4, ge=1, le=8, description="anchors kept")


class ModelNames(BaseModel):
    names: list[str] = Field(default_factory=list, max_length=6)


class AnchorExtractor(Role[AnchorSettings]):
    name: ClassVar[str] = "anchor_extractor"
    tools: ClassVar[tuple[str, ...]] = ("search_entities",)
    prompts: ClassVar[tuple[str, ...]] = ("r3_anchors",)

    @handles
    async def on_question(self, question: Question, ctx: RoleContext) -> Anchors:
        text = question.text
        anchors = await find_topics(text, ctx.tools, max_mentions=self.settings.max_anchors)
        if self.settings.use_model:
            res = await produce(ctx, role=self.instance_name, decision="anchors", prompt=self.prompt("r3_anchors"),
                                output=ModelNames, validate=lambda v: None if all(n in text for n in v.names)
                                else "every name must be copied from the question", fallback=lambda: None,
                                values={"question": fence(text, tag="question")}, max_tokens=96)
            for name in (res.value.names if res.value else []):
                if any(a.text == name for a in anchors):
                    continue
                try:
                    hits = await ctx.tools["search_entities"](name, k=3)
                except ToolError:
                    continue
                iris = [h.iri for h in hits if is_exact_hit(h, name)]
                placed = topic_from_text(text, name, iris) if iris else None
                if placed is not None:
                    anchors.append(placed)
        return Anchors(question=text, form=question_form(text, anchors), anchors=anchors[: self.settings.max_anchors])

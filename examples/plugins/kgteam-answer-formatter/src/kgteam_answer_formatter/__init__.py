"""An out-of-tree kgteam role and tool: answer post-processing, registered by entry points.

``answer_formatter`` (a role) dedupes, sorts and caps an answer's values and phrases them — by
itself, or with the team's model using the prompt shipped in this package's ``prompts/`` folder
(checked: the model may only list the values). ``entity_degree`` (a tool) counts the triples that
touch an entity, so the formatter can put the best-connected answers first.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence
from kgteam.protocols.payloads import Answer, AnswerValue
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles
from kgteam_answer_formatter.tools import entity_degree

__all__ = ["AnswerFormatter", "FormatterSettings", "entity_degree"]


class FormatterSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sort: Literal["none", "alpha", "degree"] = Field(
        "alpha", description="alpha: alphabetically (numbers numerically); degree: best-connected in the KG first")
    max_values: int = Field(10, ge=1, description="list at most this many values in the text")
    style: Literal["sentence", "bullets"] = "sentence"
    prefix: str = Field("", description="text put before the values, e.g. 'Answer: '")
    phrase_with_model: bool = Field(False, description="let the model phrase the sentence (prompt: phrase.txt)")


class Phrase(BaseModel):
    sentence: str = Field(min_length=1, max_length=500)


def _sort_key(value: AnswerValue) -> tuple[int, float, str]:
    try:
        return (0, float(value.label), value.label)
    except ValueError:
        return (1, 0.0, value.label.casefold())


class AnswerFormatter(Role[FormatterSettings]):
    """Dedupes, sorts and caps answer values, and phrases them as one readable sentence."""

    name = "answer_formatter"
    tools: ClassVar[tuple[str, ...]] = ("entity_degree",)
    prompts: ClassVar[tuple[str, ...]] = ("phrase",)

    @handles
    async def on_answer(self, answer: Answer, ctx: RoleContext) -> list[Answer]:
        settings = self.settings
        if not answer.values:  # "I don't know", errors, free text: nothing to format
            return [answer.model_copy(deep=True)]
        seen: set[str] = set()
        values: list[AnswerValue] = []
        for value in answer.values:
            key = (value.iri or value.label).casefold()
            if key not in seen:
                seen.add(key)
                values.append(value)
        if settings.sort == "alpha":
            values.sort(key=_sort_key)
        elif settings.sort == "degree":
            degree = {v.iri: await ctx.tools["entity_degree"](v.iri) for v in values if v.iri}
            values.sort(key=lambda v: (-degree.get(v.iri or "", 0), _sort_key(v)))
        labels = [v.label for v in values]
        text = self.phrase(labels, settings)
        if settings.phrase_with_model:
            text = await self._model_phrase(ctx, labels[: settings.max_values], text)
        text = settings.prefix + text
        ctx.trace.record("answer_formatted", role=self.instance_name, before=len(answer.values),
                         after=len(values), text=text)
        return [answer.model_copy(update={"values": values, "text": text}, deep=True)]

    async def _model_phrase(self, ctx: RoleContext, labels: list[str], plain: str) -> str:
        def validate(out: Phrase) -> str | None:
            missing = [x for x in labels if x.casefold() not in out.sentence.casefold()]
            return f"name every value; missing: {missing[:3]}" if missing else None

        res = await produce(ctx, role=self.instance_name, decision="phrase", prompt=self.prompt("phrase"),
                            output=Phrase, values={"values": fence("\n".join(labels), tag="values")},
                            validate=validate, fallback=lambda: Phrase(sentence=plain), max_repairs=0)
        return res.value.sentence

    @staticmethod
    def phrase(labels: list[str], settings: FormatterSettings) -> str:
        shown, rest = labels[: settings.max_values], len(labels) - settings.max_values
        if settings.style == "bullets":
            lines = [f"- {label}" for label in shown]
            if rest > 0:
                lines.append(f"- … and {rest} more")
            return "\n".join(lines)
        if rest > 0:
            return ", ".join(shown) + f" and {rest} more"
        if len(shown) == 1:
            return shown[0]
        return ", ".join(shown[:-1]) + " and " + shown[-1]

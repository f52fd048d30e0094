"""An out-of-tree kgteam role: deterministic answer post-processing, registered by entry point."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer, AnswerValue, Payload
from kgteam.roles.base import Role, RoleContext

__all__ = ["AnswerFormatter", "FormatterSettings"]


class FormatterSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sort: bool = Field(True, description="sort values alphabetically (numbers numerically)")
    max_values: int = Field(10, ge=1, description="list at most this many values in the text")
    style: Literal["sentence", "bullets"] = "sentence"
    prefix: str = Field("", description="text put before the values, e.g. 'Answer: '")


def _sort_key(value: AnswerValue) -> tuple[int, float, str]:
    try:
        return (0, float(value.label), value.label)
    except ValueError:
        return (1, 0.0, value.label.casefold())


class AnswerFormatter(Role):
    """Dedupes, sorts and caps answer values, and phrases them as one readable sentence."""

    name = "answer_formatter"
    consumes = ("answer",)
    produces = ("answer",)
    settings_model = FormatterSettings

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        answer = message.payload
        assert isinstance(answer, Answer)
        settings = self.settings if isinstance(self.settings, FormatterSettings) else FormatterSettings()
        if not answer.values:  # "I don't know", errors, free text: nothing to format
            return [answer.model_copy(deep=True)]
        seen: set[str] = set()
        values: list[AnswerValue] = []
        for value in answer.values:
            key = (value.iri or value.label).casefold()
            if key not in seen:
                seen.add(key)
                values.append(value)
        if settings.sort:
            values.sort(key=_sort_key)
        text = settings.prefix + self.phrase([v.label for v in values], settings)
        ctx.trace.record("answer_formatted", role=self.instance_name, before=len(answer.values),
                         after=len(values), text=text)
        return [answer.model_copy(update={"values": values, "text": text}, deep=True)]

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

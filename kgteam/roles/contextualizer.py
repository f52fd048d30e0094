"""Contextualizer: turns a chat follow-up ("and who directed it?") into a standalone question.

Without history, or when the question has no reference to resolve, it passes the question
through without a model call. Otherwise the model rewrites it from the session history; the
rewrite must name something the history actually mentions and leave no pronoun unresolved,
else a deterministic rewrite replaces the reference with the previous answer's first value
(or the previous question's entity).
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import BaseModel, Field

from kgteam.prompts import fence
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer, Payload, Question
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce

_REFERENCES = [
    r"that (?:film|movie|one|person|actor|actress|director|writer)", r"this (?:film|movie|one|person)",
    r"the same (?:film|movie)", r"it", r"its", r"they", r"them", r"their", r"him", r"her", r"his", r"he", r"she",
]
_REF_RE = re.compile(r"\b(?:" + "|".join(_REFERENCES) + r")\b", re.IGNORECASE)
_POSSESSIVE = {"its", "their", "his", "her"}
_BRACKET = re.compile(r"\[([^\[\]]+)\]")
_CAPS = re.compile(r"\b[A-Z][\w'.-]*(?:\s+(?:[A-Z][\w'.-]*|of|the|and|de|la|von|van))*")


class ContextualizerSettings(BaseModel):
    use_model: bool = True
    max_repairs: int = Field(1, ge=0, le=3)
    history_turns: int = Field(3, ge=1, le=20)


class Rewrite(BaseModel):
    question: str = Field(min_length=3, max_length=500)


def needs_context(question: str) -> bool:
    return _REF_RE.search(question) is not None


def previous_topic(question: str) -> str | None:
    """The entity an earlier question was about: a [bracketed] span, else its longest capitalised span."""
    m = _BRACKET.search(question)
    if m:
        return m.group(1)
    spans = [s.strip() for s in _CAPS.findall(question[1:] if question[:1].isupper() else question)]
    spans = [s for s in spans if s.lower() not in {"i", "what", "who", "which", "when", "where", "how"}]
    return max(spans, key=len) if spans else None


def referents(history: list[tuple[str, Answer]]) -> list[str]:
    """Names a follow-up may point at, most likely first: last answer's values, then its topic."""
    out: list[str] = []
    for q, a in reversed(history):
        out += [v.label for v in a.values[:3]]
        topic = previous_topic(q)
        if topic:
            out.append(topic)
    return list(dict.fromkeys(n for n in out if n))


def deterministic_rewrite(question: str, history: list[tuple[str, Answer]]) -> str:
    names = referents(history)
    if not names:
        return question
    target = names[0]
    q = re.sub(r"^\s*(?:and|so|then|ok(?:ay)?|also)\b[\s,]*", "", question, flags=re.IGNORECASE)

    def repl(m: re.Match[str]) -> str:
        word = m.group(0).lower()
        return f"{target}'s" if word in _POSSESSIVE else target

    return _REF_RE.sub(repl, q, count=1).strip()


class Contextualizer(Role):
    name: ClassVar[str] = "contextualizer"
    consumes: ClassVar[tuple[str, ...]] = ("question",)
    produces: ClassVar[tuple[str, ...]] = ("question",)
    prompts: ClassVar[tuple[str, ...]] = ("contextualize",)
    settings_model: ClassVar[type[BaseModel] | None] = ContextualizerSettings

    @property
    def cfg(self) -> ContextualizerSettings:
        return self.settings if isinstance(self.settings, ContextualizerSettings) else ContextualizerSettings()

    async def handle(self, message: Envelope, ctx: RoleContext) -> list[Payload]:
        q = message.payload
        assert isinstance(q, Question)
        original = q.original_text or q.text
        history = ctx.history[-self.cfg.history_turns :]
        if not history or not needs_context(q.text):
            ctx.trace.record("decision", role=self.instance_name, decision="contextualize", source="trivial",
                             reason="no history" if not history else "already standalone")
            return [Question(text=q.text, original_text=original)]
        names = referents(history)
        fallback_text = deterministic_rewrite(q.text, history)
        if not self.cfg.use_model:
            return [Question(text=fallback_text, original_text=original)]

        def validate(out: Rewrite) -> str | None:
            if names and not any(n.lower() in out.question.lower() for n in names):
                return f"the rewrite must name what the follow-up refers to (one of {names[:4]})"
            if needs_context(out.question):
                return "the rewrite still contains a pronoun such as 'it' or 'they'"
            return None

        lines = []
        for hq, ha in history:
            lines.append(f"Q: {hq}\nA: {ha.text}")
        res = await produce(ctx, role=self.instance_name, decision="contextualize", prompt="contextualize",
                            output=Rewrite, values={"history": fence("\n".join(lines), tag="history"),
                                                    "question": fence(q.text, tag="question")},
                            validate=validate, fallback=lambda: Rewrite(question=fallback_text),
                            max_repairs=self.cfg.max_repairs)
        return [Question(text=res.value.question, original_text=original)]

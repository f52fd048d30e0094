"""Document grader: which retrieved documents are about what the question asks.

A document is relevant when it writes the question's names (title or text) and shares its
content words; the score is the share of names it carries and of words it shares. A model, when
there is one, votes on which documents to keep, breaking near-ties around the cut. When nothing
is kept and retries remain, the grader asks the query rewriter for another search.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence, one_line
from kgteam.protocols.evidence import EvidenceDocument
from kgteam.protocols.payloads import (
    Documents,
    DroppedDocument,
    GradedDocuments,
    RetryHint,
    RetrySignal,
)
from kgteam.roles.adaptive.reading import contains_name, content_words, question_names
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, choose
from kgteam.roles.contract import handles
from kgteam.roles.semantic.text import normalise


class DocumentGraderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model vote on which documents are relevant")
    min_score: float = Field(0.5, ge=0.0, le=1.0, description="relevance a document needs to be kept")
    max_kept: int = Field(5, ge=1, le=20, description="documents passed to the generator")


def relevance(question: str, doc: EvidenceDocument) -> tuple[float, str]:
    """(score in 0..1, why): the share of the question's names the document writes and of its
    content words it shares."""
    names = question_names(question)
    words = set(content_words(question)) - {w for n in names for w in content_words(n)}
    text = f"{doc.title or ''}\n{doc.text}"
    have = [n for n in names if contains_name(text, n)]
    shared = words & set(content_words(text))
    name_part = len(have) / len(names) if names else None
    word_part = len(shared) / len(words) if words else None
    parts = [p for p in (name_part, word_part) if p is not None]
    if not parts:
        return 0.0, "the question has no words to look for"
    score = 0.6 * name_part + 0.4 * (word_part if word_part is not None else name_part) if name_part is not None \
        else word_part or 0.0
    missing = [n for n in names if n not in have]
    why = (f"writes {len(have)}/{len(names)} names" if names else "") + (
        f", shares {len(shared)}/{len(words)} words" if words else "") + (f"; lacks {missing[:2]}" if missing else "")
    return round(score, 4), why.strip(", ")


class DocumentGrader(Role[DocumentGraderSettings]):
    name: ClassVar[str] = "document_grader"
    prompts: ClassVar[tuple[str, ...]] = ("adaptive_grade_documents",)

    @handles
    async def on_documents(self, found: Documents, ctx: RoleContext) -> GradedDocuments | RetrySignal:
        scored = [(doc, *relevance(found.question, doc)) for doc in found.documents]
        names = {normalise(n) for n in question_names(found.question)}
        # a document titled with one of the question's names is about it: it comes first
        keep = [d for d, s, _ in sorted(scored, key=lambda x: (normalise(x[0].title or "") not in names, -x[1]))
                if s >= self.settings.min_score]
        keep = keep[: self.settings.max_kept]
        if self.settings.use_model and len(scored) > 1:
            options = [Option(key=d.id, label=one_line(f"{d.title or d.id}: {d.text[:300]}"), score=s)
                       for d, s, _ in scored]
            res = await choose(ctx, role=self.instance_name, decision="grade_documents",
                               prompt=self.prompt("adaptive_grade_documents"), options=options,
                               k=max(1, len(keep)), values={"question": fence(found.question, tag="question")})
            by_id = {d.id: (d, s) for d, s, _ in scored}
            if res.source == "llm":  # the model may only swap near the cut: never keep an unrelated one
                keep = [by_id[o.key][0] for o in res.chosen if by_id[o.key][1] >= self.settings.min_score / 2]
        kept_ids = {d.id for d in keep}
        dropped = [DroppedDocument(id=d.id, title=d.title, reason=why) for d, s, why in scored if d.id not in kept_ids]
        ctx.trace.record("grade_documents", role=self.instance_name, kept=[d.title or d.id for d in keep],
                         dropped=[(x.title or x.id, x.reason) for x in dropped])
        if not keep and found.documents is not None and ctx.budgets.remaining("max_retries") > 0:
            return RetrySignal(phase="retrieval", reason="empty_result",
                               hint=RetryHint(note="no document was about the question", exclude=found.queries))
        return GradedDocuments(question=found.question, kept=keep, dropped=dropped)

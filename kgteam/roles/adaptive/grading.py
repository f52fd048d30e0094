"""What both graders of the adaptive loops share: the verdict a model gives and the rule that
checks a draft's values against the facts it was built from."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import one_line
from kgteam.protocols.payloads import Draft
from kgteam.roles.adaptive.reading import supported_by
from kgteam.roles.semantic.text import normalise


class Verdict(BaseModel):
    verdict: bool
    reason: str = ""


class GraderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model grade drafts the rule passed")


def unsupported_values(draft: Draft) -> list[str]:
    """Values of the draft that no kept document writes and no evidence triple names."""
    named = {normalise(x) for t in draft.evidence.triples for x in (t.subject_label or "", t.object_label or "")}
    return [v.label for v in draft.values
            if normalise(v.label) not in named and supported_by(v.label, draft.evidence.documents) is None]


def facts_block(draft: Draft) -> str:
    lines = [f"{d.title or d.id}: {one_line(d.text[:400])}" for d in draft.evidence.documents[:3]]
    lines += [f"{t.subject_label} {t.predicate_label} {t.object_label}" for t in draft.evidence.triples[:10]]
    return "\n".join(lines) or "(none)"



"""Query rewriter: a few search queries for the question, searched and merged.

Deterministic queries are the question itself, its names with its content words, and its names
alone; a retry skips the queries already tried. A model may add up to ``max_model_queries`` of its
own (plain text, checked for length; they only widen the search, they state nothing). Every
query's hits are merged by reciprocal rank, so a document that several queries find rises.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence
from kgteam.protocols.evidence import EvidenceDocument
from kgteam.protocols.payloads import Documents, RetrySignal, RouteDecision
from kgteam.roles.adaptive.reading import question_names
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles
from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, tokenize
from kgteam.tools.fusion import reciprocal_rank_fusion
from kgteam.tools.types import ToolError


class RewriterSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model add search queries of its own")
    queries: int = Field(2, ge=1, le=5, description="deterministic queries searched per attempt")
    max_model_queries: int = Field(2, ge=0, le=5, description="queries a model may add")
    k: int = Field(8, ge=1, le=50, description="hits asked of each query")
    keep: int = Field(8, ge=1, le=50, description="documents passed on after merging")


class ModelQueries(BaseModel):
    queries: list[str] = Field(default_factory=list, max_length=5)


def deterministic_queries(question: str) -> list[str]:
    """Search strings from the question's own words, most literal first (no repeats)."""
    names = question_names(question)
    words = [t.text for t in tokenize(question) if t.lower not in STOPWORDS and t.lower not in WH_WORDS
             and not any(t.text in n.split() for n in names)]
    out = [question.strip().rstrip("?"), " ".join([*names, *words]), " ".join(f'"{n}"' for n in names),
           " ".join(words)]
    seen: list[str] = []
    for q in out:
        q = " ".join(q.split())
        if q and q.lower() not in [s.lower() for s in seen]:
            seen.append(q)
    return seen


def as_document(hit: Any) -> EvidenceDocument:
    """A search hit (any provider's ``Document``) as evidence."""
    get = hit.get if isinstance(hit, dict) else lambda k, d=None: getattr(hit, k, d)
    text = get("snippet") or get("text") or ""
    return EvidenceDocument(id=str(get("id") or get("url") or text[:40]), text=text, title=get("title"),
                            source=get("source"), url=get("url"), score=float(get("score") or 0.0))


class QueryRewriter(Role[RewriterSettings]):
    name: ClassVar[str] = "query_rewriter"
    tools: ClassVar[tuple[str, ...]] = ("web_search",)
    prompts: ClassVar[tuple[str, ...]] = ("adaptive_rewrite",)
    reads = (Documents, RouteDecision)

    @handles
    async def on_route(self, decision: RouteDecision, ctx: RoleContext) -> Documents:
        return await self._search(decision.question, [], ctx)

    @handles
    async def on_retry(self, signal: RetrySignal, ctx: RoleContext) -> Documents:
        decision = ctx.ancestor(RouteDecision)
        docs = ctx.ancestor(Documents)
        question = decision.question if decision else (docs.question if docs else "")
        return await self._search(question, [*signal.hint.exclude, *(docs.queries if docs else [])], ctx,
                                  hint=signal.hint.text())

    async def _search(self, question: str, tried: list[str], ctx: RoleContext, hint: str = "") -> Documents:
        fresh = [q for q in deterministic_queries(question) if q not in tried]
        queries = fresh[: self.settings.queries] or deterministic_queries(question)[:1]
        if self.settings.use_model and self.settings.max_model_queries:
            queries += await self._model_queries(question, queries, tried, hint, ctx)
        rankings: list[list[str]] = []
        by_id: dict[str, EvidenceDocument] = {}
        errors: list[str] = []
        for q in queries:
            try:
                hits = await ctx.tools["web_search"](query=q, k=self.settings.k)
            except ToolError as exc:
                errors.append(f"{q!r}: {exc}")
                continue
            docs = [as_document(h) for h in hits]
            rankings.append([d.id for d in docs])
            for d in docs:
                by_id.setdefault(d.id, d)
        merged = reciprocal_rank_fusion(rankings) if rankings else []
        kept = [by_id[i].model_copy(update={"score": round(s, 5)}) for i, s in merged[: self.settings.keep]]
        ctx.trace.record("web_search", role=self.instance_name, queries=queries, found=len(by_id),
                         kept=[d.title or d.id for d in kept], errors=errors)
        return Documents(documents=kept, question=question, queries=[*tried, *queries], errors=errors)

    async def _model_queries(self, question: str, queries: list[str], tried: list[str], hint: str,
                             ctx: RoleContext) -> list[str]:
        def check(value: ModelQueries) -> str | None:
            bad = [q for q in value.queries if not q.strip() or len(q) > 200]
            return f"queries must be 1-200 characters: {bad[:2]}" if bad else None

        res = await produce(ctx, role=self.instance_name, decision="rewrite", prompt=self.prompt("adaptive_rewrite"),
                            output=ModelQueries, validate=check, fallback=lambda: None,
                            values={"question": fence(question, tag="question"),
                                    "tried": fence("\n".join([*tried, *queries]) or "(none)", tag="tried"),
                                    "hint": fence(hint or "(none)", tag="hint"), "n": self.settings.max_model_queries},
                            max_tokens=160)
        if res.value is None:
            return []
        return [q.strip() for q in res.value.queries if q.strip() not in queries][: self.settings.max_model_queries]

"""Atomic verification: each pseudo-triple retrieves its most similar real triples from every KG source.

Sources are ``(kg_name, tools)`` pairs, so the verifier retrieves from one KG or several alike.
A KG with a triple vector index answers ``similar_triples``; a KG without one (a remote SPARQL
endpoint, a KG loaded with ``--no-embed``) gets the paper's "semantic KG built per question":
the bounded neighbourhood of the entities the pseudo-triples link to is verbalised and embedded
on the fly, within the supervisor's ``max_embed_triples`` and ``embed_timeout_s``.

Pruning (two steps, as the method describes): keep the k subjects seen most often among the
retrieved triples, k = the pseudo-graph's subject count; then drop subjects whose retrieved
triples' mean similarity is under a threshold calibrated for the embedder in use.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kgteam.protocols.payloads import AtomicCheck, DroppedSubject, PseudoGraph, PseudoTriple, RetrievedTriple
from kgteam.roles.semantic.mentions import is_exact_hit
from kgteam.tools.sparql_guard import sparql_iri
from kgteam.tools.types import ToolError

Similarity = Callable[[list[str], list[str]], Awaitable[list[list[float]]]]
Source = tuple[str, Any]  # (kg name, a toolbox granting similar_triples / neighbors / search_entities / run_sparql)

# Mean cosine under which a retrieved subject is dropped, per embedder (benchmarks/pgakv_threshold.py
# measured it; docs/decisions.md). The paper's 0.7 belongs to its own sentence encoder.
CALIBRATED_THRESHOLDS: dict[str, float] = {"wordllama": 0.38}
DEFAULT_EMBEDDER = "wordllama"


def calibrated_threshold(embedder: str | None) -> float:
    """The threshold measured for ``embedder`` (by name prefix), else the default embedder's."""
    name = (embedder or DEFAULT_EMBEDDER).lower()
    for key, value in CALIBRATED_THRESHOLDS.items():
        if name.startswith(key):
            return value
    return CALIBRATED_THRESHOLDS[DEFAULT_EMBEDDER]


@dataclass
class EmbedBudget:
    """What on-the-fly embedding may still spend this question (the supervisor's budgets)."""

    max_triples: int = 2000
    timeout_s: float = 2.0
    started: float = field(default_factory=time.monotonic)
    embedded: int = 0
    truncated: bool = False

    def room(self) -> int:
        if time.monotonic() - self.started > self.timeout_s:
            self.truncated = True
            return 0
        return max(0, self.max_triples - self.embedded)


def verbalise(t: Any) -> str:
    """A real triple as words: "subject predicate object" by labels."""
    parts = (t.subject_label or t.subject, t.predicate_label or t.predicate, t.object_label or t.object)
    return " ".join(str(p).replace("_", " ") for p in parts)


class SourceRetriever:
    """One KG source's retrieval for one question (entity links and neighbourhoods cached)."""

    def __init__(self, name: str, tools: Any, similarity: Similarity | None, budget: EmbedBudget,
                 *, k: int = 10, per_entity: int = 200) -> None:
        self.name, self.tools, self.similarity, self.budget = name, tools, similarity, budget
        self.k, self.per_entity = k, per_entity
        self.indexed: bool | None = None  # does this KG answer similar_triples (None: not asked yet)
        self.on_the_fly = False
        self._links: dict[str, list[str]] = {}
        self._around: dict[str, list[tuple[Any, str]]] = {}

    async def link(self, words: str) -> list[str]:
        """IRIs the label index knows exactly for ``words`` (at most two)."""
        if words.startswith("?") or not words.strip():
            return []
        if words not in self._links:
            try:
                hits = await self.tools["search_entities"](words, k=5)
            except (ToolError, KeyError):
                hits = []
            self._links[words] = list(dict.fromkeys(h.iri for h in hits if is_exact_hit(h, words)))[:2]
        return self._links[words]

    async def retrieve(self, triple: PseudoTriple, entities: list[str]) -> list[RetrievedTriple]:
        """Top-k real triples closest to the pseudo-triple's sentence (index, else neighbourhoods)."""
        text = triple.sentence() or triple.predicate
        hits: list[RetrievedTriple] = []
        if self.indexed is not False:
            try:
                found = await self.tools["similar_triples"](text, k=self.k)
                self.indexed = True
                # the hit's own ``kg`` field is replaced, not passed twice (a TypeError, or a KeyError
                # that silently turned an indexed KG into an on-the-fly one)
                hits = [RetrievedTriple(**h.model_dump(exclude={"score", "kg"}), score=h.score, kg=self.name)
                        for h in found]
            except (ToolError, KeyError):
                self.indexed = False  # no vectors here: embed the neighbourhood instead
        if self.indexed and not entities:
            return hits
        # the linked entities' own triples too: a KG-wide index ranks other subjects' similar facts
        # above them ("X located in" finds every "... located in ...")
        near = await self._on_the_fly(text, entities)
        merged = {(t.subject, t.predicate, t.object): t for t in [*hits, *near]}
        return sorted(merged.values(), key=lambda t: -t.score)[: self.k]

    async def _neighbourhood(self, iri: str) -> list[tuple[Any, str]]:
        if iri not in self._around:
            room = self.budget.room()
            found: list[Any] = []
            if room:
                try:
                    found = await self.tools["neighbors"](iri, direction="both", limit=min(self.per_entity, room))
                except (ToolError, KeyError):
                    found = []
                self.budget.embedded += len(found)
            self._around[iri] = [(t, verbalise(t)) for t in found]
        return self._around[iri]

    async def _on_the_fly(self, text: str, entities: list[str]) -> list[RetrievedTriple]:
        self.on_the_fly = self.on_the_fly or not self.indexed
        pool: dict[tuple[str, str, str], tuple[Any, str]] = {}
        for iri in entities:
            for t, words in await self._neighbourhood(iri):
                pool.setdefault((t.subject, t.predicate, t.object), (t, words))
        if not pool:
            return []
        items = list(pool.values())
        if self.similarity is None:
            from kgteam.roles.semantic.scoring import lexical_similarity
            sims = [lexical_similarity(text, w) for _, w in items]
        else:
            sims = (await self.similarity([text], [w for _, w in items]))[0]
        ranked = sorted(zip(items, sims, strict=True), key=lambda x: -x[1])[: self.k]
        return [RetrievedTriple(**t.model_dump(include=set(RetrievedTriple.model_fields) - {"score", "kg"}),
                                score=round(float(s), 6), kg=self.name) for (t, _), s in ranked]

    async def exists(self, triple: PseudoTriple) -> bool:
        """Whether the fully linked pseudo-triple is itself a triple of this KG (one ASK)."""
        if not (triple.subject_iri and triple.predicate_iri and triple.object_iri) or triple.object_is_literal:
            return False
        q = (f"ASK {{ {sparql_iri(triple.subject_iri)} {sparql_iri(triple.predicate_iri)} "
             f"{sparql_iri(triple.object_iri)} }}")
        try:
            res = await self.tools["run_sparql"](q)
        except (ToolError, KeyError):
            return False
        return bool(res.boolean)


def _bound(term: str, iri: str | None, bindings: dict[str, list[str]]) -> list[str]:
    if iri:
        return [iri]
    return bindings.get(term, []) if term.startswith("?") else []


async def retrieve_all(graph: PseudoGraph, sources: Iterable[Source], similarity: Similarity | None,
                       budget: EmbedBudget, *, k: int = 10, per_entity: int = 200
                       ) -> tuple[list[AtomicCheck], list[SourceRetriever]]:
    """Each pseudo-triple's top-k similar real triples from every source, in graph order; an unknown
    (``?x``) is linked through the best triples retrieved for the pseudo-triple that introduced it."""
    retrievers = [SourceRetriever(name, tools, similarity, budget, k=k, per_entity=per_entity)
                  for name, tools in sources]
    bindings: dict[str, list[str]] = defaultdict(list)
    checks: list[AtomicCheck] = []
    for i, triple in enumerate(graph.triples):
        found: list[RetrievedTriple] = []
        exact = False
        for r in retrievers:
            subjects = _bound(triple.subject, triple.subject_iri, bindings) or await r.link(triple.subject)
            objects = ([] if triple.object_is_literal else
                       _bound(triple.object, triple.object_iri, bindings) or await r.link(triple.object))
            if await r.exists(triple):  # the KG holds the belief itself: nothing nearer can be retrieved
                exact = True
                found.append(RetrievedTriple(subject=triple.subject_iri or "", predicate=triple.predicate_iri or "",
                                             object=triple.object_iri or "", subject_label=triple.subject,
                                             predicate_label=triple.predicate, object_label=triple.object,
                                             score=1.0, kg=r.name))
                continue
            found += await r.retrieve(triple, [*subjects, *objects][:4])
        found.sort(key=lambda c: -c.score)
        checks.append(AtomicCheck(pseudo=i, candidates=found, exact=exact))
        _learn_bindings(triple, found, bindings)
    return checks, retrievers


def _learn_bindings(triple: PseudoTriple, found: list[RetrievedTriple], bindings: dict[str, list[str]]) -> None:
    """``?x`` takes the far ends of the retrieved triples sharing the best one's predicate."""
    if not found:
        return
    best = found[0]
    same = [c for c in found if c.predicate == best.predicate]
    if triple.object.startswith("?") and not triple.object_iri:
        subj = triple.subject_iri
        ends = [c.object if (subj is None or c.subject == subj) else c.subject for c in same if not c.object_is_literal]
        bindings[triple.object] = list(dict.fromkeys([*bindings[triple.object], *ends]))[:5]
    if triple.subject.startswith("?") and not triple.subject_iri:
        bindings[triple.subject] = list(dict.fromkeys([*bindings[triple.subject], *(c.subject for c in same)]))[:5]


def prune(checks: list[AtomicCheck], k: int, threshold: float) -> tuple[list[AtomicCheck], list[str], list[DroppedSubject]]:
    """Keep the ``k`` subjects seen most often (ties: higher mean similarity), then drop those whose
    mean similarity is under ``threshold``; every check keeps only triples of kept subjects.

    A subject is "seen" by a retrieved triple at least ``threshold`` similar: a top-10 list is
    filled whatever the KG holds, so on a small KG a subject with many loosely similar triples
    would otherwise outnumber the one the belief is about (docs/decisions.md)."""
    seen: Counter[str] = Counter()
    scores: dict[str, list[float]] = defaultdict(list)
    labels: dict[str, str] = {}
    for check in checks:
        for c in check.candidates:
            seen[c.subject] += c.score >= threshold
            scores[c.subject].append(c.score)
            labels.setdefault(c.subject, c.subject_label or c.subject)

    def mean(s: str) -> float:
        return sum(scores[s]) / len(scores[s])

    ranked = sorted(scores, key=lambda s: (-seen[s], -mean(s), s))
    frequent, rare = ranked[: max(1, k)], ranked[max(1, k):]
    dropped = [DroppedSubject(subject=s, label=labels[s], mean_similarity=round(mean(s), 4),
                              reason="rare" if seen[s] else "dissimilar") for s in rare]
    kept = []
    for s in frequent:
        if mean(s) < threshold or not seen[s]:
            dropped.append(DroppedSubject(subject=s, label=labels[s], mean_similarity=round(mean(s), 4)))
        else:
            kept.append(s)
    keep = set(kept)
    pruned = [c.model_copy(update={"candidates": [t for t in c.candidates if t.subject in keep]}) for c in checks]
    return pruned, kept, dropped

"""Triple extractor: facts in the kept documents, linked to the KG's entities and relations.

For the first sentences of each kept document, the names are looked up in the KG's label index;
a name the KG knows offers its relations (from the KG's schema of that entity), and the relation
whose label the sentence's words are closest to links the pair. A document is about its title, so
the title counts as named in each sentence, but only when the text itself writes it (a title may
be a file name). The pair takes the direction the KG holds the relation in: the known entity
stays on its own side, and another known entity must have been seen on the other side of that
relation (else no proposal); a name the KG does not know is proposed as a new entity
(``subject_new``/``object_new``), but only where the KG could place it: not at an end whose
values are literals, not as a part of a known name the sentence writes ("Hunchback of Notre Dame"
inside "The Hunchback of Notre Dame"), and not at an end a known entity of the observed kind
already takes in that sentence ("X was directed by Y for RKO": Y is the director, RKO is not),
unless the sentence lists the two together ("Cast: A, B and C"). The result is a proposal for
people to review, shown with the answer; nothing is written to the KG (``kgteam kg add`` does
that, from a reviewed file, checking the relation's domain and range again).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence, one_line
from kgteam.protocols.payloads import GradedDocuments, ProposedTriple
from kgteam.roles.adaptive.reading import contains_name, content_words, names_in, sentences
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import Option, choose
from kgteam.roles.contract import handles
from kgteam.roles.semantic.mentions import is_exact_hit
from kgteam.roles.semantic.similarity import team_similarity
from kgteam.roles.semantic.text import normalise
from kgteam.tools.loading.additions import listed_together
from kgteam.tools.types import ToolError


class TripleExtractorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = Field(True, description="let the model confirm which proposals the text states")
    documents: int = Field(3, ge=1, le=10, description="kept documents read")
    max_proposals: int = Field(8, ge=0, le=50, description="proposals passed on")
    min_similarity: float = Field(0.38, ge=0.0, le=1.0, description="how close the sentence's words must be to a relation label")
    max_names: int = Field(12, ge=1, le=50, description="names looked up per document")
    sentences: int = Field(8, ge=1, le=100, description="sentences read per document, from its start")


class TripleExtractor(Role[TripleExtractorSettings]):
    name: ClassVar[str] = "triple_extractor"
    tools: ClassVar[tuple[str, ...]] = ("search_entities", "entity_schema")
    prompts: ClassVar[tuple[str, ...]] = ("adaptive_extract",)

    @handles
    async def on_graded(self, graded: GradedDocuments, ctx: RoleContext) -> GradedDocuments:
        proposals: list[ProposedTriple] = []
        links: dict[str, str | None] = {}
        schemas: dict[str, tuple[list[Any], list[str]]] = {}  # iri -> (relation counts, classes)
        similarity = team_similarity(ctx.tools)
        for doc in graded.kept[: self.settings.documents]:
            looked = 0
            subject_name = doc.title if doc.title and normalise(doc.title) in normalise(doc.text) else ""
            for sentence in sentences(doc.text)[: self.settings.sentences]:
                spans = list(dict.fromkeys(s.text for s in names_in(sentence)))
                if subject_name and subject_name not in spans:  # the document is about its title
                    spans = [subject_name, *spans]
                for name in spans:
                    if name not in links and looked < self.settings.max_names:
                        links[name] = await self._link(name, ctx)
                        looked += 1
                linked = [n for n in spans if links.get(n)]
                for known in linked:
                    iri = links[known]
                    if iri not in schemas:
                        schemas[iri] = await self._relations(iri, ctx)
                    best = await self._best_relation(sentence, schemas[iri][0], similarity)
                    if best is None:
                        continue
                    stat, sim = best
                    for other in linked:
                        if links[other] not in schemas:
                            schemas[links[other]] = await self._relations(links[other], ctx)
                    # an end a known entity of the observed kind takes in this sentence gets no new name,
                    # unless the sentence lists the new name with it ("Cast: A, B and C")
                    takers = [o for o in linked if links[o] != iri and _fits_other_side(*schemas[links[o]], stat)]
                    for other in spans:
                        other_iri = links.get(other)
                        if other == known or other_iri == iri:
                            continue
                        if other_iri is not None:
                            if not _fits_other_side(*schemas[other_iri], stat):
                                continue  # the KG never has this entity at that end of the relation
                        elif (_literal_end(stat) or any(_overlaps(other, k) for k in linked)
                              or (takers and not any(listed_together(sentence, other, t) for t in takers))):
                            continue  # no kind the KG could check a new name against fits there
                        out = stat.direction == "out"
                        s_label, s_iri = (known, iri) if out else (other, other_iri)
                        o_label, o_iri = (other, other_iri) if out else (known, iri)
                        proposals.append(ProposedTriple(
                            subject=s_iri, subject_label=s_label, predicate=stat.predicate, predicate_label=stat.label,
                            object=o_iri, object_label=o_label, document=doc.id, sentence=sentence[:300],
                            score=round(sim, 4), subject_new=s_iri is None, object_new=o_iri is None))
        unique: dict[tuple[str, str, str], ProposedTriple] = {}
        for p in sorted(proposals, key=lambda p: -p.score):
            unique.setdefault((p.subject_label.lower(), p.predicate, p.object_label.lower()), p)
        ranked = list(unique.values())[: self.settings.max_proposals * 2]
        if self.settings.use_model and len(ranked) > 1:
            options = [Option(key=str(i), label=one_line(p.line()), score=p.score, detail=one_line(p.sentence[:160]))
                       for i, p in enumerate(ranked)]
            res = await choose(ctx, role=self.instance_name, decision="extract", prompt=self.prompt("adaptive_extract"),
                               options=options, k=min(self.settings.max_proposals, len(ranked)),
                               values={"question": fence(graded.question, tag="question")})
            ranked = [ranked[int(o.key)] for o in res.chosen]
        ranked = ranked[: self.settings.max_proposals]
        ctx.trace.record("extract_triples", role=self.instance_name, proposals=[p.line() for p in ranked])
        return graded.model_copy(update={"proposals": ranked})

    async def _link(self, name: str, ctx: RoleContext) -> str | None:
        """The KG entity the name is the exact label of (the entity search tool), else None."""
        try:
            hits = await ctx.tools["search_entities"](name, k=3)
        except ToolError:
            return None
        exact = [h for h in hits if is_exact_hit(h, name)]
        return exact[0].iri if exact else None

    async def _relations(self, iri: str, ctx: RoleContext) -> tuple[list[Any], list[str]]:
        try:
            schema = await ctx.tools["entity_schema"](iri)
        except ToolError:
            return [], []
        return [*schema.outgoing, *schema.incoming], list(schema.types)

    async def _best_relation(self, sentence: str, stats: list[Any], similarity: Any) -> tuple[Any, float] | None:
        """The relation whose label the sentence's words come closest to, above ``min_similarity``."""
        words = list(dict.fromkeys(content_words(sentence)))[:40]
        labels = [s.label for s in stats if s.label]
        if not words or not labels or similarity is None:
            return None
        sims = await similarity(words, labels)
        best_i, best = -1, 0.0
        for j in range(len(labels)):
            col = max(row[j] for row in sims)
            if col > best:
                best_i, best = j, col
        if best_i < 0 or best < self.settings.min_similarity:
            return None
        stat = [s for s in stats if s.label][best_i]
        return stat, best


XSD = "http://www.w3.org/2001/XMLSchema#"


def _literal_end(stat: Any) -> bool:
    """The KG's values at the other end of the relation are literals (dates, numbers): a name is none."""
    return bool(stat.value_types) and all(t.startswith(XSD) for t in stat.value_types)


def _overlaps(new: str, known: str) -> bool:
    """A new name written inside a known one (or around it) is that name read in part, not a second thing."""
    return contains_name(known, new) or contains_name(new, known)


def _fits_other_side(stats: list[Any], types: list[str], stat: Any) -> bool:
    """Whether an entity (its relation counts and classes) fits the other end of ``stat``'s relation
    (the object side when ``stat`` goes out, the subject side when it comes in): the KG has it there
    already, or it is of a class the KG has there."""
    other = "in" if stat.direction == "out" else "out"
    if any(s.predicate == stat.predicate and s.direction == other for s in stats):
        return True
    return bool(set(types) & set(stat.value_types))

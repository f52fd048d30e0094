"""Documents → KG: a question names something only the documents know; they say which KG entity it
is near ("The Gilded Lantern is a theatre in *Corlis*"), and the KG answers the rest from there
("in which region is ..." → Corlis's region).

The name the KG does not know is put in place by each KG entity the kept documents write next to
it, in turn; the semantic layer plans relation paths from that entity for the question's other
words (the hop loop every playbook shares), and the best path that explains them is run. The
answer carries the path's triples as evidence and the sentence that led there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kgteam.protocols.evidence import EvidenceDocument, EvidenceTriple
from kgteam.protocols.payloads import AnswerValue
from kgteam.roles.adaptive.reading import contains_name, names_in, sentences
from kgteam.roles.adaptive.route_signals import is_member, kg_class
from kgteam.roles.semantic import SemanticLayer
from kgteam.roles.semantic.mentions import is_exact_hit
from kgteam.roles.semantic.path_planning import Limits, plan_paths, relation_path
from kgteam.roles.semantic.paths import path_query
from kgteam.roles.semantic.shape import read_shape
from kgteam.roles.semantic.topics import find_topics
from kgteam.tools.types import ToolError

MAX_BRIDGES = 4  # KG entities tried per question
MAX_PATHS = 5  # best relation paths tried from each entity
MIN_SCORE = 0.0  # a path must explain the question's words (the layer's score above this)


@dataclass
class Bridged:
    entity: str  # the KG entity the documents led to, as the documents write it
    sentence: str
    document: str
    path: str
    score: float
    values: list[AnswerValue] = field(default_factory=list)
    triples: list[EvidenceTriple] = field(default_factory=list)


async def _kg_names(sentence: str, unknown: list[str], tools: Any) -> list[tuple[str, list[str]]]:
    out = []
    for span in names_in(sentence):
        if any(contains_name(u, span.text) or contains_name(span.text, u) for u in unknown):
            continue
        try:
            hits = await tools["search_entities"](span.text, k=5)
        except (ToolError, KeyError):
            return out
        iris = [h.iri for h in hits if is_exact_hit(h, span.text)]
        if iris:
            out.append((span.text, iris))
    return out


def _led_to(documents: list[EvidenceDocument], unknown: list[str]) -> list[tuple[str, EvidenceDocument]]:
    """Sentences of the kept documents about the unknown names (naming one, or in a document titled
    with one), in document order."""
    out = []
    for doc in documents:
        titled = any(contains_name(doc.title or "", u) for u in unknown)
        for s in sentences(doc.text):
            if titled or any(contains_name(s, u) for u in unknown):
                out.append((s, doc))
    return out


async def kg_from_documents(question: str, unknown: list[str], documents: list[EvidenceDocument], tools: Any,
                            layer: SemanticLayer, *, hops: int = 2) -> Bridged | None:
    """The best KG answer reached through an entity the documents name beside ``unknown``, or None."""
    if not unknown:
        return None
    tried: set[str] = set()
    best: Bridged | None = None
    for sentence, doc in _led_to(documents, unknown):
        for text, iris in await _kg_names(sentence, unknown, tools):
            if text in tried or len(tried) >= MAX_BRIDGES:
                continue
            tried.add(text)
            asked = question
            for u in unknown:
                asked = re.sub(re.escape(u), text, asked, flags=re.I)
            topics = [t for t in await find_topics(asked, tools, exact_only=True) if set(t.iris) & set(iris)]
            if not topics:
                continue
            klass = await _asked_class(asked, tools)
            for top in (await plan_paths(layer, asked, topics[:1], hops=hops, limits=Limits()))[:MAX_PATHS]:
                if top.score <= MIN_SCORE or (best is not None and top.score <= best.score):
                    break
                found = await _run(tools, top)
                if found is None:
                    continue
                values, triples = found
                values = [v for v in values if v.iri not in iris]  # a walk back to the entity answers nothing
                if not values or (klass is not None and not await _of_class(values, klass, tools)):
                    continue
                best = Bridged(text, sentence, doc.id, top.explain(), top.score, values, triples)
                break
    return best


async def _asked_class(question: str, tools: Any) -> str | None:
    """The KG class the question's kind words name ("which *river*"), if the KG has one."""
    words = read_shape(question).kind_words
    return await kg_class(words.split()[-1], tools) if words else None


async def _of_class(values: list[AnswerValue], klass: str, tools: Any) -> bool:
    """Are most of the values members of ``klass``?"""
    members = 0
    for v in values[:10]:
        if v.iri is not None and await is_member(v.iri, klass, tools):
            members += 1
    return members * 2 >= min(10, len(values))


async def _run(tools: Any, planned: Any) -> tuple[list[AnswerValue], list[EvidenceTriple]] | None:
    path = relation_path(planned)
    try:
        res = await tools["run_sparql"](path_query(path, all_vars=True), limit=50)
    except (ToolError, KeyError):
        return None
    if not res.rows:
        return None
    names = [f"x{i}" for i in range(1, len(path.steps) + 1)]
    iris = {path.entity} | {r[n].value for r in res.rows for n in names if n in r and r[n].type == "uri"}
    try:
        labels = await tools["labels_for"](sorted(iris))
    except (ToolError, KeyError):
        labels = {}
    values: list[AnswerValue] = []
    triples: list[EvidenceTriple] = []
    for row in res.rows:
        prev = path.entity
        for n, step in zip(names, path.steps, strict=True):
            term = row.get(n)
            if term is None:
                break
            lit = term.type != "uri"
            obj_label = term.value if lit else labels.get(term.value, term.value)
            s, o = (prev, term.value) if step.direction == "out" else (term.value, prev)
            s_lab = labels.get(s, s)
            o_lab = obj_label if s == prev else labels.get(o, o)
            triples.append(EvidenceTriple(subject=s, predicate=step.predicate, object=o, object_is_literal=lit,
                                          subject_label=s_lab, predicate_label=step.label, object_label=o_lab))
            prev = term.value
        end = row.get(names[-1])
        if end is not None:
            label = end.value if end.type != "uri" else labels.get(end.value, end.value)
            value = AnswerValue(label=label, iri=end.value if end.type == "uri" else None)
            if value not in values:
                values.append(value)
    return values, triples

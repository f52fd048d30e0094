"""The model-free pseudo-graph: the semantic layer's reading of the question, written as triples.

A precise question is read as the best relation path from its topic entity (the same ranking
Triad's and KERAG's model-free floors use); its walks in the KG become the pseudo-triples, the
path's last step marking the answer end. An open-ended question ("Tell me about X") becomes one
open triple per relation of X: the facts an overview of X needs.
"""

from __future__ import annotations

from typing import Any

from kgteam.protocols.payloads import PseudoGraph, PseudoTriple
from kgteam.roles.semantic import SemanticLayer, SemanticSettings, spot_mentions
from kgteam.roles.semantic.paths import NAMING_PREDICATES, chain_graph
from kgteam.roles.semantic.reader import chain_convention
from kgteam.roles.semantic.shape import read_shape
from kgteam.roles.semantic.shaped import ShapedReader, mask_mentions, not_shape_words
from kgteam.roles.semantic.similarity import team_similarity
from kgteam.roles.semantic.topics import find_topics, name_like
from kgteam.tools.query_builder import compile_query
from kgteam.tools.types import ToolError


async def open_graph(question: str, tools: Any, *, max_relations: int = 8) -> PseudoGraph:
    """(X, relation, ?) for each relation X has, most used first."""
    topics = await find_topics(question, tools, max_mentions=1)
    if not topics or not topics[0].iris:
        return PseudoGraph(triples=[], question=question, open_ended=True, plan=["no entity of the question is known"])
    iri, name = topics[0].iris[0], topics[0].text
    schema = await tools["entity_schema"](iri)
    both = [*((s, "out") for s in schema.outgoing), *((s, "in") for s in schema.incoming)]
    stats = sorted([sd for sd in both if sd[0].predicate not in NAMING_PREDICATES],  # X's names are no facts about X
                   key=lambda sd: -(sd[0].count or 0))[:max_relations]
    triples = []
    for n, (stat, direction) in enumerate(stats, start=1):
        label = stat.label or stat.predicate
        if direction == "out":
            triples.append(PseudoTriple(subject=name, predicate=label, object=f"?x{n}", subject_iri=iri,
                                        predicate_iri=stat.predicate))
        else:
            triples.append(PseudoTriple(subject=f"?x{n}", predicate=label, object=name, object_iri=iri,
                                        predicate_iri=stat.predicate))
    plan = [f"{name}: {t.predicate}" for t in triples]
    return PseudoGraph(triples=triples, question=question, open_ended=True, plan=plan, confidence=1.0)


async def reading_graph(question: str, tools: Any, settings: SemanticSettings, *, max_walks: int = 20) -> PseudoGraph:
    """The best path's walks (at most ``max_walks``) as labelled pseudo-triples."""
    mentions = await spot_mentions(question, tools)
    shape = read_shape(question)
    mentions = not_shape_words(mentions, shape)  # "after 2005": a comparison, not a film called 2005
    # words naming the answer's kind ("which *genres*") name no relation, as in Triad's generalist
    kinds = await ShapedReader(tools).class_word_spans(question, read_shape(mask_mentions(question, mentions)))
    layer = SemanticLayer(tools, team_similarity(tools), settings)
    paths = await layer.rank(question, mentions, exclude=kinds)
    best = paths.best
    if best is None or not best.answers:
        return PseudoGraph(triples=[], question=question, plan=["no relation path from the question's entities answers"])
    steps = [(s.predicate, s.direction) for s in best.steps]
    try:
        res = await tools["run_sparql"](compile_query(chain_graph(best.entity, steps, all_vars=True,
                                                                  convention=chain_convention(tools))), limit=1000)
    except ToolError:
        return PseudoGraph(triples=[], question=question, plan=["the reading's query failed"])
    last = f"x{len(steps)}"
    walks: dict[str, list[str]] = {}  # one walk per answer, in the order the reading gives its answers
    for row in res.rows:
        if all(f"x{i}" in row for i in range(1, len(steps) + 1)):
            walks.setdefault(row[last].value, [best.entity, *(row[f"x{i}"].value for i in range(1, len(steps) + 1))])
    order = [str(a.get("value")) for a in best.answers if str(a.get("value")) in walks]
    nodes_of = [walks[v] for v in [*order, *(v for v in walks if v not in set(order))][:max_walks]]
    literal = {row[f"x{len(steps)}"].value for row in res.rows
               if f"x{len(steps)}" in row and row[f"x{len(steps)}"].type == "literal"}
    iris = {n for nodes in nodes_of for n in nodes if n not in literal} | {p for p, _ in steps}
    labels = await tools["labels_for"](sorted(iris))
    triples: dict[tuple[str, str, str], PseudoTriple] = {}
    for nodes in nodes_of:
        for i, (pred, direction) in enumerate(steps, start=1):
            a, b = nodes[i - 1], nodes[i]
            s, o = (a, b) if direction == "out" else (b, a)
            last = i == len(steps)
            end = ("object" if direction == "out" else "subject") if last else None
            is_lit = last and o in literal
            if (s, pred, o) in triples:  # a walk back over a triple it used before ("X's kid's parent")
                if end and triples[(s, pred, o)].answer_end is None:
                    triples[(s, pred, o)] = triples[(s, pred, o)].model_copy(update={"answer_end": end})
                continue
            triples.setdefault((s, pred, o), PseudoTriple(
                subject=labels.get(s, s), predicate=labels.get(pred, pred), object=o if is_lit else labels.get(o, o),
                subject_iri=s, predicate_iri=pred, object_iri=None if is_lit else o, object_is_literal=is_lit,
                answer_end=end))
    plan = [f"{best.mention}: {best.explain()}"]
    confidence, kg_map = paths.confidence, paths.kg_map
    walked = {n for nodes in nodes_of for n in nodes[:-1]}  # an answer the question names constrains nothing
    left_out = [m.text for m in mentions if m.text != best.mention and not m.category and name_like(m.text)
                and m.exact_iris() and not set(m.exact_iris()) & walked]
    if left_out:
        # "who plays at position Defender for club Malmo_FF": a chain from one name that never
        # meets the other is not what was asked; its answers stay a guess
        plan.append(f"the reading leaves out {', '.join(left_out)}")
        confidence, kg_map = min(confidence, 0.49), None  # capped: no longer what the KG's map said
    return PseudoGraph(triples=list(triples.values()), question=question, plan=plan, confidence=confidence,
                       kg_map=kg_map)


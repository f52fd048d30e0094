"""SPARQL templates with placeholders, and how they become real queries.

The generalist writes templates such as
``SELECT DISTINCT ?x2 WHERE { <E0> <R0> ?x1 . ?x1 <R1> ?x2 . FILTER(?x2 != <E0>) }``.
Only chains that start at one entity placeholder are accepted: that is what the decision maker
can fill by traversal. The direction written in the template is not trusted; each relation
candidate carries the direction it was *observed* in the KG, and the query is rebuilt from that.
IRIs are inserted through ``sparql_iri`` (checked), never spliced as raw text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgteam.protocols.errors import KgteamError
from kgteam.protocols.payloads import CandidateQuery, RelationBinding
from kgteam.roles.semantic.paths import PLAIN, ChainConvention, chain_graph
from kgteam.tools.query_builder import compile_query

_TERM = r"(<E\d+>|\?[A-Za-z_]\w*)"
_TRIPLE = re.compile(_TERM + r"\s+<(R\d+)>\s+" + _TERM)
_SELECT = re.compile(r"SELECT\s+(?:DISTINCT\s+)?(\?[A-Za-z_]\w*)", re.IGNORECASE)
_ANGLE = re.compile(r"<([^<>\s]*)>")
_PLACEHOLDER = re.compile(r"^[ER]\d+$")


@dataclass(frozen=True)
class Step:
    relation: str  # placeholder, e.g. "R0"
    source: str  # term nearer the entity ("<E0>" or "?x1")
    target: str


@dataclass(frozen=True)
class Chain:
    entity: str  # "E0"
    steps: tuple[Step, ...]
    answer: str  # the selected variable, e.g. "?x2"

    @property
    def hops(self) -> int:
        return len(self.steps)


class TemplateError(KgteamError, ValueError):
    """A template the decision maker cannot fill (the generalist repairs or falls back)."""


def chain_template(hops: int) -> str:
    """The canonical template for a ``hops``-long chain from ``<E0>``."""
    if hops < 1:
        raise ValueError("hops must be >= 1")
    parts, prev = [], "<E0>"
    for i in range(hops):
        var = f"?x{i + 1}"
        parts.append(f"{prev} <R{i}> {var} .")
        prev = var
    return f"SELECT DISTINCT {prev} WHERE {{ {' '.join(parts)} FILTER({prev} != <E0>) }}"


def parse_chain(template: str, *, max_hops: int = 3) -> Chain:
    """Validate a template and read it as a chain; raises :class:`TemplateError` with a reason."""
    for inner in _ANGLE.findall(template):
        if not _PLACEHOLDER.match(inner):
            raise TemplateError(f"template must use placeholders like <E0>, <R0> only, found <{inner}>")
    if "http" in template.lower() or ":" in re.sub(r"\?[A-Za-z_]\w*|<[ER]\d+>", "", template.split("WHERE", 1)[-1]):
        raise TemplateError("template must not contain IRIs or prefixed names")
    m = _SELECT.search(template)
    if not m:
        raise TemplateError("template needs 'SELECT ?var WHERE { ... }'")
    answer = m.group(1)
    triples = _TRIPLE.findall(template)
    if not triples:
        raise TemplateError("template has no triple pattern '<E0> <R0> ?x'")
    if len(triples) > max_hops:
        raise TemplateError(f"template has {len(triples)} triple patterns; at most {max_hops}")
    entities = {t for s, _, o in triples for t in (s, o) if t.startswith("<E")}
    if entities != {"<E0>"}:
        raise TemplateError("template must be a chain starting at exactly one entity <E0>")
    # walk the chain from <E0>, ignoring written direction
    remaining = list(triples)
    node, steps, seen_rel = "<E0>", [], set()
    while remaining:
        nxt = next((t for t in remaining if node in (t[0], t[2])), None)
        if nxt is None:
            raise TemplateError("template triples do not form one chain from <E0>")
        remaining.remove(nxt)
        s, rel, o = nxt
        if rel in seen_rel:
            raise TemplateError(f"relation placeholder {rel} used twice")
        seen_rel.add(rel)
        other = o if s == node else s
        steps.append(Step(rel, node, other))
        node = other
    if node != answer:
        raise TemplateError(f"the selected variable {answer} must be the end of the chain ({node})")
    return Chain("E0", tuple(steps), answer)


@dataclass(frozen=True)
class Binding:
    """A filled placeholder: relation IRIs carry the direction they were observed in."""

    iri: str
    direction: str = "out"  # "out": source -> target; "in": target -> source


def build_query(chain: Chain, entity_iri: str, relations: list[Binding], *, all_vars: bool = False,
                convention: ChainConvention = PLAIN) -> str:
    """A runnable SELECT for ``chain`` with the given entity and relations (one per step), built as a
    query graph and compiled by the one builder (with the template's own variable names)."""
    if len(relations) != chain.hops:
        raise ValueError(f"need {chain.hops} relation(s), got {len(relations)}")
    names = [step.target.lstrip("?") for step in chain.steps]
    return compile_query(chain_graph(entity_iri, [(rel.iri, rel.direction) for rel in relations], all_vars=all_vars,
                                     names=names, convention=convention))


def relation_bindings(chain: Chain, relations: list[Binding]) -> list[RelationBinding]:
    """The typed record of which predicate filled which relation placeholder, and which way."""
    return [RelationBinding(placeholder=step.relation, iri=rel.iri, direction=rel.direction)  # type: ignore[arg-type]
            for step, rel in zip(chain.steps, relations, strict=True)]


def from_query(chain: Chain, query: CandidateQuery) -> tuple[str, list[Binding]]:
    """Entity IRI and relation bindings of a filling, in chain order (KeyError if incomplete)."""
    if query.entity is None:
        raise KeyError("the filling has no entity")
    by_placeholder = {r.placeholder: r for r in query.relations}
    rels = [Binding(by_placeholder[s.relation].iri, by_placeholder[s.relation].direction) for s in chain.steps]
    return query.entity, rels

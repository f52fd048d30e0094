"""Which entities of several KGs are the same thing: one name across KGs, or ``owl:sameAs``.

Two KGs rarely share IRIs, so a join needs another key. Two keys are used, both cheap and
checkable: a normalised exact match of the names the KGs' own naming predicates give
(:mod:`kgteam.tools.naming`; ``normalize_label`` folds case, accents and punctuation), and
``owl:sameAs`` links a KG states. A name held by more than one entity of a KG is ambiguous
there and links nothing, unless exactly one of them writes it as the other KG does (case and
accents included); predicates are never matched (their names are words, not entities).
A group of same entities is named by the IRI of the first KG (in team order) that holds one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyoxigraph

from kgteam.tools.naming import Naming
from kgteam.tools.sparql_guard import sparql_iri
from kgteam.tools.text_normalize import normalize_label

OWL_SAME_AS = "http://www.w3.org/2002/07/owl#sameAs"


@dataclass
class MatchSource:
    """One KG as the matcher reads it: its name, its triples and its naming predicates."""

    name: str
    store: pyoxigraph.Store
    naming: Naming


@dataclass
class EntityMatches:
    """The result: each matched IRI's canonical IRI, and each group's members with their KG."""

    canonical: dict[str, str] = field(default_factory=dict)  # only IRIs that are matched to another
    members: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # canonical -> [(kg, iri)]
    by_label: int = 0  # groups joined by a shared name
    by_same_as: int = 0  # owl:sameAs links followed

    def of(self, iri: str) -> str:
        return self.canonical.get(iri, iri)

    def originals(self, iri: str, kg: str) -> list[str]:
        """The IRIs ``kg`` itself uses for the (canonical) ``iri``."""
        group = self.members.get(iri)
        if group is None:
            return [iri]
        return [m for k, m in group if k == kg] or [iri]


def _names(src: MatchSource) -> dict[str, dict[str, set[str]]]:
    """Normalised name -> the IRIs (not predicates) that bear it in this KG -> the names as written."""
    preds = ", ".join(sparql_iri(p) for p in src.naming.name_predicates)
    used_as_predicate = {str(row[0].value) for row in src.store.query("SELECT DISTINCT ?p WHERE { ?s ?p ?o }")}
    out: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    rows = src.store.query(f"SELECT ?s ?l WHERE {{ ?s ?p ?l FILTER(?p IN ({preds}) && isIRI(?s) && isLiteral(?l)) }}")
    for row in rows:
        iri, text = str(row[0].value), str(row[1].value)
        key = normalize_label(text)
        if key and iri not in used_as_predicate:
            out[key][iri].add(text)
    return out


def _pick(per_kg: Sequence[dict[str, dict[str, set[str]]]], key: str) -> list[tuple[int, str]]:
    """The one entity each KG names ``key``, as ``(KG index, IRI)``. A KG where several bear the
    folded name keeps the one whose name is written exactly as a KG with one such entity writes
    it ("Harrison Ford" beside a lower-case "harrison ford" tag); still several, the name is
    ambiguous and nothing is joined."""
    held = [(i, n[key]) for i, n in enumerate(per_kg) if key in n]
    sure = {text for _, iris in held if len(iris) == 1 for texts in iris.values() for text in texts}
    out = []
    for i, iris in held:
        exact = [iri for iri, texts in iris.items() if len(iris) == 1 or texts & sure]
        if len(exact) != 1:
            return []
        out.append((i, exact[0]))
    return out


def match_entities(sources: Sequence[MatchSource], *, labels: bool = True) -> EntityMatches:
    """Groups of same entities across ``sources`` (by name when ``labels``, and by ``owl:sameAs``)."""
    parent: dict[str, str] = {}
    home: dict[str, int] = {}  # IRI -> the first KG (index) that holds it
    where: dict[str, set[int]] = defaultdict(set)

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> bool:
        ra, rb = find(a), find(b)
        if ra == rb:
            return False
        parent[rb] = ra
        return True

    result = EntityMatches()
    if labels and len(sources) > 1:
        per_kg = [_names(src) for src in sources]
        shared = {key for key in set().union(*(set(n) for n in per_kg)) if sum(key in n for n in per_kg) > 1}
        for key in sorted(shared):
            ones = _pick(per_kg, key)
            if len(ones) < 2:
                continue  # ambiguous in one of them
            joined = False
            for i, iri in ones:
                home.setdefault(iri, i)
                where[iri].add(i)
                joined = union(ones[0][1], iri) or joined
            result.by_label += int(joined)
    for i, src in enumerate(sources):
        for row in src.store.query(f"SELECT ?a ?b WHERE {{ ?a {sparql_iri(OWL_SAME_AS)} ?b FILTER(isIRI(?a) && isIRI(?b)) }}"):
            a, b = str(row[0].value), str(row[1].value)
            for iri in (a, b):
                home.setdefault(iri, i)
                where[iri].add(i)
            result.by_same_as += int(union(a, b))
    for i, src in enumerate(sources):  # which KGs hold each matched IRI (a sameAs target may be in another)
        for iri in list(parent):
            if i not in where[iri] and _holds(src.store, iri):
                where[iri].add(i)
                home[iri] = min(home.get(iri, i), i)
    groups: dict[str, list[str]] = defaultdict(list)
    for iri in parent:
        groups[find(iri)].append(iri)
    for group in groups.values():
        if len(group) < 2:
            continue
        first = min(group, key=lambda iri: (home.get(iri, len(sources)), iri))
        result.members[first] = sorted(((sources[i].name, iri) for iri in group for i in sorted(where[iri])),
                                       key=lambda m: ([s.name for s in sources].index(m[0]), m[1]))
        for iri in group:
            if iri != first:
                result.canonical[iri] = first
    return result


def _holds(store: pyoxigraph.Store, iri: str) -> bool:
    node = pyoxigraph.NamedNode(iri)
    return any(True for _ in store.quads_for_pattern(node, None, None)) or \
        any(True for _ in store.quads_for_pattern(None, None, node))

"""Which entities of several KGs are the same thing: one name across KGs, or ``owl:sameAs``.

Two KGs rarely share IRIs, so a join needs another key. Two keys are used, both cheap and
checkable: a normalised exact match of the names the KGs' own naming predicates give
(:mod:`kgteam.tools.naming`; ``normalize_label`` folds case, accents and punctuation), and
``owl:sameAs`` links a KG states. A name held by more than one entity of a KG is ambiguous
there and links nothing, unless exactly one of them writes it as the other KG does (case and
accents included); predicates are never matched (their names are words, not entities).
A group of same entities is named by the IRI that belongs to the first KG (in team order).

A KG speaks only for its own entities unless the team trusts it (``trust``, the team setting
``trust_other_kgs``): an entity belongs to the KG with the most subjects in its IRI's namespace
(:class:`Owners`), and by default only an ``owl:sameAs`` a KG states between two of its own
entities is followed, and only the names a KG gives its own entities join. Else a second KG could
say ``isles:Quillsey owl:sameAs x . x owl:sameAs isles:Havenmoor`` and make the first KG answer
"Brackwater, Fennick" for Quillsey's capital. Nor does a join by name ever make two entities of
one KG one; an ``owl:sameAs`` does when their KG states it, or when the team trusts the KG that does.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
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


def namespace(iri: str) -> str:
    """``http://example.org/isles/`` of ``http://example.org/isles/Quillsey`` (up to the last / or #)."""
    cut = max(iri.rfind("/"), iri.rfind("#"))
    return iri[: cut + 1] if cut > 0 else iri


class Owners:
    """Which KG (its index in team order) an IRI belongs to: the KG with the most subjects in the
    IRI's namespace (ties: the first); in a namespace no KG describes, the first KG that uses it.
    A KG that writes triples about another's IRIs does not make them its own."""

    def __init__(self, sources: Sequence[MatchSource]) -> None:
        self.names = [src.name for src in sources]
        self._stores = [src.store for src in sources]
        counts: dict[str, list[int]] = defaultdict(lambda: [0] * len(sources))
        for i, src in enumerate(sources):
            for row in src.store.query("SELECT DISTINCT ?s WHERE { ?s ?p ?o FILTER(isIRI(?s)) }"):
                counts[namespace(str(row[0].value))][i] += 1
        self._by_namespace = {ns: max(range(len(n)), key=lambda i, n=n: (n[i], -i)) for ns, n in counts.items()}
        self._used: dict[str, int] = {}

    def of(self, iri: str) -> int:
        found = self._by_namespace.get(namespace(iri))
        if found is not None:
            return found
        if iri not in self._used:
            node = pyoxigraph.NamedNode(iri)
            self._used[iri] = next((i for i, store in enumerate(self._stores) if _uses(store, node)), 0)
        return self._used[iri]

    def name_of(self, iri: str) -> str:
        """The name of the KG ``iri`` belongs to."""
        return self.names[self.of(iri)]


@dataclass
class EntityMatches:
    """The result: each matched IRI's canonical IRI, and each group's members with their KG."""

    canonical: dict[str, str] = field(default_factory=dict)  # only IRIs that are matched to another
    members: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # canonical -> [(kg, iri)]
    by_label: int = 0  # groups joined by a shared name
    by_same_as: int = 0  # owl:sameAs links followed
    same_as_not_followed: int = 0  # links a KG states about another KG's entities (not trusted)
    owners: Owners | None = None  # which KG each IRI belongs to

    def of(self, iri: str) -> str:
        return self.canonical.get(iri, iri)

    def originals(self, iri: str, kg: str) -> list[str]:
        """The IRIs ``kg`` itself uses for the (canonical) ``iri``."""
        group = self.members.get(iri)
        if group is None:
            return [iri]
        return [m for k, m in group if k == kg] or [iri]


def _names(src: MatchSource, own: Callable[[str], bool]) -> dict[str, dict[str, set[str]]]:
    """Normalised name -> the IRIs (not predicates) that bear it in this KG -> the names as written;
    only the IRIs ``own`` accepts (the KG's own entities: another's it does not get to name)."""
    preds = ", ".join(sparql_iri(p) for p in src.naming.name_predicates)
    used_as_predicate = {str(row[0].value) for row in src.store.query("SELECT DISTINCT ?p WHERE { ?s ?p ?o }")}
    out: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    rows = src.store.query(f"SELECT ?s ?l WHERE {{ ?s ?p ?l FILTER(?p IN ({preds}) && isIRI(?s) && isLiteral(?l)) }}")
    for row in rows:
        iri, text = str(row[0].value), str(row[1].value)
        key = normalize_label(text)
        if key and iri not in used_as_predicate and own(iri):
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


def match_entities(sources: Sequence[MatchSource], *, labels: bool = True, trust: bool = False) -> EntityMatches:
    """Groups of same entities across ``sources`` (by name when ``labels``, and by ``owl:sameAs``);
    ``trust``: also the names a KG gives, and the links it states about, other KGs' entities."""
    owners = Owners(sources)
    parent: dict[str, str] = {}
    kgs_of: dict[str, set[int]] = {}  # root -> the KGs its members belong to
    where: dict[str, set[int]] = defaultdict(set)  # IRI -> the KGs that hold it

    def find(x: str) -> str:
        if x not in parent:
            parent[x] = x
            kgs_of[x] = {owners.of(x)}
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str, said_by: int | None = None) -> bool:
        """Join ``a``'s and ``b``'s groups, unless that makes two entities of one KG one and that
        KG (``said_by``) did not say so itself (a trusted link, ``said_by=-1``, is followed as stated)."""
        ra, rb = find(a), find(b)
        if ra == rb or (said_by != -1 and (kgs_of[ra] & kgs_of[rb]) - {said_by}):
            return False
        parent[rb] = ra
        kgs_of[ra] |= kgs_of.pop(rb)
        return True

    result = EntityMatches(owners=owners)
    if labels and len(sources) > 1:
        per_kg = [_names(src, (lambda iri: True) if trust else (lambda iri, i=i: owners.of(iri) == i))
                  for i, src in enumerate(sources)]
        shared = {key for key in set().union(*(set(n) for n in per_kg)) if sum(key in n for n in per_kg) > 1}
        for key in sorted(shared):
            ones = _pick(per_kg, key)
            if len(ones) < 2:
                continue  # ambiguous in one of them
            joined = False
            for i, iri in ones:
                where[iri].add(i)
                joined = union(ones[0][1], iri) or joined
            result.by_label += int(joined)
    for i, src in enumerate(sources):
        for row in src.store.query(f"SELECT ?a ?b WHERE {{ ?a {sparql_iri(OWL_SAME_AS)} ?b FILTER(isIRI(?a) && isIRI(?b)) }}"):
            a, b = str(row[0].value), str(row[1].value)
            if not trust and not owners.of(a) == owners.of(b) == i:
                result.same_as_not_followed += 1  # about another KG's entity: followed only when trusted
                continue
            for iri in (a, b):
                where[iri].add(i)
            result.by_same_as += int(union(a, b, said_by=-1 if trust else i))
    for i, src in enumerate(sources):  # which KGs hold each matched IRI (a sameAs target may be in another)
        for iri in list(parent):
            if i not in where[iri] and _holds(src.store, iri):
                where[iri].add(i)
    groups: dict[str, list[str]] = defaultdict(list)
    for iri in parent:
        groups[find(iri)].append(iri)
    names = [s.name for s in sources]
    for group in groups.values():
        if len(group) < 2:
            continue
        first = min(group, key=lambda iri: (owners.of(iri), iri))
        result.members[first] = sorted(((sources[i].name, iri) for iri in group for i in sorted(where[iri])),
                                       key=lambda m: (names.index(m[0]), m[1]))
        for iri in group:
            if iri != first:
                result.canonical[iri] = first
    return result


def _holds(store: pyoxigraph.Store, iri: str) -> bool:
    node = pyoxigraph.NamedNode(iri)
    return any(True for _ in store.quads_for_pattern(node, None, None)) or \
        any(True for _ in store.quads_for_pattern(None, None, node))


def _uses(store: pyoxigraph.Store, node: pyoxigraph.NamedNode) -> bool:
    """Whether ``node`` is in any triple of ``store``, as subject, predicate or object."""
    return any(True for _ in store.quads_for_pattern(node, None, None)) or \
        any(True for _ in store.quads_for_pattern(None, node, None)) or \
        any(True for _ in store.quads_for_pattern(None, None, node))

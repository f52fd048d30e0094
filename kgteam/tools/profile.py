"""A KG's profile: what it says about itself, read once from the KG and kept with its tools.

Reading a KG nobody here built needs more than labels: which predicate types its instances
(``rdf:type``, or Wikidata's "instance of" property), its classes with their sizes, names and
subclasses, each class's numeric and date attributes, and which nodes are schema (property
entities, redirect and disambiguation pages) that never answer a question about instances. All of
it comes from the KG's own triples through plain SPARQL, so an installed store and a connected
endpoint read the same; each part is computed the first time it is needed and kept for the life
of the tools (a team, a chat, a server), bounded in rows and time so a large KG stays cheap.
"""

from __future__ import annotations

import contextlib
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from kgteam.tools.sparql_guard import sparql_iri
from kgteam.tools.types import ToolError
from kgteam.tools.vocabulary import (
    CLASS_TYPES,
    DECLARING_PREDICATES,
    DISAMBIGUATION_PREDICATES,
    PROPERTY_TYPES,
    RDF_TYPE,
    RDFS_SUBCLASS_OF,
    REDIRECT_PREDICATES,
    SUBCLASS_NAMES,
    TYPE_NAMES,
)

if TYPE_CHECKING:
    from kgteam.tools.kg_tools import KGTools

MAX_CLASSES = 3000  # the largest classes kept (a KG with more reads the rest as plain entities)
MEMBER_SAMPLE = 500  # members read to learn a class's attributes
_NUMERIC = re.compile(r"^[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$")
_DATE = re.compile(r"^-?\d{4}-\d{2}(-\d{2})?")
_NUMERIC_TYPES = ("integer", "decimal", "double", "float", "int", "long", "short", "byte", "nonNegativeInteger",
                  "positiveInteger", "unsignedInt", "unsignedLong", "nonPositiveInteger", "negativeInteger")
_DATE_TYPES = ("date", "dateTime", "gYear", "gYearMonth", "dateTimeStamp")

ValueKind = Literal["number", "date"]


@dataclass(frozen=True)
class Attribute:
    """A numeric or date relation the members of a class hold (``coverage``: the share of sampled
    members that hold it)."""

    predicate: str
    label: str
    kind: ValueKind
    coverage: float
    year_only: bool = False  # gYear, or numbers that are years


@dataclass
class Typing:
    """The predicates that type instances and relate classes (``rdf:type`` and ``rdfs:subClassOf``,
    plus any the KG names so: Wikidata's "instance of" / "subclass of")."""

    type_predicates: tuple[str, ...] = (RDF_TYPE,)
    subclass_predicates: tuple[str, ...] = (RDFS_SUBCLASS_OF,)


@dataclass
class _Classes:
    sizes: dict[str, int] = field(default_factory=dict)
    children: dict[str, set[str]] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)  # normalised name -> classes, largest first
    label: dict[str, str] = field(default_factory=dict)
    typed_by: dict[str, str] = field(default_factory=dict)  # class -> the predicate typing most of its members
    totals: dict[str, int] = field(default_factory=dict)  # class -> members with its subclasses' (worked out once)


def name_key(text: str) -> str:
    """A class name as a lookup key: lower case, single spaces, the last word singular."""
    return name_keys(text)[0] if name_keys(text) else ""


def name_keys(text: str) -> list[str]:
    """The lookup keys a class word may have: its regular singular first, then the other
    singulars English spelling allows ("volcanoes" -> volcanoe, volcano)."""
    words = re.sub(r"[^\w\s-]", " ", text.lower()).replace("_", " ").split()
    if not words:
        return []
    last = words[-1]
    forms = [singular_word(last)]
    if last.endswith("es") and len(last) > 4:
        forms.append(last[:-2])
    if last.endswith("s") and len(last) > 3:
        forms.append(last[:-1])
    forms.append(last)
    return list(dict.fromkeys(" ".join([*words[:-1], f]) for f in forms))


def singular_word(word: str) -> str:
    """English plural to singular for class words ("cities" -> "city", "churches" -> "church")."""
    w = word.lower()
    if w == "people":
        return "person"
    if len(w) <= 3 or not w.endswith("s") or w.endswith(("ss", "us", "is")):
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "xes", "zes", "sses")):
        return w[:-2]
    return w[:-1]


def sample_kind(term: dict) -> ValueKind | None:
    """Whether one sampled value is a number or a date (None: neither)."""
    if term.get("type") != "literal":
        return None
    value = str(term.get("value", "")).strip()
    dt = (term.get("datatype") or "").rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    if dt in _DATE_TYPES or (dt in ("", "string") and _DATE.match(value)):
        return "date"
    if dt in _NUMERIC_TYPES or _NUMERIC.match(value):
        return "number"  # a typed unit (dbpedia's kilogram) whose value is a number is a number
    return None


class KGProfile:
    """The profile of the KG behind one :class:`KGTools` (see the module doc)."""

    def __init__(self, tools: KGTools, *, timeout_s: float = 10.0) -> None:
        self._tools = tools
        self._timeout_s = timeout_s
        self._typing: Typing | None = None
        self._classes: _Classes | None = None
        self._attributes: dict[str, list[Attribute]] = {}
        self._schema: dict[str, bool] = {}
        self._redirects: dict[str, str | None] = {}

    async def _rows(self, query: str, max_rows: int = 10_000) -> list[dict]:
        res = await self._tools._select(query, timeout_s=self._timeout_s, max_rows=max_rows)
        return [{k: v.model_dump(exclude_none=True) for k, v in row.items()} for row in res.rows]

    # ------------------------------------------------------------------ typing
    async def typing(self) -> Typing:
        """Which predicates type instances and relate classes (found once)."""
        if self._typing is not None:
            return self._typing
        found: dict[str, set[str]] = {"type": {RDF_TYPE}, "sub": {RDFS_SUBCLASS_OF}}
        candidates: dict[str, str] = {}
        for text in (*TYPE_NAMES, *SUBCLASS_NAMES):
            with contextlib.suppress(ToolError, AttributeError):
                for hit in self._tools.labels.search(text, 5, "relation"):
                    if hit.exact:
                        candidates[hit.iri] = text
        if await self._tools._kg_declares():
            decl = sparql_iri(DECLARING_PREDICATES[0])  # the direct claim: the predicate triples use
            names = " ".join(sparql_iri(p) for p in self._tools.naming.name_predicates)
            wanted = ", ".join(f'"{t}"' for t in (*TYPE_NAMES, *SUBCLASS_NAMES))  # closed words, no user text
            with contextlib.suppress(ToolError):
                for row in await self._rows(f"SELECT ?p ?l WHERE {{ ?d {decl} ?p . VALUES ?np {{ {names} }} "
                                            f"?d ?np ?l FILTER(isLiteral(?l) && LCASE(STR(?l)) IN ({wanted})) }}",
                                            1_000):
                    text = " ".join(str(row.get("l", {}).get("value", "")).lower().split())
                    if text in TYPE_NAMES or text in SUBCLASS_NAMES:
                        candidates[row["p"]["value"]] = text
        for iri, text in candidates.items():
            found["type" if text in TYPE_NAMES else "sub"].add(iri)
        self._typing = Typing(tuple(sorted(found["type"], key=lambda p: p != RDF_TYPE)),
                              tuple(sorted(found["sub"], key=lambda p: p != RDFS_SUBCLASS_OF)))
        return self._typing

    # ------------------------------------------------------------------ classes
    async def _read_classes(self) -> _Classes:
        if self._classes is not None:
            return self._classes
        typing = await self.typing()
        out = _Classes()
        tps = " ".join(sparql_iri(p) for p in typing.type_predicates)
        sps = " ".join(sparql_iri(p) for p in typing.subclass_predicates)
        with contextlib.suppress(ToolError):
            for row in await self._rows(f"SELECT ?t ?c (COUNT(?s) AS ?n) WHERE {{ VALUES ?t {{ {tps} }} ?s ?t ?c "
                                        f"FILTER(isIRI(?c)) }} GROUP BY ?t ?c ORDER BY DESC(?n) LIMIT {MAX_CLASSES}"):
                if "c" in row and "n" in row and "t" in row:
                    c, n = row["c"]["value"], int(float(row["n"]["value"]))
                    if c in PROPERTY_TYPES or c in CLASS_TYPES:
                        continue  # the schema's own kinds (properties, classes) hold no instances
                    if n > out.sizes.get(c, 0):
                        out.typed_by[c] = row["t"]["value"]
                    out.sizes[c] = out.sizes.get(c, 0) + n
        with contextlib.suppress(ToolError):
            for row in await self._rows(f"SELECT ?a ?b WHERE {{ VALUES ?sc {{ {sps} }} ?a ?sc ?b FILTER(isIRI(?b)) }}",
                                        50_000):
                a, b = row.get("a", {}).get("value"), row.get("b", {}).get("value")
                if a and b and a != b:
                    out.children.setdefault(b, set()).add(a)
                    out.sizes.setdefault(a, 0)
                    out.sizes.setdefault(b, 0)
        iris = sorted(out.sizes)[: 4 * MAX_CLASSES]  # the subclass tree may name more than are typed
        if iris:
            try:
                labels = await self._tools.labels_for(iris)
            except ToolError:
                labels = {}  # classes are then known by their local names
            aliases = await self._all_names(iris)
            by_name: dict[str, set[str]] = defaultdict(set)
            for iri in iris:
                out.label[iri] = labels.get(iri, iri)
                for text in {labels.get(iri, ""), *aliases.get(iri, ())}:
                    key = name_key(text)
                    if key:
                        by_name[key].add(iri)
            out.totals = {c: self._total(out, c) for c in iris}
            out.names = {k: sorted(v, key=lambda c: (-out.totals[c], c)) for k, v in by_name.items()}
        self._classes = out
        return out

    async def _all_names(self, iris: Sequence[str]) -> dict[str, list[str]]:
        """Every name and alias of ``iris`` in the preferred, untagged or English language."""
        from kgteam.tools.kg_tools import _values_chunks
        from kgteam.tools.naming import lang_rank

        out: dict[str, list[str]] = defaultdict(list)
        for chunk in _values_chunks(list(iris)):
            with contextlib.suppress(ToolError):
                for row in await self._rows(self._tools.naming.names_query(chunk)):
                    lit = row.get("l", {})
                    if lang_rank(lit.get("xml:lang") or lit.get("lang"), self._tools.naming.lang) <= 2:
                        out[row["s"]["value"]].append(str(lit.get("value", "")))
        return out

    @staticmethod
    def _total(classes: _Classes, klass: str) -> int:
        seen, stack, n = set(), [klass], 0
        while stack:
            c = stack.pop()
            if c in seen:
                continue
            seen.add(c)
            n += classes.sizes.get(c, 0)
            stack.extend(classes.children.get(c, ()))
        return n

    async def classes(self) -> dict[str, int]:
        """Class IRI -> members typed with it directly (the largest :data:`MAX_CLASSES`)."""
        return dict((await self._read_classes()).sizes)

    async def is_class(self, iri: str) -> bool:
        return iri in (await self._read_classes()).sizes

    async def class_label(self, iri: str) -> str:
        return (await self._read_classes()).label.get(iri, iri)

    async def classes_named(self, words: str) -> list[str]:
        """Classes whose name or alias is ``words`` (singular or plural), those with most members first."""
        classes = await self._read_classes()
        for key in name_keys(words):
            found = [c for c in classes.names.get(key, []) if classes.totals.get(c, 0) > 0]
            if found:
                return found
        return []

    async def type_predicate(self, klass: str) -> str:
        """The predicate that types the class's members (``rdf:type``, or the KG's own "instance of")."""
        classes = await self._read_classes()
        for c in await self.closure(klass):
            if c in classes.typed_by:
                return classes.typed_by[c]
        return (await self.typing()).type_predicates[0]

    async def class_size(self, iri: str) -> int:
        """Members of the class and of its subclasses (as typed directly; a member typed twice counts twice)."""
        classes = await self._read_classes()
        return classes.totals.get(iri) if iri in classes.totals else self._total(classes, iri)

    async def closure(self, klass: str) -> list[str]:
        """The class and every subclass of it (so a capital city is a city)."""
        classes = await self._read_classes()
        seen: list[str] = []
        stack = [klass]
        while stack and len(seen) < 500:
            c = stack.pop()
            if c in seen:
                continue
            seen.append(c)
            stack.extend(sorted(classes.children.get(c, ())))
        return seen

    # ------------------------------------------------------------------ attributes
    async def attributes(self, klass: str) -> list[Attribute]:
        """The numeric and date relations of the class's members, most held first."""
        if klass in self._attributes:
            return self._attributes[klass]
        typing = await self.typing()
        tps = " ".join(sparql_iri(p) for p in typing.type_predicates)
        cls = " ".join(sparql_iri(c) for c in await self.closure(klass))
        skip = {*self._tools.naming.all_predicates, *typing.type_predicates}
        query = (f"SELECT ?p (COUNT(DISTINCT ?s) AS ?n) (SAMPLE(?v) AS ?sample) WHERE {{ "
                 f"{{ SELECT DISTINCT ?s WHERE {{ VALUES ?t {{ {tps} }} VALUES ?c {{ {cls} }} ?s ?t ?c }} "
                 f"LIMIT {MEMBER_SAMPLE} }} ?s ?p ?v FILTER(isLiteral(?v)) }} GROUP BY ?p")
        try:
            rows = await self._rows(query)
        except ToolError:
            return []
        members = max(1, min(MEMBER_SAMPLE, await self.class_size(klass)))
        found: list[tuple[str, ValueKind, float, bool]] = []
        for row in rows:
            p = row.get("p", {}).get("value")
            sample = row.get("sample")
            if not p or sample is None or p in skip:
                continue
            kind = sample_kind(sample)
            if kind is None:
                continue
            dt = (sample.get("datatype") or "").rsplit("#", 1)[-1]
            year_only = dt == "gYear"
            found.append((p, kind, min(1.0, int(float(row["n"]["value"])) / members), year_only))
        labels = await self._tools.labels_for([p for p, *_ in found]) if found else {}
        out = sorted((Attribute(p, labels.get(p, p), k, round(c, 4), y) for p, k, c, y in found),
                     key=lambda a: (-a.coverage, a.label))
        self._attributes[klass] = out
        return out

    # ------------------------------------------------------------------ schema nodes
    async def schema_nodes(self, iris: Sequence[str]) -> set[str]:
        """Which of ``iris`` are schema, never an answer to a question about instances: declared
        properties (typed as properties, or declaring one: Wikibase's property entities), redirect
        and disambiguation pages. Classes are not among them: a class word names a kind."""
        from kgteam.tools.kg_tools import _values_chunks

        todo = sorted({i for i in iris if i not in self._schema})
        if todo:
            decl = ", ".join(sparql_iri(p) for p in (*DECLARING_PREDICATES, *REDIRECT_PREDICATES,
                                                      *DISAMBIGUATION_PREDICATES))
            types = ", ".join(sparql_iri(t) for t in PROPERTY_TYPES)
            forms = ", ".join(sparql_iri(p) for p in DECLARING_PREDICATES)  # wdt:P36, p:P36, pq:P36 ...
            found: set[str] = set()
            for chunk in _values_chunks(todo):
                q = (f"SELECT DISTINCT ?s WHERE {{ VALUES ?s {{ {chunk} }} {{ ?s ?d ?x FILTER(?d IN ({decl})) }} "
                     f"UNION {{ ?x ?d ?s FILTER(?d IN ({forms})) }} "
                     f"UNION {{ ?s {sparql_iri(RDF_TYPE)} ?t FILTER(?t IN ({types})) }} }}")
                try:
                    found |= {r["s"]["value"] for r in await self._rows(q) if "s" in r}
                except ToolError:
                    return {i for i in iris if self._schema.get(i)}
            self._schema.update({i: i in found for i in todo})
        return {i for i in iris if self._schema.get(i)}

    async def declared_classes(self, iris: Sequence[str]) -> set[str]:
        """Which of ``iris`` the KG declares as classes (``owl:Class``, ``rdfs:Class``) or has members of."""
        known = await self._read_classes()
        out = {i for i in iris if i in known.sizes}
        rest = [i for i in iris if i not in out]
        if rest:
            from kgteam.tools.kg_tools import _values_chunks

            types = ", ".join(sparql_iri(t) for t in CLASS_TYPES)
            for chunk in _values_chunks(rest):
                with contextlib.suppress(ToolError):
                    q = (f"SELECT DISTINCT ?s WHERE {{ VALUES ?s {{ {chunk} }} ?s {sparql_iri(RDF_TYPE)} ?t "
                         f"FILTER(?t IN ({types})) }}")
                    out |= {r["s"]["value"] for r in await self._rows(q) if "s" in r}
        return out

    async def redirect_targets(self, iris: Sequence[str]) -> dict[str, str]:
        """Redirect pages among ``iris`` and the page each redirects to (an alias of its target)."""
        from kgteam.tools.kg_tools import _values_chunks

        todo = sorted({i for i in iris if i not in self._redirects})
        if todo:
            preds = ", ".join(sparql_iri(p) for p in REDIRECT_PREDICATES)
            found: dict[str, str] = {}
            for chunk in _values_chunks(todo):
                with contextlib.suppress(ToolError):
                    for r in await self._rows(f"SELECT ?s ?t WHERE {{ VALUES ?s {{ {chunk} }} ?s ?r ?t "
                                              f"FILTER(?r IN ({preds}) && isIRI(?t)) }}"):
                        found.setdefault(r["s"]["value"], r["t"]["value"])
            self._redirects.update({i: found.get(i) for i in todo})
        return {i: t for i in iris if (t := self._redirects.get(i))}

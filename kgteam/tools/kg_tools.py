"""The KG tools roles call (and an LLM can call as function tools).

Every tool is async and runs the blocking backend in a worker thread, so one asyncio process
serves many sessions. Every value that reaches SPARQL goes through :mod:`sparql_guard`
builders (IRIs checked, literals escaped); user SPARQL goes through the guard (read-only,
LIMIT, timeout, row and byte caps), and both the guard's parse and the execution run off the
event loop. Neighbour lists are sorted in Python (not by a backend ORDER BY) so every
backend returns the same list.
"""

from __future__ import annotations

import asyncio
import functools
import math
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, create_model
from rapidfuzz.distance import Levenshtein

from kgteam.tools.backends.base import LabelIndex, TripleStore
from kgteam.tools.backends.rdf_terms import XSD_STRING, canonical_datatype, term_sort_key
from kgteam.tools.embedding.base import Embedder, EmbeddingError
from kgteam.tools.example_bank import LazyBank, read_reader_data
from kgteam.tools.fusion import reciprocal_rank_fusion
from kgteam.tools.lexicon import Lexicon, read_lexicon
from kgteam.tools.naming import DEFAULT_NAMING, Naming, fallback_name, lang_rank, naming_of
from kgteam.tools.profile import KGProfile
from kgteam.tools.result_cap import MAX_RESULT_BYTES
from kgteam.tools.sparql_guard import MAX_QUERY_BYTES, analyse_query, check_iri, sparql_iri
from kgteam.tools.text_normalize import name_edits, normalize_label
from kgteam.tools.toolbox import Tool, Toolbox
from kgteam.tools.types import (
    EntitySchema,
    LabelHit,
    NeighborTriple,
    PredicateStat,
    RDFTerm,
    RelationNames,
    SimilarTriple,
    SparqlResult,
    ToolError,
)
from kgteam.tools.vocabulary import DECLARING_PREDICATES

if TYPE_CHECKING:
    from kgteam.tools.kg import KnowledgeGraph
    from kgteam.tools.vectors.store import KGVectors

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SKOS_ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
DESCRIPTION_PREDICATES = ("http://www.w3.org/2000/01/rdf-schema#comment", "http://schema.org/description")

Direction = Literal["out", "in", "both"]
MAX_QUERY_CHARS = MAX_QUERY_BYTES  # the guard counts UTF-8 bytes; a character is at least one
SearchText = Annotated[str, Field(min_length=1, max_length=1000, description="a name or alias to look up")]
SearchK = Annotated[int, Field(ge=1, le=1000, description="how many matches to return")]
IriArg = Annotated[str, Field(min_length=1, description="absolute IRI of an entity, e.g. from search_entities")]
_VALUES_BATCH = 400
_TYPE_SAMPLE = 1_000
_GRACE_S = 1.0
_DEFAULT_EMBEDDER: Any = object()  # from_kg: "the embedded default", as opposed to None (no embedder)


class KGTools:
    """Typed async tools over one triple store and one label index."""

    def __init__(
        self,
        store: TripleStore,
        labels: LabelIndex,
        *,
        default_timeout_s: float = 10.0,
        max_rows: int = 10_000,
        max_result_bytes: int = MAX_RESULT_BYTES,
        edge_fetch: int = 0,
        embedder: Embedder | None = None,
        vectors: KGVectors | None = None,
        lexicon: Lexicon | None = None,
        naming: Naming = DEFAULT_NAMING,
        reader: dict[str, Any] | None = None,
        bank: LazyBank | None = None,
        kg_name: str | None = None,
    ) -> None:
        self.store = store
        # The KG's name, so a missing index is reported with the exact command that adds it.
        self.kg_name = kg_name
        # The KG's trained reader (``<kg>/reader.json`` from its example bank; kgteam.roles.semantic.reader),
        # handed to every role's toolbox so each semantic layer reads with it. None: the hand scorer only.
        self.reader = reader
        # The KG's example bank (``<kg>/examples.json``), read on first use: the worked examples of
        # model prompts (kgteam.roles.fewshot). None: the KG has no bank.
        self.bank = bank
        # What the KG calls its IRIs (kgteam.tools.naming): the one definition behind every label shown.
        self.naming = naming
        # Words for predicates beyond their labels (``<kg>/lexicon.json``: written or ``kgteam tune``d).
        self.lexicon = lexicon
        self.labels = labels
        # Text embedder for dense relation search, similar_triples and semantic scoring (None: lexical only).
        self.embedder = embedder
        # The KG's vector index (relations, triples), queried only with the embedder that made it.
        self.vectors = vectors
        # Edges fetched per direction and hop before sorting and cutting (at least ``limit``);
        # raising it widens the backend-independent range at the cost of hub latency.
        self.edge_fetch = edge_fetch
        self._has_types: bool | None = None  # does the KG use rdf:type at all (checked once)
        self._declares: bool | None = None  # does the KG name predicates on declaring nodes (checked once)
        # What the KG says about itself (classes, typing, schema nodes), read lazily and kept
        self.profile = KGProfile(self)
        self.default_timeout_s = default_timeout_s
        self.max_rows = max_rows
        self.max_result_bytes = max_result_bytes

    @classmethod
    def from_kg(cls, kg: KnowledgeGraph, *, embedder: Embedder | None = _DEFAULT_EMBEDDER, **kwargs: Any) -> KGTools:
        """Tools over an opened KG, with its vectors when it has them; ``embedder`` defaults to the
        embedded WordLlama (None when it is not installed); pass None for lexical search only."""
        if embedder is _DEFAULT_EMBEDDER:
            from kgteam.tools.embedding.choose import build_embedder

            embedder = build_embedder()
        if "lexicon" not in kwargs:  # the KG folder's lexicon.json (LexiconError when it is broken)
            kwargs["lexicon"] = read_lexicon(kg.path)
        if "reader" not in kwargs:  # the KG folder's reader.json (BankError when it is broken)
            kwargs["reader"] = read_reader_data(kg.path)
            if kwargs["reader"] is not None:  # answers name its confidence map after this KG
                kwargs["reader"]["kg"] = kg.name
        if "bank" not in kwargs:  # the KG folder's examples.json, parsed only when a prompt needs it
            kwargs["bank"] = LazyBank.of(kg.path)
        if "naming" not in kwargs:  # the naming predicates `kgteam load --label-predicate` recorded
            kwargs["naming"] = naming_of(kg.manifest)
        kwargs.setdefault("kg_name", kg.name)
        return cls(kg.store, kg.labels, embedder=embedder, vectors=kg.vectors, **kwargs)

    def close(self) -> None:
        self.store.close()
        self.labels.close()

    # ------------------------------------------------------------------ plumbing

    async def _select(self, sparql: str, *, timeout_s: float | None = None, max_rows: int | None = None) -> SparqlResult:
        """Run a query the tools built themselves (already safe) in a worker thread."""
        t = timeout_s or self.default_timeout_s
        rows = max_rows or self.max_rows
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(self.store.query, sparql, timeout_s=t, max_rows=rows),
                t + _GRACE_S + getattr(self.store, "probe_s", 0.0),  # an endpoint's probe after a timeout
            )
        except TimeoutError:
            raise ToolError(f"query timed out after {t:g}s") from None

    # ------------------------------------------------------------------ label search

    @staticmethod
    def _check_search(text: str, k: int) -> None:
        if not isinstance(text, str) or not text.strip():
            raise ToolError("search text must be a non-empty string")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 1000:
            raise ToolError("k must be an integer between 1 and 1000")

    async def search_entities(
        self, text: SearchText, k: SearchK = 10,
        names_only: Annotated[bool, Field(description="only names equal to the text up to a typo or two "
                                          "(fast; no partial or word matches)")] = False,
    ) -> list[LabelHit]:
        """Find knowledge-graph entities by name or alias (typo tolerant, exact matches first)."""
        self._check_search(text, k)
        if not names_only:
            return await asyncio.to_thread(self.labels.search, text, k, "entity")
        fast = getattr(self.labels, "search_names", None)
        if fast is not None:  # the tantivy index reads only its whole-label dictionary
            return await asyncio.to_thread(fast, text, k, "entity")
        hits = await asyncio.to_thread(self.labels.search, text, max(k, 50), "entity")
        return [h for h in hits if _names_alike(text, h)][:k]

    async def search_relations(self, text: SearchText, k: SearchK = 10) -> list[LabelHit]:
        """Find knowledge-graph relations (predicates) by name or meaning (paraphrases match too)."""
        self._check_search(text, k)
        if not self._dense_relations():
            return await asyncio.to_thread(self.labels.search, text, k, "relation")
        lexical, dense = await asyncio.gather(
            asyncio.to_thread(self.labels.search, text, k, "relation"),
            asyncio.to_thread(self._dense_relation_hits, text, max(k, 20)),
        )
        return fuse_relation_hits(lexical, dense, k)

    def _dense_relations(self) -> bool:
        """Whether relation vectors can be queried: present, and made by this embedder."""
        if self.vectors is None or self.embedder is None:
            return False
        try:
            self.vectors.check(self.embedder)
        except EmbeddingError:
            return False
        return True

    def _dense_relation_hits(self, text: str, k: int) -> list[LabelHit]:
        assert self.vectors is not None and self.embedder is not None
        query = self.embedder.embed([text])
        return [
            LabelHit(iri=m.iri, label=m.label, matched=m.matched, score=round(m.score, 6), kind="relation")
            for m in self.vectors.search_relations(query, k)
        ]

    async def similar_triples(
        self,
        text: Annotated[str, Field(min_length=1, max_length=1000, description="a statement or question")],
        k: SearchK = 10,
    ) -> list[SimilarTriple]:
        """KG triples whose wording is closest in meaning to a text (dense search over all facts)."""
        self._check_search(text, k)
        if self.vectors is None or not self.vectors.has_triples:
            name = self.kg_name or "NAME"
            raise ToolError(f"KG {name!r} has no triple vector index, so similar_triples cannot answer: "
                            f"add it with `kgteam index {name}` (or `kgteam load ... --vectors triples`)")
        try:
            embedder = self.vectors.check(self.embedder)
        except EmbeddingError as exc:
            raise ToolError(str(exc)) from None

        def run() -> list[SimilarTriple]:
            assert self.vectors is not None
            matches = self.vectors.search_triples(embedder.embed([text]), k)
            return [
                SimilarTriple(
                    subject=m.subject, predicate=m.predicate, object=m.object,
                    object_is_literal=m.object_kind == "l",
                    object_datatype=_literal_datatype(m.object_kind, m.object_datatype),
                    subject_label=m.subject_label, predicate_label=m.predicate_label, object_label=m.object_label,
                    score=round(m.score, 6),
                )
                for m in matches
            ]

        return await asyncio.to_thread(run)

    # ------------------------------------------------------------------ labels

    async def labels_for(self, iris: list[str]) -> dict[str, str]:
        """Human-readable names for a list of IRIs: the KG's own (rdfs:label, skos:prefLabel,
        schema:name, foaf:name, dcterms:title or a predicate the KG was loaded with; English or
        untagged first), else the humanised local name."""
        wanted = sorted({i for i in iris if isinstance(i, str)})
        found: dict[str, list[tuple[str, str, str | None]]] = defaultdict(list)
        for chunk in _values_chunks(wanted):
            res = await self._select(self.naming.names_query(chunk))
            for row in res.rows:
                if "s" in row and "p" in row and "l" in row and row["l"].type == "literal":
                    found[row["s"].value].append((row["p"].value, row["l"].value, row["l"].lang))
        named = {iri: self.naming.best(found.get(iri, ())) for iri in wanted}
        unnamed = [iri for iri, name in named.items() if name is None]
        if unnamed and await self._kg_declares():
            # a Wikibase-style predicate (wdt:P36) is named on the node that declares it (wd:P36)
            declared: dict[str, list[tuple[str, str, str | None]]] = defaultdict(list)
            for chunk in _values_chunks(unnamed):
                res = await self._select(self.naming.declared_names_query(chunk))
                for row in res.rows:
                    if "s" in row and "p" in row and "l" in row and row["l"].type == "literal":
                        declared[row["s"].value].append((row["p"].value, row["l"].value, row["l"].lang))
            named.update({iri: self.naming.best(declared.get(iri, ())) for iri in unnamed})
        return {iri: name or fallback_name(iri) for iri, name in named.items()}

    async def _kg_declares(self) -> bool:
        """Whether the KG names predicates on declaring nodes at all (checked once, so a KG without
        them pays one ASK, not a second query per lookup)."""
        if self._declares is None:
            decl = " ".join(sparql_iri(p) for p in DECLARING_PREDICATES)
            try:  # VALUES, not FILTER IN: the store looks the predicates up instead of scanning every triple
                res = await self._select(f"ASK {{ VALUES ?decl {{ {decl} }} ?d ?decl ?p }}")
                self._declares = bool(res.boolean)
            except ToolError:
                self._declares = False  # asked once: a KG too slow to say has its names where they are
        return self._declares

    async def relation_names(self, predicates: list[str]) -> dict[str, RelationNames]:
        """What is known about how people name each predicate beyond its label: its other names
        (``skos:altLabel`` and the KG's lexicon file) and its descriptions (``rdfs:comment``,
        ``schema:description``)."""
        wanted = sorted({p for p in predicates if isinstance(p, str)})
        out = {p: RelationNames() for p in wanted}
        kinds = " ".join(sparql_iri(k) for k in (SKOS_ALT, *DESCRIPTION_PREDICATES))
        # the predicate's own, and its declaring node's (a Wikibase property entity's aliases)
        declared = ""
        if await self._kg_declares():
            decl = ", ".join(sparql_iri(p) for p in DECLARING_PREDICATES)
            declared = f" UNION {{ ?d ?decl ?p . FILTER(?decl IN ({decl})) ?d ?k ?v }}"
        for chunk in _values_chunks(wanted):
            q = (f"SELECT ?p ?k ?v WHERE {{ VALUES ?p {{ {chunk} }} VALUES ?k {{ {kinds} }} "
                 f"{{ ?p ?k ?v }}{declared} FILTER(isLiteral(?v)) }}")
            res = await self._select(q)
            for row in res.rows:
                p, k, v = row.get("p"), row.get("k"), row.get("v")
                if p is None or k is None or v is None or p.value not in out:
                    continue
                if lang_rank(v.lang, self.naming.lang) > 2:
                    continue  # another language's alias says nothing about an English question's words
                bucket = out[p.value].names if k.value == SKOS_ALT else out[p.value].descriptions
                if v.value not in bucket:
                    bucket.append(v.value)
        if self.lexicon is not None:
            for p, names in out.items():
                names.phrases.extend(self.lexicon.relations.get(p, []))
        return out

    # ------------------------------------------------------------------ schema

    async def entity_schema(self, iri: IriArg) -> EntitySchema:
        """Predicates going out of and into an entity, with counts and value types."""
        node = sparql_iri(iri)
        type_p = sparql_iri(RDF_TYPE)
        types_q = f"SELECT DISTINCT ?t WHERE {{ {node} {type_p} ?t }}"
        out_q = f"SELECT ?p (COUNT(?o) AS ?n) WHERE {{ {node} ?p ?o }} GROUP BY ?p"
        in_q = f"SELECT ?p (COUNT(?s) AS ?n) WHERE {{ ?s ?p {node} }} GROUP BY ?p"
        # Value types come from a bounded sample of edges so hubs stay cheap; counts are exact.
        # Virtuoso's DATATYPE() is unbound for language-tagged literals (SPARQL 1.0): LANG() says which.
        lit_q = (
            f"SELECT ?p ?dt ?tagged (COUNT(?o) AS ?n) WHERE {{ "
            f"{{ SELECT ?p ?o WHERE {{ {node} ?p ?o }} LIMIT {_TYPE_SAMPLE} }} FILTER(isLiteral(?o)) "
            f'BIND(DATATYPE(?o) AS ?dt) BIND(LANG(?o) != "" AS ?tagged) }} GROUP BY ?p ?dt ?tagged'
        )
        out_types_q = (
            f"SELECT ?p ?t (COUNT(?o) AS ?n) WHERE {{ "
            f"{{ SELECT ?p ?o WHERE {{ {node} ?p ?o }} LIMIT {_TYPE_SAMPLE} }} ?o {type_p} ?t }} GROUP BY ?p ?t"
        )
        in_types_q = (
            f"SELECT ?p ?t (COUNT(?s) AS ?n) WHERE {{ "
            f"{{ SELECT ?s ?p WHERE {{ ?s ?p {node} }} LIMIT {_TYPE_SAMPLE} }} ?s {type_p} ?t }} GROUP BY ?p ?t"
        )
        label_q = self.naming.names_query(node)
        has_types = await self._kg_has_types()
        empty = SparqlResult(query="")
        queries = [out_q, in_q, lit_q, label_q] + ([types_q, out_types_q, in_types_q] if has_types else [])
        results = await asyncio.gather(*(self._select(q, max_rows=_TYPE_SAMPLE) for q in queries))
        out_r, in_r, lit_r, label_rows = results[:4]
        types_r, out_t, in_t = results[4:] if has_types else (empty, empty, empty)
        for row in lit_r.rows:  # literal datatypes join the class types of IRI values
            tagged = "tagged" in row and row["tagged"].value in ("true", "1")  # Virtuoso: 1
            dt = RDF_LANGSTRING if tagged else row["dt"].value if "dt" in row else XSD_STRING
            row["t"] = RDFTerm(type="uri", value=dt)
        out_t = SparqlResult(query="", rows=[*out_t.rows, *lit_r.rows])

        def value_types(res: SparqlResult) -> dict[str, list[str]]:
            acc: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
            for row in res.rows:
                if "p" not in row or "t" not in row:
                    continue
                t = canonical_datatype(row["t"].value) if row["t"].type == "uri" else row["t"].value
                acc[row["p"].value][t] += int(row["n"].value) if "n" in row else 1
            return {p: [t for t, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))] for p, c in acc.items()}

        def counts(res: SparqlResult) -> dict[str, int]:
            return {r["p"].value: int(r["n"].value) for r in res.rows if "p" in r and "n" in r}

        outc, inc = counts(out_r), counts(in_r)
        outt, intt = value_types(out_t), value_types(in_t)
        plabels = await self.labels_for([*outc, *inc])
        own = [(r["p"].value, r["l"].value, r["l"].lang) for r in label_rows.rows if "p" in r and "l" in r]

        def stats(c: dict[str, int], t: dict[str, list[str]], direction: Literal["out", "in"]) -> list[PredicateStat]:
            items = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))
            return [
                PredicateStat(predicate=p, label=plabels.get(p) or fallback_name(p, predicate=True), direction=direction, count=n,
                              value_types=t.get(p, []))
                for p, n in items
            ]

        return EntitySchema(
            iri=iri,
            label=self.naming.best(own),
            types=sorted(r["t"].value for r in types_r.rows if "t" in r),
            outgoing=stats(outc, outt, "out"),
            incoming=stats(inc, intt, "in"),
        )

    async def has_entity(self, iri: str) -> bool:
        """Whether ``iri`` is in any triple of the KG (so "unknown entity" can be told from "no match")."""
        node = sparql_iri(iri)
        res = await self._select(f"ASK {{ {{ {node} ?p ?o }} UNION {{ ?s ?p {node} }} }}")
        return bool(res.boolean)

    async def _kg_has_types(self) -> bool:
        """Whether the KG has any rdf:type triple (checked once): if not, type joins are skipped."""
        if self._has_types is None:
            res = await self._select(f"ASK {{ ?s {sparql_iri(RDF_TYPE)} ?t }}")
            self._has_types = bool(res.boolean)
        return self._has_types

    # ------------------------------------------------------------------ traversal

    async def _edges(
        self, nodes: Sequence[str], predicates: Sequence[str] | None, direction: Literal["out", "in"], limit: int
    ) -> list[tuple[RDFTerm, RDFTerm, RDFTerm]]:
        """Edges touching ``nodes`` in one direction, unordered, at most ``limit``."""
        if predicates:
            pfilter, post = "VALUES ?p { " + " ".join(sparql_iri(p) for p in predicates) + " } ", ""
        else:
            excl = ", ".join(sparql_iri(p) for p in sorted(self.naming.all_predicates))
            pfilter, post = "", f"FILTER(?p NOT IN ({excl})) "
        out: list[tuple[RDFTerm, RDFTerm, RDFTerm]] = []
        for i in range(0, len(nodes), _VALUES_BATCH):
            if len(out) >= limit:
                break
            chunk = nodes[i : i + _VALUES_BATCH]
            anchor = "?s" if direction == "out" else "?o"
            # No ORDER BY: Oxigraph sorts by decoding every term (tens of ms on a hub); the caller
            # sorts in Python. Complete (hence backend-independent) whenever the degree <= limit.
            if len(chunk) == 1:
                pattern = "?s ?p ?o".replace(anchor, sparql_iri(chunk[0]), 1)
                far = "?o" if direction == "out" else "?s"
                q = f"SELECT ?p {far} WHERE {{ {pfilter}{pattern} {post}}} LIMIT {limit - len(out)}"
            else:
                values = f"VALUES {anchor} {{ " + " ".join(sparql_iri(n) for n in chunk) + " } "
                q = f"SELECT ?s ?p ?o WHERE {{ {values}{pfilter}?s ?p ?o {post}}} LIMIT {limit - len(out)}"
            res = await self._select(q, max_rows=limit)
            for row in res.rows:
                s = row.get("s") or RDFTerm(type="uri", value=chunk[0])
                o = row.get("o") or RDFTerm(type="uri", value=chunk[0])
                if "p" in row:
                    out.append((s, row["p"], o))
        return out

    async def neighbors(
        self,
        iri: IriArg,
        predicates: Annotated[list[str] | None, Field(description="predicate IRIs to follow (all when empty)")] = None,
        direction: Direction = "both",
        hops: Annotated[int, Field(ge=1, le=3)] = 1,
        limit: Annotated[int, Field(ge=1, le=10_000)] = 200,
    ) -> list[NeighborTriple]:
        """Triples around an entity with labels, optionally restricted to some predicates.

        ``hops`` away at most; ``predicates`` restricts every hop. Naming triples (names and
        aliases, :mod:`kgteam.tools.naming`) are left out unless their predicates are asked for. The result is
        ordered by hop, direction, predicate, then the far end, and cut at ``limit``. Up to
        ``max(limit, edge_fetch)`` edges per direction and hop are fetched and sorted; when an
        entity has more (a hub), which edges are kept is stable per backend but backend-specific.
        """
        check_iri(iri)
        if direction not in ("out", "in", "both"):
            raise ToolError("direction must be 'out', 'in' or 'both'")
        if not isinstance(hops, int) or not 1 <= hops <= 3:
            raise ToolError("hops must be 1, 2 or 3")
        if not isinstance(limit, int) or not 1 <= limit <= self.max_rows:
            raise ToolError(f"limit must be between 1 and {self.max_rows}")
        preds = sorted({check_iri(p) for p in predicates}) if predicates else None
        dirs: list[Literal["out", "in"]] = ["out", "in"] if direction == "both" else [direction]  # type: ignore[list-item]

        seen: set[tuple[str, str, str, str]] = set()
        found: list[tuple[int, Literal["out", "in"], RDFTerm, RDFTerm, RDFTerm]] = []
        frontier = [iri]
        visited = {iri}
        for hop in range(1, hops + 1):
            next_frontier: set[str] = set()
            hop_rows: list[tuple[int, Literal["out", "in"], RDFTerm, RDFTerm, RDFTerm]] = []
            fetch = max(limit - len(found), self.edge_fetch)
            per_dir = await asyncio.gather(*(self._edges(frontier, preds, d, fetch) for d in dirs))
            for d, edges in zip(dirs, per_dir, strict=True):
                for s, p, o in edges:
                    key = (s.value, p.value, o.type + o.value, o.datatype or o.lang or "")
                    if key in seen:
                        continue
                    seen.add(key)
                    hop_rows.append((hop, d, s, p, o))
                    far = o if d == "out" else s
                    if far.type == "uri" and far.value not in visited:
                        next_frontier.add(far.value)
            hop_rows.sort(key=lambda r: (r[1] != "out", r[3].value, term_sort_key(r[4] if r[1] == "out" else r[2]),
                                         term_sort_key(r[2] if r[1] == "out" else r[4])))
            found.extend(hop_rows[: limit - len(found)])
            if len(found) >= limit or not next_frontier:
                break
            visited |= next_frontier
            frontier = sorted(next_frontier)

        names = await self.labels_for(
            {t.value for _, _, s, p, o in found for t in (s, p, o) if t.type == "uri"}
        )
        result = []
        for hop, d, s, p, o in found:
            result.append(
                NeighborTriple(
                    subject=s.value,
                    predicate=p.value,
                    object=o.value,
                    object_is_literal=o.type == "literal",
                    object_datatype=o.datatype if o.type == "literal" else None,
                    subject_label=names.get(s.value),
                    predicate_label=names.get(p.value),
                    object_label=names.get(o.value) if o.type == "uri" else o.value if o.type == "literal" else None,
                    direction=d,
                    hop=hop,
                )
            )
        return result

    # ------------------------------------------------------------------ raw SPARQL

    async def run_sparql(
        self,
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)],
        limit: Annotated[int | None, Field(ge=1, description="row cap (the KG's own cap applies too)")] = None,
        timeout_s: Annotated[float | None, Field(gt=0, allow_inf_nan=False, description="seconds; at most the KG's "
                                                 "per-query timeout")] = None,
    ) -> SparqlResult:
        """Run a read-only SPARQL query (SELECT/ASK/CONSTRUCT/DESCRIBE) on the knowledge graph.

        Updates, LOAD and SERVICE are refused; LIMIT is added or lowered; timeout and row cap apply.
        """
        if not isinstance(query, str):
            raise ToolError(f"query must be a string, not {type(query).__name__}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ToolError(f"limit must be a positive integer (at most {self.max_rows}), not {limit!r}")
        if timeout_s is not None and (isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float)
                                      or not math.isfinite(timeout_s) or timeout_s <= 0):
            raise ToolError(f"timeout_s must be a positive number of seconds (at most {self.default_timeout_s:g}), "
                            f"not {timeout_s!r}")
        cap = self.max_rows if limit is None else min(limit, self.max_rows)
        # a model may ask for less time than the KG allows, never more
        timeout = self.default_timeout_s if timeout_s is None else max(0.1, min(float(timeout_s),
                                                                                self.default_timeout_s))
        started = time.monotonic()
        try:  # the check parses, never evaluates; bounded to well under a second, it counts against the timeout
            guarded = await asyncio.wait_for(asyncio.to_thread(analyse_query, query, cap + 1), timeout)
        except TimeoutError:
            raise ToolError(f"query timed out after {timeout:g}s (while checking it)") from None
        remaining = max(0.1, timeout - (time.monotonic() - started))
        cancel = threading.Event()
        # Stores that can stop a runaway query (embedded Oxigraph: a killable worker) do so here.
        untrusted = getattr(self.store, "query_untrusted", None)
        call = (functools.partial(untrusted, cancel=cancel) if untrusted is not None else self.store.query)
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(call, guarded.text, timeout_s=remaining, max_rows=cap,
                                  max_bytes=self.max_result_bytes),
                remaining + _GRACE_S + getattr(self.store, "probe_s", 0.0),
            )
        except TimeoutError:
            raise ToolError(f"query timed out after {timeout:g}s") from None
        except ToolError as exc:  # the store counts what was left after the check; the caller asked for `timeout`
            if str(exc).startswith("query timed out"):
                raise ToolError(f"query timed out after {timeout:g}s (stopped)") from None
            raise
        finally:
            cancel.set()  # cancelled or timed out: the worker still running the query is stopped

    def _run_sparql_tool(self, tool: Tool) -> Tool:
        """``run_sparql`` as offered to a model: its schema states this KG's timeout and row cap."""
        t, rows = self.default_timeout_s, self.max_rows
        arguments = create_model(
            "run_sparql_arguments", __base__=tool.arguments,
            limit=(Annotated[int | None, Field(ge=1, description=f"row cap, at most {rows} (the KG's cap)",
                                               json_schema_extra={"maximum": rows})], None),
            timeout_s=(Annotated[float | None, Field(gt=0, allow_inf_nan=False, description=(
                f"seconds, at most {t:g} (the KG's per-query timeout; a longer ask is cut to it)"),
                json_schema_extra={"maximum": t})], None),
        )
        return Tool(tool.name, tool.description, tool.fn, arguments, tool.hook, tool.cacheable, tool.cache)

    # ------------------------------------------------------------------ as named tools
    def toolbox(self) -> Toolbox:
        """These tools by name (what a team built without plugins offers its roles); all read the KG
        only, so a question's ToolCache may reuse their results."""
        box = Toolbox.from_callables({name: getattr(type(self), name) for name in TOOL_NAMES}, [self])
        return Toolbox({name: (self._run_sparql_tool(tool) if name == "run_sparql" else tool).cached()
                        for name, tool in box.items()}, reader=self.reader, bank=self.bank,
                       profile=self.profile)


def _values_chunks(iris: list[str]) -> list[str]:
    """The usable IRIs as ``<a> <b> ...`` strings for ``VALUES``, a batch each (unusable ones dropped:
    they never reach SPARQL)."""
    valid = []
    for iri in iris:
        try:
            valid.append(sparql_iri(iri))
        except ToolError:
            continue
    return [" ".join(valid[i : i + _VALUES_BATCH]) for i in range(0, len(valid), _VALUES_BATCH)]


def _names_alike(text: str, hit: LabelHit) -> bool:
    """``hit``'s label or matched alias is ``text`` up to :func:`name_edits` edits (normalised)."""
    want = normalize_label(text)
    edits = name_edits(want)
    return any(Levenshtein.distance(want, normalize_label(name), score_cutoff=edits) <= edits
               for name in (hit.matched, hit.label) if name)


def _literal_datatype(kind: str, datatype: str) -> str | None:
    """The datatype IRI of a stored literal ("@en" marks a language-tagged one); None for IRIs."""
    if kind != "l":
        return None
    return RDF_LANGSTRING if datatype.startswith("@") else datatype or XSD_STRING


DENSE_MARGIN = 0.25  # dense hits this far below the best cosine do not vote
LEXICAL_RATIO = 0.5  # lexical hits below this fraction of the best label score do not vote


def fuse_relation_hits(lexical: list[LabelHit], dense: list[LabelHit], k: int) -> list[LabelHit]:
    """Lexical and dense relation hits in one list by reciprocal-rank fusion.

    Only confident hits vote: the label index is typo tolerant, so on a paraphrase it returns
    relations sharing a stop word ("of") or a near-spelling ("comment" for "comes"), and a KG with
    few relations puts every relation in the dense list. Ties go to the higher cosine, exact label
    matches stay first (a relation named as written beats any paraphrase); the score is the fused one
    (0 for the hits that only fill the list up to ``k``).
    """
    cosine = {h.iri: h.score for h in dense}
    best_dense = max(cosine.values(), default=0.0)
    best_lex = max((h.score for h in lexical), default=0.0)
    lex_votes = [h.iri for h in lexical if h.exact or h.score >= LEXICAL_RATIO * best_lex]
    dense_votes = [h.iri for h in dense if h.score >= best_dense - DENSE_MARGIN]
    by_iri: dict[str, LabelHit] = {}
    for hit in [*lexical, *dense]:
        by_iri.setdefault(hit.iri, hit)
    fused = reciprocal_rank_fusion([lex_votes, dense_votes])
    fused.sort(key=lambda kv: (-round(kv[1], 9), -cosine.get(kv[0], -1.0)))
    hits = [by_iri[iri].model_copy(update={"score": round(score, 6)}) for iri, score in fused]
    voted = {h.iri for h in hits}
    rest = sorted((h for iri, h in by_iri.items() if iri not in voted), key=lambda h: -cosine.get(h.iri, -1.0))
    hits += [h.model_copy(update={"score": 0.0}) for h in rest]  # to fill k: after every voted hit
    hits.sort(key=lambda h: not h.exact)
    return hits[:k]


def is_kg_tool(name: str, fn: Any) -> bool:
    """Whether ``fn`` registered as ``name`` is one of these (read-only) KG tools, not a plugin's."""
    return name in TOOL_NAMES and getattr(KGTools, name, None) is fn


TOOL_NAMES = ("search_entities", "search_relations", "entity_schema", "neighbors", "run_sparql", "labels_for",
              "relation_names", "similar_triples")

"""Question shapes beyond one chain, read model-free into a :class:`QueryGraph`.

The semantic layer ranks relation paths from the question's topic entities; the shape reader
(``shape.read_shape``) says what the question does with them. Here the two meet:

- **count**: the best path's end set, counted (the counted set is the evidence);
- **literal / answer kind**: the best path whose end values are of the kind asked for
  ("how high" wants a number, "when" a date); a better-scored path of the wrong kind loses;
- **superlative**: the best path's end set (or a KG class) ordered by the literal relation of
  its members that the ordering words name, ties kept;
- **comparative**: the best path's end set filtered by a literal relation against the number;
- **intersection**: two topic entities whose best paths meet at the answer;
- **ask**: a path from one named entity that reaches the other (yes), or a value comparison.

Every reading carries a confidence built from the layer's path confidences; a reading the
KG cannot support is ``None``, and the caller says "I don't know". No dataset's words: the
ordering relation is found by the question's own words against the KG's relation labels, and
the only English here is the closed class of gradable adjectives and their dimension nouns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kgteam.protocols.evidence import RelationMatch
from kgteam.protocols.payloads import RankedPath, RelationPaths, path_confidence
from kgteam.protocols.query_graph import (
    RDF_TYPE,
    XSD,
    Aggregate,
    AnswerKind,
    AnswerKindName,
    Compare,
    Func,
    Group,
    Iri,
    Lit,
    OrderKey,
    QueryGraph,
    Triple,
    Var,
)
from kgteam.roles.semantic.scoring import lexical_similarity
from kgteam.roles.semantic.shape import ShapeReading
from kgteam.tools.query_builder import compile_query, group
from kgteam.tools.types import ToolError

if TYPE_CHECKING:
    from kgteam.roles.semantic.layer import Similarity
    from kgteam.tools.toolbox import Toolbox

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
_NUMERIC_TYPES = ("integer", "decimal", "double", "float", "int", "long", "short", "byte", "nonNegativeInteger",
                  "positiveInteger", "unsignedInt")
_DATE_TYPES = ("date", "dateTime", "gYear", "gYearMonth")
_NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)?$")
_YEAR = re.compile(r"^(1\d{3}|20\d{2})$")
_DATE = re.compile(r"^-?\d{4}-\d{2}(-\d{2})?")

# Closed-class English: gradable adjectives and the dimension each one measures. Ordering words
# are matched against the KG's relation labels through both the adjective and its noun.
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "high": ("height", "elevation", "altitude"), "tall": ("height",), "low": ("height", "elevation"),
    "long": ("length",), "short": ("length",), "large": ("size", "area"), "big": ("size", "area"),
    "small": ("size", "area"), "old": ("age",), "young": ("age",), "deep": ("depth",),
    "shallow": ("depth",), "wide": ("width",), "narrow": ("width",), "heavy": ("weight", "mass"),
    "light": ("weight", "mass"), "far": ("distance",), "near": ("distance",), "early": ("date", "year"),
    "late": ("date", "year"), "recent": ("date", "year"), "new": ("date", "year"), "populous": ("population",),
    "expensive": ("cost", "price"), "cheap": ("cost", "price"), "fast": ("speed",), "slow": ("speed",),
    "rich": ("wealth",), "hot": ("temperature",), "cold": ("temperature",),
}
# adjectives whose order runs against a date: the oldest thing has the earliest date
_AGAINST_DATE = frozenset({"old", "early"})


@dataclass
class ShapedReading:
    """A query graph for the question with the layer's confidence in it and its words."""

    graph: QueryGraph
    confidence: float
    explanation: str
    matches: list[RelationMatch] = field(default_factory=list)
    key: str = ""
    evidence_graph: QueryGraph | None = None  # SELECT of the set an aggregate counted or ordered
    guess_only: bool = False  # no reading fits the kind asked for: the best one is a guess

    @property
    def sparql(self) -> str:
        return compile_query(self.graph)


# ---------------------------------------------------------------------------- values and kinds
def value_kind(term: dict[str, Any], label: str | None = None) -> AnswerKindName:
    """The kind of one result value; an IRI named by a number (a year node) reads as that number."""
    value = str(term.get("value", ""))
    if term.get("type") == "literal":
        dt = (term.get("datatype") or "").rsplit("#", 1)[-1]
        if dt == "boolean":
            return "boolean"
        if dt in _DATE_TYPES or (dt in ("", "string") and _DATE.match(value)):
            return "date"
        if dt in _NUMERIC_TYPES or (dt in ("", "string", "langString") and _NUMBER.match(value.strip())):
            return "number"
        return "string"
    if label is not None and _NUMBER.match(label.strip()):
        return "number"
    return "entity"


def fits(expected: AnswerKindName, got: AnswerKindName, value: str = "") -> bool:
    """Whether a value of kind ``got`` answers a question asking for ``expected``; a year answers "when"."""
    if expected == got:
        return True
    if expected == "date" and got == "number":
        return bool(_YEAR.match(value.strip()))
    if expected == "number" and got == "date":
        return False
    return expected == "string" and got == "entity"


def _term_of(t: dict[str, Any]) -> Iri | Lit:
    if t.get("type") == "uri":
        return Iri(iri=t["value"])
    return Lit(value=str(t.get("value", "")), datatype=t.get("datatype"), lang=t.get("xml:lang") or t.get("lang"))


# ---------------------------------------------------------------------------- graphs from paths
def chain_group(path: RankedPath, *, prefix: str = "x", end: str | None = None) -> tuple[list[Triple], Var]:
    """The path as triples from its entity, in the directions the KG stores them; ``end`` renames
    the last variable (so two chains can meet at one answer)."""
    triples: list[Triple] = []
    prev: Iri | Var = Iri(iri=path.entity)
    n = len(path.steps)
    last = Var(name=end or f"{prefix}{n}")
    for i, step in enumerate(path.steps, start=1):
        node = last if i == n else Var(name=f"{prefix}{i}")
        pred = Iri(iri=step.predicate)
        triples.append(Triple(subject=prev, predicate=pred, object=node) if step.direction == "out"
                       else Triple(subject=node, predicate=pred, object=prev))
        prev = node
    return triples, last


def _not_topic(end: Var, topics: Sequence[str]) -> list[Compare]:
    return [Compare(left=end, op="!=", right=Iri(iri=t)) for t in topics]


def select_graph(triples: list[Triple], end: Var, *, topics: Sequence[str], kind: AnswerKind | None,
                 filters: Sequence[Compare] = ()) -> QueryGraph:
    return QueryGraph(answer=[end], where=Group(triples=list(triples), filters=[*filters, *_not_topic(end, topics)]),
                      expected=kind, topics=list(topics))


# ---------------------------------------------------------------------------- the reader
class ShapedReader:
    """Turns a shape reading and the layer's ranked paths into the best query graph for the question."""

    def __init__(self, tools: Toolbox, similarity: Similarity | None = None, *, max_executed: int = 12,
                 value_sample: int = 200) -> None:
        self.tools = tools
        self.similarity = similarity
        self.max_executed = max_executed
        self.value_sample = value_sample
        self._labels: dict[str, str] = {}

    async def read(self, question: str, shape: ShapeReading, paths: RelationPaths,
                   mentions: Sequence[Any] = ()) -> ShapedReading | None:
        """The reading for a non-chain shape (or a chain whose kind the best path misses), or None
        when the plain chain reading stands."""
        kind = AnswerKind(kind=shape.answer_kind)
        topics = sorted({p.entity for p in paths.paths})
        if shape.form == "ask":
            return await self._ask(shape, paths, mentions)
        if shape.shape == "count":
            return await self._count(paths, topics)
        if shape.shape == "superlative" and shape.order:
            return await self._superlative(question, shape, paths, kind)
        if shape.shape == "comparative" and shape.comparison and shape.number:
            return await self._comparative(question, shape, paths, kind)
        joined = await self._intersection(paths, mentions, kind)
        if joined is not None:
            return joined
        return await self._kind_checked(paths, kind)

    # ------------------------------------------------------------------ helpers
    async def _run(self, graph: QueryGraph, limit: int = 1000) -> list[dict[str, Any]]:
        res = await self.tools["run_sparql"](compile_query(graph), limit=limit)
        return [{k: v.model_dump(exclude_none=True) for k, v in row.items()} for row in res.rows]

    async def _names(self, iris: Sequence[str]) -> dict[str, str]:
        missing = sorted({i for i in iris if i not in self._labels})
        if missing:
            try:
                self._labels.update(await self.tools["labels_for"](missing))
            except (ToolError, KeyError):
                pass
        return {i: self._labels.get(i, i) for i in iris}

    async def _answers(self, path: RankedPath) -> list[dict[str, Any]]:
        if path.answers:
            return path.answers
        triples, end = chain_group(path)
        try:
            rows = await self._run(select_graph(triples, end, topics=[], kind=None))
        except ToolError:
            return []
        path.answers = [r[end.name] for r in rows if end.name in r]
        return path.answers

    async def _kinds(self, values: list[dict[str, Any]]) -> list[AnswerKindName]:
        iris = [v["value"] for v in values if v.get("type") == "uri"]
        names = await self._names(iris[:50]) if iris else {}
        return [value_kind(v, names.get(v["value"])) for v in values]

    async def _fitting(self, paths: RelationPaths, kind: AnswerKind) -> list[RankedPath]:
        """Ranked paths whose end values are of the kind asked for (executed on demand, bounded)."""
        out: list[RankedPath] = []
        for executed, path in enumerate(paths.paths):
            if executed >= self.max_executed:
                break
            values = await self._answers(path)
            if not values:
                continue
            kinds = await self._kinds(values[:20])
            ok = sum(1 for v, k in zip(values[:20], kinds, strict=False) if fits(kind.kind, k, str(v.get("value"))))
            if ok >= max(1, math.ceil(0.5 * len(kinds))):
                out.append(path)
        return out

    # ------------------------------------------------------------------ shapes
    async def _kind_checked(self, paths: RelationPaths, kind: AnswerKind) -> ShapedReading | None:
        """The chain reading when the best path's values fit the kind; else the best fitting path,
        with a confidence among fitting rivals only; with none fitting, the best path as a guess."""
        if not paths.paths:
            return None
        fitting = await self._fitting(paths, kind)
        best = paths.paths[0]
        if fitting and fitting[0].key == best.key:
            return None  # the plain chain reading stands
        chosen = fitting[0] if fitting else best
        triples, end = chain_group(chosen)
        graph = select_graph(triples, end, topics=[chosen.entity], kind=kind)
        if not fitting:
            return ShapedReading(graph, 0.0, f"no reading gives a {kind.kind}; best guess: {chosen.explain()}",
                                 list(chosen.steps), chosen.key, guess_only=True)
        conf = path_confidence(chosen, fitting)
        return ShapedReading(graph, conf, f"the best reading that gives a {kind.kind}: {chosen.explain()}",
                             list(chosen.steps), chosen.key)

    async def _count(self, paths: RelationPaths, topics: Sequence[str]) -> ShapedReading | None:
        """How many: the best entity-valued path's end set, counted; a numeric literal answers as itself."""
        fitting_number = await self._fitting(paths, AnswerKind(kind="number"))
        best = paths.paths[0] if paths.paths else None
        if best is None:
            return None
        if fitting_number and fitting_number[0].key == best.key and _literal_valued(best):
            # "how many people live in X": the KG holds the number itself
            triples, end = chain_group(best)
            graph = select_graph(triples, end, topics=[best.entity], kind=AnswerKind(kind="number"))
            return ShapedReading(graph, paths.confidence, f"the number itself: {best.explain()}",
                                 list(best.steps), best.key)
        entity_paths = [p for p in paths.paths if not _literal_valued(p)]
        if not entity_paths:
            return None
        chosen = entity_paths[0]
        triples, end = chain_group(chosen)
        base = select_graph(triples, end, topics=[chosen.entity], kind=AnswerKind(kind="entity"))
        graph = base.model_copy(update={"answer": [], "aggregate": Aggregate(function="count", var=end),
                                        "expected": AnswerKind(kind="number")})
        conf = path_confidence(chosen, [p for p in paths.paths if p.answers])
        return ShapedReading(graph, conf, f"count of: {chosen.explain()}", list(chosen.steps), chosen.key,
                             evidence_graph=base)

    async def _ordering_relations(self, base: Group, end: Var) -> list[tuple[str, str, str]]:
        """(predicate, label, value style) of literal-like relations of the set's members; value style
        is "number", "date" or "named" (an IRI named by a number, such as a year node)."""
        q = (f"SELECT ?p (SAMPLE(?v) AS ?sample) (COUNT(DISTINCT ?{end.name}) AS ?n) WHERE {{ "
             f"{{ SELECT DISTINCT ?{end.name} WHERE {{ {group(base)} }} LIMIT {self.value_sample} }} "
             f"?{end.name} ?p ?v . }} GROUP BY ?p LIMIT 200")
        try:
            res = await self.tools["run_sparql"](q, limit=200)
        except ToolError:
            return []
        out: list[tuple[str, str, str]] = []
        samples: dict[str, dict[str, Any]] = {}
        for row in res.rows:
            p, s = row.get("p"), row.get("sample")
            if p is None or s is None or p.value in (RDF_TYPE, RDFS_LABEL):
                continue
            samples[p.value] = s.model_dump(exclude_none=True)
        iris = [s["value"] for s in samples.values() if s.get("type") == "uri"]
        names = await self._names(iris) if iris else {}
        plabels = await self._names(list(samples))
        for p, s in samples.items():
            k = value_kind(s, names.get(s["value"]) if s.get("type") == "uri" else None)
            if k not in ("number", "date"):
                continue
            style = "named" if s.get("type") == "uri" else k
            if style != "named" and k == "number" and _YEAR.match(str(s.get("value"))) and \
                    (s.get("datatype") or "").endswith("gYear"):
                style = "date"
            out.append((p, plabels.get(p) or p, style))
        return out

    async def _pick_relation(self, words: Sequence[str], relations: list[tuple[str, str, str]]
                             ) -> tuple[tuple[str, str, str] | None, float]:
        """The relation the ordering words name best, and how sure (softmax margin); one candidate is sure."""
        if not relations:
            return None, 0.0
        if len(relations) == 1:
            return relations[0], 0.9
        labels = [_readable(r[1]) for r in relations]
        units = [w for w in words if w]
        if not units:
            return relations[0], 0.3
        sims = [[lexical_similarity(u, lab) for lab in labels] for u in units]
        if self.similarity is not None:
            dense = await self.similarity(units, labels)
            sims = [[max(a, b) for a, b in zip(lr, dr, strict=True)] for lr, dr in zip(sims, dense, strict=True)]
        best_per = [max(sims[i][j] for i in range(len(units))) for j in range(len(labels))]
        order = sorted(range(len(labels)), key=lambda j: -best_per[j])
        top = order[0]
        z = sum(math.exp((best_per[j] - best_per[top]) / 0.1) for j in order)
        return relations[top], round(1.0 / z if best_per[top] > 0.2 else 0.0, 4)

    async def _superlative(self, question: str, shape: ShapeReading, paths: RelationPaths,
                           kind: AnswerKind) -> ShapedReading | None:
        base_path = next((p for p in paths.paths if not _literal_valued(p)), None)
        if base_path is None:
            return None
        triples, end = chain_group(base_path)
        base = Group(triples=triples, filters=_not_topic(end, [base_path.entity]))
        relations = await self._ordering_relations(base, end)
        words = _ordering_words(shape)
        rel, rel_conf = await self._pick_relation(words, relations)
        if rel is None:
            return None
        pred, label, style = rel
        value = Var(name="v")
        extra, key = _value_expr(end, pred, style, value)
        descending = shape.order == "max"
        if style in ("date", "named") and _against_date(shape) and _date_like(style, label):
            descending = not descending
        where = Group(triples=[*triples, *extra], filters=base.filters)
        graph = QueryGraph(answer=[end, value], where=where, order=[OrderKey(expr=key, descending=descending)],
                           limit=1, ties=True, expected=kind, topics=[base_path.entity])
        evidence = QueryGraph(answer=[end, value], where=where, order=[OrderKey(expr=key, descending=descending)],
                              limit=50, expected=kind)
        base_conf = path_confidence(base_path, [p for p in paths.paths if p.answers] or [base_path])
        match = RelationMatch(predicate=pred, label=label, words=" ".join(words) or None, strength=rel_conf)
        return ShapedReading(graph, round(base_conf * rel_conf, 4),
                             f"{'highest' if descending else 'lowest'} {label} among: {base_path.explain()}",
                             [*base_path.steps, match], base_path.key + f"|order|{pred}", evidence_graph=evidence)

    async def _comparative(self, question: str, shape: ShapeReading, paths: RelationPaths,
                           kind: AnswerKind) -> ShapedReading | None:
        base_path = next((p for p in paths.paths if not _literal_valued(p)), None)
        number = (shape.number or "").replace(",", "")
        if base_path is None or not _NUMBER.match(number):
            return None
        triples, end = chain_group(base_path)
        base = Group(triples=triples, filters=_not_topic(end, [base_path.entity]))
        relations = await self._ordering_relations(base, end)
        words = _ordering_words(shape)
        rel, rel_conf = await self._pick_relation(words, relations)
        if rel is None:
            return None
        pred, label, style = rel
        value = Var(name="v")
        extra, key = _value_expr(end, pred, style, value)
        op = shape.comparison or ">"
        where = Group(triples=[*triples, *extra],
                      filters=[*base.filters, Compare(left=key, op=op, right=Lit(value=number, datatype=XSD + "decimal"))])
        graph = QueryGraph(answer=[end], where=where, expected=kind, topics=[base_path.entity])
        base_conf = path_confidence(base_path, [p for p in paths.paths if p.answers] or [base_path])
        match = RelationMatch(predicate=pred, label=label, words=" ".join(words) or None, strength=rel_conf)
        return ShapedReading(graph, round(base_conf * rel_conf, 4), f"{label} {op} {number} among: "
                             f"{base_path.explain()}", [*base_path.steps, match], base_path.key + f"|{op}{number}",
                             evidence_graph=QueryGraph(answer=[end, value], where=where))

    async def _intersection(self, paths: RelationPaths, mentions: Sequence[Any],
                            kind: AnswerKind) -> ShapedReading | None:
        """Two topic entities whose best paths meet: their answers intersected (never one alone)."""
        by_mention: dict[str, list[RankedPath]] = {}
        for p in paths.paths:
            by_mention.setdefault(p.mention, []).append(p)
        if len(by_mention) < 2:
            return None
        (m1, p1s), (m2, p2s) = list(by_mention.items())[:2]
        best: tuple[float, RankedPath, RankedPath, set[str]] | None = None
        for a in p1s[:4]:
            for b in p2s[:4]:
                if a.entity == b.entity:
                    continue
                va = {v.get("value") for v in await self._answers(a)}
                vb = {v.get("value") for v in await self._answers(b)}
                both = (va & vb) - {a.entity, b.entity}
                if both and (best is None or a.score + b.score > best[0]):
                    best = (a.score + b.score, a, b, both)
        if best is None:
            return None
        _, a, b, _both = best
        ta, end = chain_group(a, prefix="a", end="x")
        tb, _ = chain_group(b, prefix="b", end="x")
        graph = select_graph([*ta, *tb], end, topics=[a.entity, b.entity], kind=kind)
        conf = min(path_confidence(a, p1s), path_confidence(b, p2s))
        return ShapedReading(graph, round(conf, 4), f"{m1}: {a.explain()} AND {m2}: {b.explain()}",
                             [*a.steps, *b.steps], a.key + "&" + b.key)

    async def _ask(self, shape: ShapeReading, paths: RelationPaths, mentions: Sequence[Any]) -> ShapedReading:
        """Yes/no: the best-ranked path from one named entity that either reaches the other named
        entity, or ends in a relation the other entity holds too (then the KG says no). With
        neither, "I don't know". "not" wraps the check in NOT EXISTS."""
        targets = {iri for m in mentions for iri in _mention_iris(m)}
        for path in paths.paths[: self.max_executed]:
            others = sorted(targets - {path.entity})
            if not others:
                continue
            values = {v.get("value") for v in await self._answers(path)}
            reached = [t for t in others if t in values]
            target = reached[0] if reached else None
            if target is None:
                target = await self._holds(path, others)
            if target is None:
                continue
            triples, end = chain_group(path)
            inner = Group(triples=triples, values={end.name: [Iri(iri=target)]})
            where = Group(not_exists=[inner]) if shape.negated else inner
            graph = QueryGraph(form="ask", where=where, expected=AnswerKind(kind="boolean"),
                               topics=[path.entity, target])
            conf = path_confidence(path, [p for p in paths.paths if p.answers] or [path])
            if not reached:
                conf *= 0.9  # "no" rests on the KG being complete for this relation
            return ShapedReading(graph, round(conf, 4), f"{path.explain()} {'reaches' if reached else 'misses'} "
                                 "the other entity", list(path.steps), path.key + "|ask")
        return ShapedReading(QueryGraph(form="ask", expected=AnswerKind(kind="boolean")), 0.0,
                             "no relation of the question joins its entities", guess_only=True)

    async def _holds(self, path: RankedPath, others: Sequence[str]) -> str | None:
        """The first other entity that stands at the end of the path's last relation for someone."""
        step = path.steps[-1]
        for other in others:
            o = Iri(iri=other)
            s = Var(name="s")
            t = Triple(subject=s, predicate=Iri(iri=step.predicate), object=o) if step.direction == "out" \
                else Triple(subject=o, predicate=Iri(iri=step.predicate), object=s)
            try:
                res = await self.tools["run_sparql"](compile_query(QueryGraph(form="ask", where=Group(triples=[t]))))
            except ToolError:
                continue
            if res.boolean:
                return other
        return None


# ---------------------------------------------------------------------------- small pieces
def _literal_valued(path: RankedPath) -> bool:
    return bool(path.answers) and all(a.get("type") == "literal" for a in path.answers[:20])


def _mention_iris(m: Any) -> list[str]:
    if hasattr(m, "exact_iris"):
        return list(m.exact_iris())
    return list(getattr(m, "iris", []) or [])


def _readable(label: str) -> str:
    text = label.rsplit("/", 1)[-1].rsplit("#", 1)[-1] if label.startswith("http") else label
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text).replace("_", " ")
    return text.lower()


def _stem(word: str) -> str:
    w = word.lower()
    for suffix, repl in (("iest", "y"), ("ier", "y"), ("est", ""), ("er", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            base = w[: -len(suffix)] + repl
            if len(base) > 3 and base[-1] == base[-2]:  # biggest -> big
                base = base[:-1]
            return base
    return w


def _ordering_words(shape: ShapeReading) -> list[str]:
    """The ordering words, their adjective stem and the dimension nouns the stem names."""
    words = (shape.order_words or "").split()
    out: list[str] = []
    for w in words:
        stem = _stem(w)
        out += [w, stem, *DIMENSIONS.get(stem, ())]
    return list(dict.fromkeys(out))


def _against_date(shape: ShapeReading) -> bool:
    return any(_stem(w) in _AGAINST_DATE for w in (shape.order_words or "").split())


def _date_like(style: str, label: str) -> bool:
    return style == "date" or any(w in _readable(label) for w in ("date", "year", "born", "founded"))


def _value_expr(end: Var, pred: str, style: str, value: Var) -> tuple[list[Triple], Func | Var]:
    """Triples that reach the member's value and the expression to order or compare by: a number
    cast, the year of a date, or the number a year node is named by."""
    triples = [Triple(subject=end, predicate=Iri(iri=pred), object=value)]
    if style == "named":
        name = Var(name="vname")
        triples.append(Triple(subject=value, predicate=Iri(iri=RDFS_LABEL), object=name))
        return triples, Func(name=XSD + "decimal", args=[Func(name="str", args=[name])])
    if style == "date":
        return triples, Func(name=XSD + "integer", args=[Func(name="substr", args=[
            Func(name="str", args=[value]), Lit(value="1", datatype=XSD + "integer"),
            Lit(value="4", datatype=XSD + "integer")])])
    return triples, Func(name=XSD + "decimal", args=[Func(name="str", args=[value])])



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

import contextlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kgteam.protocols.evidence import RelationMatch
from kgteam.protocols.payloads import (
    CONFIDENCE_SUPPORT,
    CONFIDENCE_TEMPERATURE,
    KGMapped,
    RankedPath,
    RelationPaths,
    path_belief,
    path_confidence,
    platt,
)
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
from kgteam.roles.semantic.classes import (
    ClassSet,
    Link,
    class_links,
    class_spans,
    link_confidence,
    membership,
    name_links,
    narrowed,
)
from kgteam.roles.semantic.coverage import unread_words
from kgteam.roles.semantic.paths import NAMING_PREDICATES, chain_graph, skipped_predicates
from kgteam.roles.semantic.reader import reader_of
from kgteam.roles.semantic.scoring import lexical_similarity
from kgteam.roles.semantic.shape import (
    AUXILIARIES,
    IMPERATIVES,
    ShapeReading,
    comparative_base,
    read_shape,
    superlative_base,
)
from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, normalise, singular, tokenize
from kgteam.tools.iri import RDFS_LABEL, readable_name
from kgteam.tools.query_builder import compile_query, group
from kgteam.tools.types import ToolError

if TYPE_CHECKING:
    from kgteam.roles.semantic.layer import Similarity
    from kgteam.tools.toolbox import Toolbox

_NUMERIC_TYPES = ("integer", "decimal", "double", "float", "int", "long", "short", "byte", "nonNegativeInteger",
                  "positiveInteger", "unsignedInt")
_DATE_TYPES = ("date", "dateTime", "gYear", "gYearMonth")
_NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)?$")
_YEAR = re.compile(r"^(1\d{3}|20\d{2})$")
_DATE = re.compile(r"^-?\d{4}-\d{2}(-\d{2})?")

# Closed-class English: gradable adjectives and the dimension each one measures. Ordering words
# are matched against the KG's relation labels through both the adjective and its noun.
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "high": ("height", "elevation", "altitude"), "tall": ("height",), "low": ("height", "elevation", "altitude"),
    "long": ("length", "duration"), "short": ("length", "duration"),
    "large": ("size", "area", "population"), "big": ("size", "area", "population"),
    "small": ("size", "area", "population"), "little": ("size", "area", "population"),
    "old": ("age", "birth", "date", "year"), "young": ("age", "birth", "date", "year"), "deep": ("depth",),
    "shallow": ("depth",), "wide": ("width",), "narrow": ("width",), "heavy": ("weight", "mass"),
    "light": ("weight", "mass"), "far": ("distance",), "near": ("distance",), "early": ("date", "year"),
    "late": ("date", "year"), "recent": ("date", "year"), "first": ("date", "year"), "last": ("date", "year"), "new": ("date", "year"), "populous": ("population",),
    "populated": ("population",), "dense": ("density",), "sparse": ("density",),
    "expensive": ("cost", "price"), "cheap": ("cost", "price"), "fast": ("speed",), "slow": ("speed",),
    "rich": ("wealth",), "hot": ("temperature",), "cold": ("temperature",),
    "size": ("size", "area", "population"),
}
# Nouns for people that a KG stores as one number ("how many *people* live in X", "the most *inhabitants*").
PEOPLE_NOUNS = frozenset({"people", "inhabitants", "residents", "citizens", "persons", "population"})
_QUANTITY_WORDS = frozenset({"most", "least", "fewest", "more", "less", "fewer"})
ONE_NAMED = 0.35  # how well the ordering words must name a set's only attribute for it to be sure
# nouns that name a dimension by themselves ("the *size* of X")
_DIMENSION_NOUNS = frozenset({"size"})
# each later dimension noun counts this much less: "the biggest state" is its area before its population,
# and the gap is small enough that the reading says it chose between two
_DIMENSION_STEP = 0.04
# words that may stand before the class a question opens with ("what are *all the* states")
_LEAD_FILLER = frozenset({"the", "a", "an", "all", "me", "us", "of", "every", "each", "please", "there"})
# adjectives whose order runs against a date: the oldest thing has the earliest date
_FLIPPED: dict[str, Any] = {">": "<", "<": ">", ">=": "<=", "<=": ">=", "=": "=", "!=": "!="}
_AGAINST_DATE = frozenset({"old", "young"})  # more age is an earlier date; "earliest" is not


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
    kg_map: KGMapped | None = None  # ``confidence`` is one path's, through the KG's own map, unchanged
    join: bool = False  # the join of the question's two named entities (what a KG's join map calibrates)
    inferred: bool = False  # a relation chosen by an adjective's dimensions (or a guessed link), not named

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
    """The path's triples from its entity, in the directions the KG stores them (the layer's
    ``chain_graph``, without its filters); ``end`` renames the last variable (so two chains can meet
    at one answer)."""
    n = len(path.steps)
    names = [f"{prefix}{i}" for i in range(1, n)] + [end or f"{prefix}{n}"]
    graph = chain_graph(path.entity, [(s.predicate, s.direction) for s in path.steps], names=names)
    return list(graph.where.triples), Var(name=names[-1])


def _not_topic(end: Var, topics: Sequence[str]) -> list[Compare]:
    return [Compare(left=end, op="!=", right=Iri(iri=t)) for t in topics]


def select_graph(triples: list[Triple], end: Var, *, topics: Sequence[str], kind: AnswerKind | None,
                 filters: Sequence[Compare] = ()) -> QueryGraph:
    return QueryGraph(answer=[end], where=Group(triples=list(triples), filters=[*filters, *_not_topic(end, topics)]),
                      expected=kind, topics=list(topics))


@dataclass
class _BaseSet:
    """A set of entities a count, superlative or comparison works on: its SELECT and how sure."""

    graph: QueryGraph
    end: Var
    confidence: float
    explanation: str
    steps: list[Any]
    key: str


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
        self._value_names: dict[str, str] = {}  # relation -> the predicate naming its values (year nodes)
        self._is_class: dict[str, bool] = {}
        self._question = ""  # the question being read (its free words may name a link)

    async def read(self, question: str, paths: RelationPaths, mentions: Sequence[Any] = (),
                   shape: ShapeReading | None = None) -> ShapedReading | None:
        """The reading for a non-chain shape (or a chain whose kind the best path misses), or None
        when the plain chain reading stands. Named classes ("which *town*") constrain the answer;
        a class spotted as a mention is a kind, not a topic."""
        self._question = question
        classes = await self._class_iris({iri for m in mentions for iri in _mention_iris(m)})
        if classes:
            kept = [p for p in paths.paths if p.entity not in classes]
            paths = paths.model_copy(update={"paths": kept})
            mentions = [m for m in mentions if not set(_mention_iris(m)) & classes]
            shape = None  # a class word is the answer's kind, not a name to mask
        if shape is None:
            shape = read_shape(mask_mentions(question, mentions), literal_relations(paths))
        kind = AnswerKind(kind=shape.answer_kind)
        klass = await self._class_named(shape.kind_words) if shape.kind_words else None
        if klass is None and shape.form == "select" and kind.kind == "entity":
            klass, words = await self._leading_class(question, mentions)
            if klass is not None:
                shape = replace(shape, kind_words=words)
        if klass is not None and kind.kind == "entity":
            kind = AnswerKind(kind="entity", class_iri=klass, class_label=shape.kind_words)
        if klass is not None and shape.form == "select":
            anchored = await self._class_anchored(question, shape, paths, mentions, kind, klass)
            if anchored is not None:
                return anchored
        if not paths.paths:
            return None
        if shape.form == "ask":
            return await self._ask(shape, paths, mentions)
        if shape.shape == "count":
            counted = AnswerKind(kind="entity", class_iri=klass, class_label=shape.kind_words if klass else None)
            return await self._count(paths, counted, klass, self._joinable(shape, paths, mentions))
        if shape.shape == "superlative" and shape.order:
            return await self._ordered(shape, paths, kind, klass, self._joinable(shape, paths, mentions))
        if shape.shape == "comparative" and shape.comparison and shape.number:
            return await self._ordered(shape, paths, kind, klass, self._joinable(shape, paths, mentions))
        if shape.negated and len(_by_mention(paths)) >= 2:
            return await self._negation(paths, mentions, kind)
        if shape.negated:  # "which films did X write but not direct": a chain would drop the "not"
            chosen = paths.paths[0]
            triples, end = chain_group(chosen)
            return ShapedReading(select_graph(triples, end, topics=[chosen.entity], kind=kind), 0.0,
                                 f"the question says what to leave out, and I found nothing of it to leave out; "
                                 f"best guess without it: {chosen.explain()}", list(chosen.steps), chosen.key,
                                 guess_only=True)
        if (shape.shape == "union" or shape.conjunction == "or") and len(_by_mention(paths)) >= 2:
            either = await self._union(paths, kind)
            if either is not None:
                return either
        if _two_topics(shape, mentions):
            joined = await self._intersection(paths, mentions, kind)
            if joined is not None:
                return self._join_mapped(joined)
        if kind.kind in ("number", "date") or (kind.kind == "entity" and klass is None
                                               and _DIMENSION_NOUNS & {t.lower for t in tokenize(question)}):
            measured = await self._measured(question, paths, kind if kind.kind != "entity" else AnswerKind(kind="number"))
            if measured is not None:
                return measured
        return await self._kind_checked(paths, kind, explicit=_explicit_kind(question, shape, klass))

    # ------------------------------------------------------------------ classes
    async def class_word_spans(self, question: str, shape: ShapeReading | None = None) -> list[tuple[int, int]]:
        """Token spans of words that name no relation: the kind words ("which *rivers*") when the
        KG has a class of that name (they name the answer's class), and the number a comparison
        is against ("older than *30*": a value, however many relations a number may spell)."""
        shape = shape or read_shape(question)
        tokens = [t.lower for t in tokenize(question)]
        spans: list[tuple[int, int]] = []
        if shape.comparison and shape.number:
            spans += [(i, i + 1) for i, t in enumerate(tokens) if t == normalise(shape.number)]
            # the noun a comparison is about ("wear a *number* above 20") names what orders, not the set
            spans += [(i, i + 1) for i, t in enumerate(tokens) if shape.compared_noun and t == shape.compared_noun]
        if not shape.kind_words or await self._class_named(shape.kind_words) is None:
            return spans
        words = normalise(shape.kind_words).split()
        for i in range(len(tokens) - len(words) + 1):
            if tokens[i : i + len(words)] == words:
                return [*spans, (i, i + len(words))]
        return spans

    async def _class_anchored(self, question: str, shape: ShapeReading, paths: RelationPaths,
                              mentions: Sequence[Any], kind: AnswerKind, klass: str) -> ShapedReading | None:
        """A count, superlative, comparison or list over the members of the class the question
        names, narrowed by its named entities: when no entity is named, or no path from one ends
        in that class. None: the readings from the named entities stand."""
        if shape.conjunction == "or":
            return None
        if shape.negated:
            return await self._class_negation(question, shape, mentions, kind, klass) if len(mentions) <= 1 else None
        aggregate = shape.shape in ("count", "superlative", "comparative")
        if paths.paths:
            if not aggregate and kind.kind != "entity":
                return None
            members = AnswerKind(kind="entity", class_iri=klass, class_label=shape.kind_words)
            found = await self._base_sets(paths, members) if aggregate else await self._fitting(paths, kind)
            if found and (found[0].support >= 0.5 * CONFIDENCE_SUPPORT or not mentions):
                return None  # the question's words name the relation to the set: the path stands
        if shape.shape == "superlative" and not shape.order:
            return None
        if shape.shape == "comparative" and not (shape.comparison and shape.number):
            return None
        if not aggregate and kind.kind != "entity":
            return None
        cset = await self._class_set(question, shape, mentions, klass)
        if cset is None:
            return None
        spans = [(c.start, c.end) for c in await class_spans(question, self.tools)]
        unread = unread_words(question, mentions=mentions, shape=read_shape(question), matches=cset.matches,
                              class_spans=spans)
        tokens = {t.lower: t.text for t in tokenize(question)}
        if any(tokens.get(w, w)[:1].isupper() for w in unread) or (unread and not aggregate and not mentions):
            return None  # a name the KG does not know, or words no class set reads: not "every X"
        if paths.paths and found and not await self._covers_more(cset, found[0]):
            return None  # the path's set is the class's own: nothing to add
        base = _BaseSet(cset.select(kind), cset.end, cset.confidence, cset.explanation, list(cset.matches), cset.key)
        if shape.shape == "count":
            return await self._count(paths, kind, klass, base_set=base)
        if aggregate:
            return await self._ordered(shape, paths, kind, klass, base_set=base)
        return ShapedReading(cset.select(kind), cset.confidence, cset.explanation, list(cset.matches), cset.key)

    async def _class_negation(self, question: str, shape: ShapeReading, mentions: Sequence[Any],
                              kind: AnswerKind, klass: str) -> ShapedReading | None:
        """"Which rivers do not run through X", "which states border no other state": the class's
        members less those linked to the named entity, or to any member of the other class named,
        through the link the question's words name (else the one most members have)."""
        end = Var(name="x")
        members = await membership(self.tools, end, klass)
        label = (await self._names([klass])).get(klass, klass)
        words = _free_words(question, shape, mentions)
        if mentions:
            found = await self._linked(members, end, mentions[0])
            if found is None:
                return None
            iri, links = found
            links = await name_links(links, words, self.tools, self.similarity)
            link = links[0]
            inner = Group(triples=narrowed(Group(), end, iri, link, prefix="n_").triples)
            what, topics = getattr(mentions[0], "text", iri), [iri]
        else:
            spans = await class_spans(question, self.tools)
            spans = spans[1:] if spans and spans[0].klass == klass else spans  # the second class word
            if not spans:
                return None
            other = Var(name="y")
            others = await membership(self.tools, other, spans[0].klass)
            links = await self._class_to_class(members, end, others, other)
            if not links:
                return None
            links = await name_links(links, [w for w in words if w not in spans[0].words.split()], self.tools,
                                     self.similarity)
            link = links[0]
            (pred, direction), = link.steps
            step = Triple(subject=end, predicate=Iri(iri=pred), object=other) if direction == "out" \
                else Triple(subject=other, predicate=Iri(iri=pred), object=end)
            inner = others.model_copy(update={"triples": [step, *others.triples]})
            what, topics = f"any {spans[0].words}", []
        where = members.model_copy(update={"not_exists": [inner],
                                           "filters": [*members.filters, *_not_topic(end, topics)]})
        graph = QueryGraph(answer=[end], where=where, expected=kind, topics=topics)
        matches = [RelationMatch(predicate=p, direction=d, label=lab, words=link.words, strength=link.strength)
                   for (p, d), lab in zip(link.steps, link.labels, strict=True)]
        return ShapedReading(graph, link_confidence(links), f"every {label} except those {' then '.join(link.labels)} "
                             f"{what}", matches, f"class|{klass}|not|{link.steps}")

    async def _linked(self, members: Group, end: Var, mention: Any) -> tuple[str, list[Link]] | None:
        """Which of the mention's entities the members reach, and how: one a relation links directly
        before one only two hops away ("Tennessee" the state, not the river of that name)."""
        skipped = await skipped_predicates(self.tools)
        found = []
        for iri in _mention_iris(mention)[:3]:
            links = await class_links(self.tools, members, end, iri, skipped)
            if links:
                found.append((iri, links))
        if not found:
            return None
        return min(found, key=lambda f: (min(len(k.steps) for k in f[1]), -max(k.members for k in f[1])))

    async def _covers_more(self, cset: ClassSet, path: RankedPath) -> bool:
        """Whether the class's members linked to the topic are more than the path reaches: "the
        cities of X" are all of X's cities, not the one that is its capital."""
        theirs = {v.get("value") for v in await self._answers(path)}
        try:
            mine = await self._run(cset.select(), limit=5000)
        except ToolError:
            return False
        return len({r[cset.end.name]["value"] for r in mine if cset.end.name in r} - theirs) > 0

    async def _class_set(self, question: str, shape: ShapeReading, mentions: Sequence[Any],
                         klass: str) -> ClassSet | None:
        """The class's members, narrowed by each named entity through the link the question's words
        name (or, named by none, the one that reaches most members). A named entity no member
        reaches leaves the set unsure: the question is about something the set does not cover."""
        end = Var(name="x")
        group_ = await membership(self.tools, end, klass)
        label = (await self._names([klass])).get(klass, klass)
        words = _free_words(question, shape, mentions)
        confidence, matches, topics, said = 1.0, [], [], []
        for n, mention in enumerate(mentions[:2]):
            found = await self._linked(group_, end, mention)
            if found is not None:
                found = (found[0], await name_links(found[1], words, self.tools, self.similarity))
            if found is None:
                confidence *= 0.3
                said.append(f"nothing links it to {getattr(mention, 'text', '')!r}")
                continue
            iri, links = found
            link = links[0]
            group_ = narrowed(group_, end, iri, link, prefix=f"l{n}_")
            confidence *= link_confidence(links)
            topics.append(iri)
            matches += [RelationMatch(predicate=p, direction=d, label=lab, words=link.words, strength=link.strength)
                        for (p, d), lab in zip(link.steps, link.labels, strict=True)]
            said.append(f"{' then '.join(link.labels)} {getattr(mention, 'text', '')}")
        explanation = f"every {label}" + (f" ({'; '.join(said)})" if said else "")
        key = "class|" + klass + "|" + "|".join(f"{p}:{d}" for m in matches for p, d in [(m.predicate, m.direction)])
        return ClassSet(klass, label, group_, end, round(confidence, 4), explanation, matches, topics, key)

    async def _leading_class(self, question: str, mentions: Sequence[Any]) -> tuple[str | None, str | None]:
        """The class the question opens with when no kind word follows its wh-word ("what is *the
        state* with the largest area", "give me *the cities* in X"): a class word with only question
        words, auxiliaries and articles before it."""
        spans = await class_spans(question, self.tools, skip=[(m.start, m.end) for m in mentions
                                                               if hasattr(m, "start")])
        if not spans:
            return None, None
        low = [t.lower for t in tokenize(question)]
        first = spans[0]
        if all(w in WH_WORDS or w in AUXILIARIES or w in IMPERATIVES or w in _LEAD_FILLER for w in low[: first.start]):
            return first.klass, first.words
        return None, None

    async def _all_of_class(self, path: RankedPath, klass: str) -> bool:
        """Whether every value the path reaches (of the first 50) is a member of ``klass``."""
        values = [v for v in await self._answers(path) if v.get("type") == "uri"][:50]
        return bool(values) and await self._members(values, klass) >= len(values)

    async def _of_class(self, where: Group, end: Var, klass: str | None) -> Group:
        """``where`` with ``end`` kept to members of ``klass`` (when the question names one): "the
        largest *city* in X" orders X's cities, not the lakes in X too."""
        if klass is None:
            return where
        member = await membership(self.tools, end, klass)
        if all(t in where.triples for t in member.triples):
            return where
        return where.model_copy(update={"triples": [*where.triples, *member.triples],
                                        "values": {**where.values, **member.values}})

    async def _class_iris(self, iris: set[str]) -> set[str]:
        """Which of ``iris`` are classes of the KG (something is typed with them)."""
        profile = getattr(self.tools, "profile", None)
        if profile is not None:
            with contextlib.suppress(ToolError):
                return await profile.declared_classes(sorted(iris))
        out: set[str] = set()
        for i in sorted(iris):
            if i not in self._is_class:
                t = Triple(subject=Var(name="s"), predicate=Iri(iri=RDF_TYPE), object=Iri(iri=i))
                try:
                    res = await self.tools["run_sparql"](compile_query(QueryGraph(form="ask", where=Group(triples=[t]))))
                    self._is_class[i] = bool(res.boolean)
                except ToolError:
                    self._is_class[i] = False
            if self._is_class[i]:
                out.add(i)
        return out

    async def _class_named(self, words: str) -> str | None:
        """The KG class whose name is the kind words (singular or plural), if the KG has one."""
        profile = getattr(self.tools, "profile", None)
        if profile is not None:
            with contextlib.suppress(ToolError):
                for form in dict.fromkeys([words, words.split()[-1]]):
                    named = await profile.classes_named(form)
                    if named:
                        return named[0]
        forms = list(dict.fromkeys([words, singular(words), words.split()[-1], singular(words.split()[-1])]))
        for form in forms:
            try:
                hits = await self.tools["search_entities"](form, k=5)
            except (ToolError, KeyError):
                return None
            exact = [h.iri for h in hits if normalise(h.matched) == normalise(form) or normalise(h.label) == normalise(form)]
            found = await self._class_iris(set(exact))
            if found:
                return sorted(found)[0]
        return None

    async def _members(self, values: list[dict[str, Any]], klass: str) -> int:
        iris = [v["value"] for v in values[:50] if v.get("type") == "uri"]
        if not iris:
            return 0
        x = Var(name="x")
        member = await membership(self.tools, x, klass)
        g = QueryGraph(answer=[x], where=member.model_copy(update={"values": {**member.values,
                                                                                "x": [Iri(iri=i) for i in iris]}}))
        try:
            return len(await self._run(g))
        except ToolError:
            return 0

    async def _fits_class(self, path: RankedPath, klass: str | None) -> bool:
        if klass is None:
            return True
        values = await self._answers(path)
        return bool(values) and await self._members(values, klass) >= max(1, math.ceil(0.5 * min(50, len(values))))

    # ------------------------------------------------------------------ helpers
    async def _run(self, graph: QueryGraph, limit: int = 1000) -> list[dict[str, Any]]:
        res = await self.tools["run_sparql"](compile_query(graph), limit=limit)
        return [{k: v.model_dump(exclude_none=True) for k, v in row.items()} for row in res.rows]

    async def _naming_predicate(self, iri: str, name: str) -> str:
        """The predicate that gives ``iri`` its name ``name`` in this KG (``rdfs:label``,
        ``schema:name``, the KG's own ...): a year node is ordered by the number it is named by."""
        if "<" in iri or ">" in iri or " " in iri:
            return RDFS_LABEL
        try:
            res = await self.tools["run_sparql"](
                f"SELECT ?np ?name WHERE {{ <{iri}> ?np ?name . FILTER(isLiteral(?name)) }}", limit=50)
        except ToolError:
            return RDFS_LABEL
        found = [r["np"].value for r in res.rows if "np" in r and "name" in r and r["name"].value == name]
        return RDFS_LABEL if not found or RDFS_LABEL in found else found[0]

    async def _names(self, iris: Sequence[str]) -> dict[str, str]:
        missing = sorted({i for i in iris if i not in self._labels})
        if missing:
            with contextlib.suppress(ToolError, KeyError):
                self._labels.update(await self.tools["labels_for"](missing))
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

    async def _kinds(self, values: list[dict[str, Any]]) -> list[tuple[AnswerKindName, str]]:
        """Each value's kind and the text it reads as (an IRI's name, a literal's lexical form)."""
        iris = [v["value"] for v in values if v.get("type") == "uri"]
        names = await self._names(iris[:50]) if iris else {}
        return [(value_kind(v, names.get(v["value"])), names.get(v["value"], str(v.get("value", ""))))
                for v in values]

    async def _value_like(self, path: RankedPath) -> bool:
        """The path ends in values (numbers, dates, text, or nodes named by a number such as a
        year node), not in things: what orders or filters a set, never a set to order."""
        values = await self._answers(path)
        if not values:
            return False
        kinds = await self._kinds(values[:20])
        return sum(1 for k, _ in kinds if k != "entity") > 0.5 * len(kinds)

    async def _fitting(self, paths: RelationPaths, kind: AnswerKind) -> list[RankedPath]:
        """Ranked paths whose end values are of the kind asked for (and of its class, when the
        question names one the KG has), executed on demand, bounded."""
        out: list[RankedPath] = []
        for executed, path in enumerate(paths.paths):
            if executed >= self.max_executed:
                break
            values = await self._answers(path)
            if not values:
                continue
            kinds = await self._kinds(values[:20])
            ok = sum(1 for k, text in kinds if fits(kind.kind, k, text))
            if ok >= max(1, math.ceil(0.5 * len(kinds))) and await self._fits_class(path, kind.class_iri):
                out.append(path)
        return out

    # ------------------------------------------------------------------ shapes
    async def _measured(self, question: str, paths: RelationPaths, kind: AnswerKind) -> ShapedReading | None:
        """"How big is X", "how many people live in X": a measure no relation label names, read as
        the entity's numeric relation the adjective's dimensions name (big: size, area, population;
        people: population), with a confidence that says how close the next dimension came. None
        when the question names the relation itself or says no measure."""
        said, words = measure_weights(question)
        if not words or not paths.paths:
            return None
        fitting = [p for p in await self._fitting(paths, kind) if p.hops == 1 and _literal_valued(p)]
        if not fitting or fitting[0].support >= 0.5 * CONFIDENCE_SUPPORT:
            return None  # a relation the question names stands
        entity = fitting[0].entity
        own = {p.steps[-1].predicate: p for p in fitting if p.entity == entity}
        relations = [(pred, p.steps[-1].label, kind.kind) for pred, p in own.items()]
        rel, conf = await self._pick_relation(words, relations)
        if rel is None or conf <= 0.0:
            return None
        chosen = own[rel[0]]
        triples, end = chain_group(chosen)
        match = chosen.steps[-1].model_copy(update={"words": said, "strength": conf})
        return ShapedReading(select_graph(triples, end, topics=[chosen.entity], kind=kind), conf,
                             f"{chosen.steps[-1].label} of {chosen.mention}, the measure {said!r} names "
                             f"(inferred from the adjective's dimensions, not named by the question)",
                             [match], chosen.key + "|measure", inferred=True)

    async def _kind_checked(self, paths: RelationPaths, kind: AnswerKind, *, explicit: bool) -> ShapedReading | None:
        """The chain reading when the best path's values fit the kind; else the best fitting path,
        with a confidence among fitting rivals only; with none fitting, the best path as a guess.
        A kind only guessed from "what" checks nothing."""
        if not paths.paths or not explicit:
            return None
        fitting = await self._fitting(paths, kind)
        best = paths.paths[0]
        if fitting and fitting[0].key == best.key and kind.class_iri is None:
            return None  # the plain chain reading stands
        # (with a named class, rivals of another class are no rivals: the confidence is among fitting ones)
        chosen = fitting[0] if fitting else best
        triples, end = chain_group(chosen)
        graph = select_graph(triples, end, topics=[chosen.entity], kind=kind)
        if not fitting:
            return ShapedReading(graph, 0.0, f"no reading gives {_kind_words(kind)}; best guess: {chosen.explain()}",
                                 list(chosen.steps), chosen.key, guess_only=True)
        conf, kg_map = path_belief(_named_by_class(chosen, kind), [_named_by_class(p, kind) for p in fitting])
        return ShapedReading(graph, conf, f"the best reading that gives {_kind_words(kind)}: {chosen.explain()}",
                             list(chosen.steps), chosen.key, kg_map=kg_map)

    async def _count(self, paths: RelationPaths, kind: AnswerKind, klass: str | None,
                     mentions: Sequence[Any] | None = None, *, base_set: _BaseSet | None = None
                     ) -> ShapedReading | None:
        """How many: the best entity-valued path's end set (of the class counted, when the KG has
        it), counted; a numeric literal the best path ends in answers as itself. With two topics
        ("how many *forwards* play for England") the set is what both reach; ``base_set``: a
        class's members ("how many states are there")."""
        if base_set is not None:
            graph = base_set.graph.model_copy(update={
                "answer": [], "aggregate": Aggregate(function="count", var=base_set.end),
                "expected": AnswerKind(kind="number")})
            return ShapedReading(graph, base_set.confidence, f"count of: {base_set.explanation}", base_set.steps,
                                 base_set.key + "|count", evidence_graph=base_set.graph)
        if mentions is not None:
            joined = await self._joined(paths, mentions, kind)
            if joined is None:
                return None
            graph = joined.graph.model_copy(update={"answer": [], "aggregate": Aggregate(function="count",
                                                                                        var=joined.end),
                                                    "expected": AnswerKind(kind="number")})
            return ShapedReading(graph, joined.confidence, f"count of: {joined.explanation}", joined.steps,
                             joined.key, evidence_graph=joined.graph)
        best = paths.paths[0]
        if _literal_valued(best) and await self._fitting(RelationPaths(paths=[best]), AnswerKind(kind="number")):
            # "how many people live in X": the KG holds the number itself
            triples, end = chain_group(best)
            graph = select_graph(triples, end, topics=[best.entity], kind=AnswerKind(kind="number"))
            return ShapedReading(graph, paths.confidence, f"the number itself: {best.explain()}",
                                 list(best.steps), best.key, kg_map=paths.kg_map)
        sets = [p for p in await self._base_sets(paths, kind)]
        if not sets:
            return None
        chosen = sets[0]
        triples, end = chain_group(chosen)
        base = select_graph(triples, end, topics=[chosen.entity], kind=kind)
        if kind.class_iri and not await self._all_of_class(chosen, kind.class_iri):
            base.where = await self._of_class(base.where, end, kind.class_iri)
        graph = base.model_copy(update={"answer": [], "aggregate": Aggregate(function="count", var=end),
                                        "expected": AnswerKind(kind="number")})
        conf, kg_map = await self._set_confidence(chosen, sets, kind)
        return ShapedReading(graph, conf, f"count of: {chosen.explain()}", list(chosen.steps), chosen.key,
                             evidence_graph=base, kg_map=kg_map)

    async def _set_confidence(self, chosen: RankedPath, sets: list[RankedPath],
                              kind: AnswerKind) -> tuple[float, KGMapped | None]:
        """How sure the set is the one the question means. A set whose relation no word names
        ("Ridley Scott's films") counts as named as far as it covers what the topic is linked to
        by its rivals of the same kind (the films he directed, wrote or is tagged on)."""
        ranked = [_named_by_class(p, kind) for p in sets]
        me = _named_by_class(chosen, kind)
        if me.support < 0.5 * CONFIDENCE_SUPPORT and chosen.hops == 1:
            mine = {v.get("value") for v in await self._answers(chosen)}
            union = set(mine)
            for p in sets:
                if p.hops == 1 and p.entity == chosen.entity:
                    theirs = {v.get("value") for v in await self._answers(p)}
                    if theirs & mine:
                        union |= theirs
            coverage = len(mine) / max(1, len(union))
            me = me.model_copy(update={"support": CONFIDENCE_SUPPORT * coverage})
            ranked = [me if p.key == me.key else p for p in ranked]
            # rivals that only re-state part of the chosen set are no rivals
            return path_belief(me, [p for p in ranked if p.key == me.key or p.hops > 1 or p.entity != me.entity])
        return path_belief(me, ranked)

    async def _base_sets(self, paths: RelationPaths, kind: AnswerKind) -> list[RankedPath]:
        """Entity sets the question may count or order, best first: each ranked path that ends in
        entities, and the prefix of each that ends in a literal (its last step is then what
        orders them); only sets of the named class when the KG has it."""
        seen: dict[str, RankedPath] = {}
        for path in paths.paths[: 2 * self.max_executed]:
            values = await self._answers(path)
            if not values:
                continue
            base = path
            if await self._value_like(path):
                if path.hops < 2:
                    continue
                base = path.model_copy(update={"steps": path.steps[:-1], "answers": [], "sparql": ""})
            if base.key in seen:
                continue
            if not await self._answers(base) or await self._value_like(base):
                continue
            if not await self._fits_class(base, kind.class_iri):
                continue
            seen[base.key] = base
        return list(seen.values())

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
            if p is None or s is None or p.value in NAMING_PREDICATES:
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
            if style == "named":
                self._value_names[p] = await self._naming_predicate(s["value"], names.get(s["value"], ""))
            if style != "named" and k == "number" and _YEAR.match(str(s.get("value"))) and \
                    (s.get("datatype") or "").endswith("gYear"):
                style = "date"
            out.append((p, plabels.get(p) or p, style))
        return out

    async def _pick_relation(self, words: Sequence[str] | dict[str, float], relations: list[tuple[str, str, str]]
                             ) -> tuple[tuple[str, str, str] | None, float]:
        """The relation the ordering words name best, and how sure (softmax margin); one candidate
        is sure only when the words name it ("the prettiest volcano" orders by nothing it says)."""
        if not relations:
            return None, 0.0
        labels = [_readable(r[1]) for r in relations]
        weights = words if isinstance(words, dict) else {w: 1.0 for w in words}
        units = [w for w in weights if w and w not in _QUANTITY_WORDS and w not in ("much", "little", "few")]
        if not units:  # "before 1980", "more than 5": the number says what is compared, the set's one value is it
            return relations[0], 0.9 if len(relations) == 1 else 0.3
        sims = [[lexical_similarity(u, lab) for lab in labels] for u in units]
        # an adjective whose dimensions are known is matched by its words only: by meaning,
        # "smallest" is as near "lowest elevation" as "area" (its dimension nouns carry the meaning)
        nouns = [i for i, u in enumerate(units) if not _adjectival(u)]
        if self.similarity is not None and nouns:
            dense = await self.similarity([units[i] for i in nouns], labels)
            for row, i in zip(dense, nouns, strict=True):
                sims[i] = [max(a, b) for a, b in zip(sims[i], row, strict=True)]
        # the best word's match, and a little for each further word the label holds ("highest
        # elevation" over "lowest elevation" for "the highest elevation")
        best_per = [max(sims[i][j] * weights[units[i]] for i in range(len(units)))
                    + 0.05 * max(0, sum(1 for i in range(len(units)) if sims[i][j] >= 0.8) - 1)
                    for j in range(len(labels))]
        order = sorted(range(len(labels)), key=lambda j: -best_per[j])
        top = order[0]
        if len(relations) == 1:
            return relations[0], 0.9 if best_per[0] >= ONE_NAMED else 0.4
        z = sum(math.exp((best_per[j] - best_per[top]) / 0.1) for j in order)
        return relations[top], round(1.0 / z if best_per[top] > 0.2 else 0.0, 4)

    async def _ordered(self, shape: ShapeReading, paths: RelationPaths, kind: AnswerKind,
                       klass: str | None, mentions: Sequence[Any] | None = None, *,
                       base_set: _BaseSet | None = None) -> ShapedReading | None:
        """A superlative (order by a literal relation, ties kept) or a comparison (filter by it)
        over the best base set (with two topics, what both reach; ``base_set``: a class's members).
        The ordering relation is the literal step of a ranked path over that set when the
        question's words named it, else the set's literal relation the ordering words name best."""
        named = None
        base_path: RankedPath | None = None
        if base_set is None and mentions is not None:
            joined = await self._joined(paths, mentions, kind)
            if joined is None:
                return None
            base_set = joined
        elif base_set is None:
            sets = await self._base_sets(paths, kind)
            if not sets:
                return None
            base_path = sets[0]
            tr, e = chain_group(base_path)
            base_set = _BaseSet(select_graph(tr, e, topics=[base_path.entity], kind=kind), e,
                                (await self._set_confidence(base_path, sets, kind))[0], base_path.explain(),
                                list(base_path.steps), base_path.key)
            for p in paths.paths:
                if p.hops == base_path.hops + 1 and p.steps[-1].words and p.key.startswith(base_path.key + "|") \
                        and await self._value_like(p):
                    named = p
                    break
        counted = await self._class_named(shape.order_words) \
            if shape.order_words and shape.order_words != shape.superlative_word else None
        if counted is not None:
            if shape.shape == "superlative" and shape.superlative_word in ("most", "least", "fewest"):
                by_count = await self._count_ordered(shape, base_set, kind, counted)  # "borders the most *states*"
                if by_count is not None:
                    return by_count
            else:
                other = Var(name="y")
                if await self._class_to_class(base_set.graph.where, base_set.end,
                                              await membership(self.tools, other, counted), other):
                    return None  # "the state with the largest *city*": a thing to find first, not a value
            # else the word also names a class nothing in the set links to ("area"): it names the value
        end, topics = base_set.end, base_set.graph.topics
        base = base_set.graph.where.model_copy(deep=True)
        if base_path is not None and kind.class_iri and not await self._all_of_class(base_path, kind.class_iri):
            base = await self._of_class(base, end, kind.class_iri)
        base.filters = [*base.filters, *(f for f in _not_topic(end, topics) if f not in base.filters)]
        triples = list(base.triples)
        relations = await self._ordering_relations(base, end)
        said = shape.order_words or ""
        if shape.superlative_word and shape.superlative_word not in said.split():
            said = f"{shape.superlative_word} {said}"  # "the *highest* elevation": highest, not lowest
        words = ordering_weights(said)
        if shape.shape == "comparative" and len(relations) > 1:
            # "more than 100k *inhabitants*": the noun after the number says which value is compared
            # (a set with one value needs no word for it: "before 1980" compares the year it has)
            for w in _free_words(self._question, shape, []):
                if w not in _SMALL and w not in _TENS and w not in _SCALES:
                    for k, v in ordering_weights(w).items():
                        words.setdefault(k, round(0.95 * v, 4))
        if named is not None and any(r[0] == named.steps[-1].predicate for r in relations):
            rel = next(r for r in relations if r[0] == named.steps[-1].predicate)
            rel_conf = 0.95
        else:
            rel, rel_conf = await self._pick_relation(words, relations)
        if rel is None:
            return None
        pred, label, style = rel
        value = Var(name="v")
        extra, key = _value_expr(end, pred, style, value, self._value_names.get(pred, RDFS_LABEL))
        base_conf = base_set.confidence
        match = RelationMatch(predicate=pred, label=label, words=shape.order_words or None, strength=rel_conf)
        conf = round(base_conf * rel_conf, 4)
        # "the biggest state": area, by what "big" measures; "the largest *area*": named
        explicit = [w for w in (shape.order_words or "").split() if not _adjectival(w)]
        inferred = named is None and not any(lexical_similarity(w, _readable(label)) >= 0.8 for w in explicit)
        if shape.shape == "comparative":
            number = number_value(shape.number or "")
            if number is None:
                return None
            op = shape.comparison or ">"
            if style in ("date", "named") and _against_date(shape) and _date_like(style, label):
                op = _FLIPPED[op]  # "older than 1930" on a year: before it
            where = base.model_copy(update={"triples": [*triples, *extra], "filters": [
                *base.filters, Compare(left=key, op=op, right=Lit(value=number, datatype=XSD + "decimal"))]})
            graph = QueryGraph(answer=[end], where=where, expected=kind, topics=list(topics))
            return ShapedReading(graph, conf, f"{label} {op} {number} among: {base_set.explanation}",
                                 [*base_set.steps, match], base_set.key + f"|{op}{number}",
                                 evidence_graph=QueryGraph(answer=[end, value], where=where), inferred=inferred)
        descending = shape.order == "max"
        if style in ("date", "named") and _against_date(shape) and _date_like(style, label):
            descending = not descending
        where = base.model_copy(update={"triples": [*triples, *extra]})
        order = [OrderKey(expr=key, descending=descending)]
        graph = QueryGraph(answer=[end, value], where=where, order=order, limit=1, ties=True, expected=kind,
                           topics=list(topics))
        evidence = QueryGraph(answer=[end, value], where=where, order=order, limit=50, expected=kind)
        return ShapedReading(graph, conf, f"{'highest' if descending else 'lowest'} {label} among: "
                             f"{base_set.explanation}", [*base_set.steps, match], base_set.key + f"|order|{pred}",
                             evidence_graph=evidence, inferred=inferred)

    async def _count_ordered(self, shape: ShapeReading, base_set: _BaseSet, kind: AnswerKind,
                             counted: str) -> ShapedReading | None:
        """"The state that borders the most states", "the river that runs through the fewest
        states": the set's members ordered by how many members of the counted class each is linked
        to (none counts as 0), through the link the question's words name (else the one most of
        them have), ties kept."""
        end = base_set.end
        base = base_set.graph.where.model_copy(deep=True)
        other = Var(name="y")
        members = await membership(self.tools, other, counted)
        links = await self._class_to_class(base, end, members, other)
        if not links:
            return None
        said = set((shape.order_words or "").split())
        words = [w for w in _free_words(self._question, shape, []) if w not in said]
        links = await name_links(links, words, self.tools, self.similarity)
        link = links[0]
        (pred, direction), = link.steps
        step = Triple(subject=end, predicate=Iri(iri=pred), object=other) if direction == "out" \
            else Triple(subject=other, predicate=Iri(iri=pred), object=end)
        n = Var(name="n")
        optional = members.model_copy(update={"triples": [step, *members.triples]})
        counts = QueryGraph(answer=[end], where=base.model_copy(update={"optional": [*base.optional, optional]}),
                            aggregate=Aggregate(function="count", var=other, alias="n"), group_by=[end])
        descending = shape.superlative_word == "most"
        graph = QueryGraph(answer=[end, n], where=Group(subqueries=[counts]),
                           order=[OrderKey(expr=n, descending=descending)], limit=1, ties=True, expected=kind,
                           topics=list(base_set.graph.topics))
        label = (await self._names([counted])).get(counted, counted)
        match = RelationMatch(predicate=pred, direction=direction, label=link.labels[0], words=link.words,
                              strength=link.strength)
        conf = round(base_set.confidence * link_confidence(links), 4)
        return ShapedReading(graph, conf, f"{'most' if descending else 'fewest'} {label} by {link.labels[0]} "
                             f"among: {base_set.explanation}", [*base_set.steps, match],
                             base_set.key + f"|count-order|{pred}", evidence_graph=graph.model_copy(
                                 update={"limit": 50, "ties": False}))

    async def _class_to_class(self, base: Group, end: Var, members: Group, other: Var) -> list[Link]:
        """The one-hop relations between the set's members and the counted class's, most used first."""
        inner = f"{{ SELECT DISTINCT ?{end.name} WHERE {{ {group(base)} }} LIMIT 500 }}"
        skipped = await skipped_predicates(self.tools)
        q = (f"SELECT ?p ?d (COUNT(DISTINCT ?{end.name}) AS ?c) WHERE {{ {inner} {group(members)} "
             f"{{ ?{end.name} ?p ?{other.name} BIND(\"out\" AS ?d) }} UNION "
             f"{{ ?{other.name} ?p ?{end.name} BIND(\"in\" AS ?d) }} FILTER(?{end.name} != ?{other.name}) }} "
             f"GROUP BY ?p ?d")
        try:
            res = await self.tools["run_sparql"](q, limit=200)
        except ToolError:
            return []
        out = [Link(((r["p"].value, r["d"].value),), int(float(r["c"].value))) for r in res.rows
               if "p" in r and "d" in r and "c" in r and r["p"].value not in skipped and r["d"].value in ("out", "in")]
        # a relation the data holds both ways alike ("borders") is one link, not two rivals
        both = {k.steps[0][0] for k in out if k.steps[0][1] == "in"}
        out = [k for k in out if not (k.steps[0][1] == "in" and k.steps[0][0] in both
                                      and any(o.steps[0] == (k.steps[0][0], "out") and o.members == k.members
                                              for o in out))]
        return sorted(out, key=lambda k: -k.members)

    def _joinable(self, shape: ShapeReading, paths: RelationPaths, mentions: Sequence[Any]) -> Sequence[Any] | None:
        """The mentions, when the counted or ordered set is what two topics both reach; else None."""
        return mentions if _two_topics(shape, mentions) and len(_by_mention(paths)) >= 2 else None

    async def _joined(self, paths: RelationPaths, mentions: Sequence[Any], kind: AnswerKind) -> _BaseSet | None:
        """What two topics' best paths both reach, as a set to count or order."""
        joined = await self._intersection(paths, mentions, kind)
        if joined is None:
            return None
        return _BaseSet(joined.graph, joined.graph.answer[0], joined.confidence, joined.explanation,
                        list(joined.matches), joined.key)

    async def _pairs(self, sides: tuple[tuple[str, list[RankedPath]], ...], kind: AnswerKind, *,
                     negated: bool) -> list[tuple[float, RankedPath, RankedPath, frozenset[str]]]:
        """Every pair of the two topics' paths with a result: what both reach ("and"), or what the
        first reaches less what the second reaches, when the second covers part of it ("not")."""
        (_, p1s), (_, p2s) = sides
        out: list[tuple[float, RankedPath, RankedPath, frozenset[str]]] = []
        for a in p1s:
            va = {v.get("value") for v in await self._answers(a)}
            if not va or await self._value_like(a):
                continue
            for b in p2s:
                if a.entity == b.entity:
                    continue
                vb = {v.get("value") for v in await self._answers(b)}
                result = (va - vb if va & vb else set()) if negated else va & vb
                result -= {a.entity, b.entity}
                if not result:
                    continue
                members = [{"type": "uri", "value": v} for v in result if isinstance(v, str)]
                if kind.class_iri and not await self._members(members, kind.class_iri):
                    continue
                # best scores first; at equal scores the shorter paths (a prefix keeps its path's score)
                out.append((a.score + b.score - 1e-6 * (a.hops + b.hops), a, b, frozenset(result)))
        out.sort(key=lambda t: -t[0])
        return out

    async def _pair_confidence(self, pairs: list[tuple[float, RankedPath, RankedPath, frozenset[str]]],
                               kind: AnswerKind, mentions: Sequence[Any],
                               sides: tuple[tuple[str, list[RankedPath]], ...]) -> float:
        """The share of the pairs' weight (a softmax of their scores) whose result agrees with the
        best pair's, times how well its weaker side is named: two readings that give the same
        answer are no rivals, whichever entity or relation they took. A shared value's own relation
        ("*goalkeepers*" ~ <-plays position) is named by the value; with it, the other side's one
        hop needs no word ("which midfielders does X have"): the agreement of the readings decides.
        A side no word names ("Tim Burton films") counts as named as far as it covers what its
        topic is linked to by one hop (see :meth:`_covered_support`)."""
        top, a, b, mine = pairs[0]
        total = agree = 0.0
        for rank, _, _, result in pairs:
            w = math.exp(max(-50.0, (rank - top) / CONFIDENCE_TEMPERATURE))
            total += w
            if len(mine & result) >= 0.5 * max(1, min(len(mine), len(result))):
                agree += w
        own = [p for p in (a, b) if p.mention in _categories(mentions) and p.hops == 1]
        if own and all(p.hops == 1 for p in (a, b)):
            named = 1.0
        else:
            rivals = [p for _, ps in sides for p in ps]
            named = min([await self._covered_support(_named_by_class(p, kind), rivals) for p in (a, b)])
            named /= CONFIDENCE_SUPPORT
        return round(agree / total * min(1.0, named), 4)

    async def _covered_support(self, path: RankedPath, rivals: Sequence[RankedPath]) -> float:
        """A one-hop set no word names counts as named as far as it covers the sets that overlap it
        from the same topic by one hop (the films X directed, against those X wrote or is tagged on)."""
        if path.support >= 0.5 * CONFIDENCE_SUPPORT or path.hops != 1:
            return path.support
        mine = {v.get("value") for v in await self._answers(path)}
        union = set(mine)
        for p in rivals:
            if p.hops == 1 and p.entity == path.entity and p.key != path.key:
                theirs = {v.get("value") for v in await self._answers(p)}
                if theirs & mine:
                    union |= theirs
        return max(path.support, CONFIDENCE_SUPPORT * len(mine) / max(1, len(union)))

    async def _intersection(self, paths: RelationPaths, mentions: Sequence[Any],
                            kind: AnswerKind) -> ShapedReading | None:
        """Two topic entities whose best paths meet: their answers intersected (never one alone)."""
        if len(_by_mention(paths)) < 2:
            return None
        sides = self._sides(paths, mentions)
        pairs = await self._pairs(sides, kind, negated=False)
        if not pairs:
            return None
        _, a, b, _both = pairs[0]
        ta, end = chain_group(a, prefix="a", end="x")
        tb, _ = chain_group(b, prefix="b", end="x")
        graph = select_graph([*ta, *tb], end, topics=[a.entity, b.entity], kind=kind)
        (m1, _), (m2, _) = sides
        return ShapedReading(graph, await self._pair_confidence(pairs, kind, mentions, sides), f"{m1}: {a.explain()} AND {m2}: "
                             f"{b.explain()}", [*a.steps, *b.steps], a.key + "&" + b.key)

    def _join_mapped(self, joined: ShapedReading) -> ShapedReading:
        """A join, through the map fitted on the KG's recorded joins when its bank has one and the
        join's confidence is within what they recorded (below the lowest, the map would lift a join
        no example vouched for); otherwise, and for a count or an order over a join (only plain
        joins were recorded), the playbook's map."""
        joined.join = True
        reader = reader_of(getattr(self.tools, "reader", None))
        if reader is None or reader.join_calibration is None or joined.confidence < reader.join_floor:
            return joined
        raw = joined.confidence
        joined.confidence = round(platt(raw, reader.join_calibration), 4)
        joined.kg_map = KGMapped(raw=raw, name=reader.join_map_name or "")
        return joined

    def _sides(self, paths: RelationPaths, mentions: Sequence[Any]) -> tuple[tuple[str, list[RankedPath]], ...]:
        """The first two topics' paths in question order, each without paths that read the other
        topic's name as a relation word, with their prefixes."""
        by_mention = _by_mention(paths)
        order = {getattr(m, "text", ""): getattr(m, "start", 0) for m in mentions}
        (m1, p1s), (m2, p2s) = sorted(list(by_mention.items())[:2], key=lambda kv: order.get(kv[0], 0))
        return ((m1, _with_prefixes([p for p in p1s if not _names_other(p, m2)])[:8]),
                (m2, _with_prefixes([p for p in p2s if not _names_other(p, m1)])[:8]))

    async def _negation(self, paths: RelationPaths, mentions: Sequence[Any], kind: AnswerKind) -> ShapedReading:
        """"Which films directed by X do not star Y": the first topic's set less the members the
        second topic is linked to (NOT EXISTS), where the second path covers part of the set."""
        sides = self._sides(paths, mentions)
        (m1, _), (m2, _) = sides
        pairs = await self._pairs(sides, kind, negated=True)
        if not pairs:
            return ShapedReading(QueryGraph(expected=kind), 0.0, f"nothing links {m2} to what {m1} is linked to",
                                 guess_only=True)
        _, a, b, _rest = pairs[0]
        ta, end = chain_group(a, prefix="a", end="x")
        tb, _ = chain_group(b, prefix="b", end="x")
        graph = QueryGraph(answer=[end], where=Group(triples=ta, filters=_not_topic(end, [a.entity, b.entity]),
                                                     not_exists=[Group(triples=tb)]),
                           expected=kind, topics=[a.entity, b.entity])
        return ShapedReading(graph, await self._pair_confidence(pairs, kind, mentions, sides), f"{m1}: {a.explain()} AND NOT {m2}: "
                             f"{b.explain()}", [*a.steps, *b.steps], a.key + "-" + b.key)

    async def _union(self, paths: RelationPaths, kind: AnswerKind) -> ShapedReading | None:
        """"Who directed Alien or Jaws": the same relation path from each topic, answers united."""
        by_mention = _by_mention(paths)
        (m1, p1s), (m2, p2s) = list(by_mention.items())[:2]
        p1s = [p for p in p1s if not _names_other(p, m2)]
        p2s = [p for p in p2s if not _names_other(p, m1)]
        for a in p1s[:6]:
            for b in p2s[:6]:
                if a.entity == b.entity or _signature(a) != _signature(b):
                    continue
                if not await self._answers(a) or not await self._answers(b):
                    continue
                ta, end = chain_group(a, prefix="a", end="x")
                tb, _ = chain_group(b, prefix="b", end="x")
                graph = QueryGraph(answer=[end], where=Group(unions=[[Group(triples=ta), Group(triples=tb)]]),
                                   expected=kind, topics=[a.entity, b.entity])
                conf = min(path_confidence(a, [p for p in p1s if p.answers]),
                           path_confidence(b, [p for p in p2s if p.answers]))
                return ShapedReading(graph, round(conf, 4), f"{m1} OR {m2}: {a.explain()}",
                                     list(a.steps), a.key + "|" + b.key)
        return None

    async def _ask(self, shape: ShapeReading, paths: RelationPaths, mentions: Sequence[Any]) -> ShapedReading:
        """Yes/no: the best-ranked path from one named entity that either reaches the other named
        entity, or ends in a relation the other entity holds too (then the KG says no). With
        neither, "I don't know". "not" wraps the check in NOT EXISTS."""
        targets = {iri for m in mentions for iri in _mention_iris(m)}
        found: list[tuple[RankedPath, str, bool]] = []  # (path, other entity, reached)
        mention_of = {iri: getattr(m, "text", "") for m in mentions for iri in _mention_iris(m)}
        for path in paths.paths[: self.max_executed]:
            others = sorted(targets - {path.entity})
            if not others or any(_names_other(path, mention_of.get(o, "")) for o in others):
                continue
            values = {v.get("value") for v in await self._answers(path)}
            reached = [t for t in others if t in values]
            target = reached[0] if reached else await self._holds(path, others)
            if target is not None:
                found.append((path, target, bool(reached)))
        if not found:
            return ShapedReading(QueryGraph(form="ask", expected=AnswerKind(kind="boolean")), 0.0,
                                 "no relation of the question joins its entities", guess_only=True)
        named = [c for c in found if c[0].support >= 0.5 * CONFIDENCE_SUPPORT]
        if named and named[0] is found[0]:
            # the question's words name the relation: its path decides, against its rivals
            path, target, reached = found[0]
            conf = _verdict_confidence(found)
            if not reached:
                conf *= 0.9  # "no" rests on the KG being complete for this relation
        else:
            # no word names it ("Is X in Y?"): a direct link says yes; when every relation both
            # entities hold misses, no; anything else is unknown
            direct = [c for c in found if c[0].hops == 1]
            linked = [c for c in direct if c[2]]
            if linked:
                path, target, reached = linked[0]
                conf = 0.9
            elif direct:
                path, target, reached = direct[0]
                conf = 0.8
            else:
                path, target, reached = found[0]
                conf = 0.0
        triples, end = chain_group(path)
        inner = Group(triples=triples, values={end.name: [Iri(iri=target)]})
        where = Group(not_exists=[inner]) if shape.negated else inner
        graph = QueryGraph(form="ask", where=where, expected=AnswerKind(kind="boolean"), topics=[path.entity, target])
        return ShapedReading(graph, round(conf, 4), f"{path.explain()} {'reaches' if reached else 'misses'} "
                             "the other entity", list(path.steps), path.key + "|ask")

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
def mask_mentions(question: str, mentions: Sequence[Any]) -> str:
    """The question with each linked name replaced by one neutral name, so that words inside a
    title ("Men *Without* Women", "Don't Look *Now*") are not read as the question's own shape."""
    tokens = tokenize(question)
    spans = sorted(((tokens[m.start].start, tokens[m.end - 1].end) for m in mentions
                    if 0 <= m.start < m.end <= len(tokens)), reverse=True)
    out = question
    for a, b in spans:
        out = out[:a] + "Xyz" + out[b:]
    return out


def not_shape_words(mentions: list[Any], shape: ShapeReading) -> list[Any]:
    """Mentions less those that are the shape's own words: the number a comparison is against
    ("released after *2010*" is no film called 2010), the cue words ("*after*", "*most*") and
    misspelt names that take in a cue word."""
    number = normalise(shape.number or "")
    kept = [m for m in mentions
            if not (number and normalise(m.text) == number and shape.comparison)
            and not all(i in shape.cue_positions for i in range(m.start, m.end))
            # a name known only up to a typo that takes in a cue word ("the *latest* movie" ~ the
            # film "The Last Movie") is the cue, not the name
            and not (getattr(m, "fuzzy", None) and any(i in shape.cue_positions for i in range(m.start, m.end)))]
    # a lowercase word of the kind asked for ("the newest Nolan *film*") names the answer's kind,
    # not a topic, when the question has a topic besides it; a shared value ("which *goalkeepers*")
    # stays: it constrains the answer
    kind = set(normalise(shape.kind_words or "").split())
    common = [m for m in kept if m.text[:1].islower() and set(normalise(m.text).split()) <= kind
              and not getattr(m, "category", False)]
    return [m for m in kept if m not in common] if len(common) < len(kept) else kept


def literal_relations(paths: RelationPaths) -> dict[str, AnswerKindName]:
    """The labels of the ranked paths' last relations that end in literals, with their value kind
    (what the shape reader needs to read "the population of X" as a number)."""
    out: dict[str, AnswerKindName] = {}
    for p in paths.paths:
        if p.answers and _literal_valued(p):
            k = value_kind(p.answers[0])
            if k in ("number", "date", "string"):
                out.setdefault(p.steps[-1].label, k)
    return out


def _with_prefixes(paths: list[RankedPath]) -> list[RankedPath]:
    """Ranked paths and, after each, its shorter prefixes (each keeps the score of the path it came
    from): "the rivers through X" is the prefix of "the towns on the rivers through X"."""
    out: dict[str, RankedPath] = {}
    for p in paths:
        for n in range(p.hops, 0, -1):
            q = p if n == p.hops else p.model_copy(update={"steps": p.steps[:n], "answers": [], "sparql": ""})
            out.setdefault(q.key, q)
    return list(out.values())


_SCALES = {"hundred": 100, "thousand": 1_000, "k": 1_000, "million": 1_000_000,
           "billion": 1_000_000_000, "bn": 1_000_000_000, "trillion": 1_000_000_000_000, "dozen": 12}
_SMALL = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                      "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                      "seventeen", "eighteen", "nineteen"))}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}


def number_value(text: str) -> str | None:
    """A number as written in a question, as a plain decimal ("1,000" -> 1000, "2.5 million" ->
    2500000, "ten thousand" -> 10000, "$3bn" -> 3000000000); None when it is no number."""
    words = text.lower().replace("$", "").replace(",", "").split()
    if not words:
        return None
    head, *rest = words
    m = re.match(r"^(\d+(?:\.\d+)?)(k|bn)?$", head)
    if m:
        value = float(m.group(1)) * (_SCALES[m.group(2)] if m.group(2) else 1)
    elif head in _SMALL:
        value = float(_SMALL[head])
    elif head in _TENS:
        value = float(_TENS[head])
        if rest and rest[0] in _SMALL:  # "twenty one"
            value += _SMALL[rest.pop(0)]
    else:
        return None
    for w in rest:
        if w not in _SCALES:
            return None
        value *= _SCALES[w]
    return str(int(value)) if value.is_integer() else f"{value:.12f}".rstrip("0")


def _free_words(question: str, shape: ShapeReading, mentions: Sequence[Any]) -> list[str]:
    """The question's content words that are none of its names, shape cues or kind words: what may
    name how a class's members reach a named entity ("the rivers that *flow through* X")."""
    tokens = tokenize(question)
    taken = set(shape.cue_positions)
    for m in mentions:
        taken.update(range(getattr(m, "start", 0), getattr(m, "end", 0)))
    kind = set(normalise(shape.kind_words or "").split())
    return [t.lower for i, t in enumerate(tokens) if i not in taken and t.lower not in STOPWORDS
            and t.lower not in WH_WORDS and t.lower not in kind and t.lower.isalpha()]


def _names_other(path: RankedPath, mention: str) -> bool:
    """A path whose relation words are the other topic's name reads that name as a relation."""
    other = set(normalise(mention).split())
    return any(m.words and set(normalise(m.words).split()) <= other for m in path.steps)


def _by_mention(paths: RelationPaths) -> dict[str, list[RankedPath]]:
    out: dict[str, list[RankedPath]] = {}
    for p in paths.paths:
        out.setdefault(p.mention, []).append(p)
    return out


def _signature(path: RankedPath) -> tuple[tuple[str, str], ...]:
    return tuple((s.predicate, s.direction) for s in path.steps)


def _verdict_confidence(found: list[tuple[RankedPath, str, bool]]) -> float:
    """How sure the best path's yes/no is: the share of the candidates' weight (a softmax of their
    scores) that gives the same verdict, times how well the best path is named. The same relation
    walked from either entity agrees with itself; only a verdict the other way is a rival."""
    best, _, verdict = found[0]
    weights = [(math.exp(max(-50.0, (p.score - best.score) / CONFIDENCE_TEMPERATURE)), reached)
               for p, _, reached in found]
    agree = sum(w for w, r in weights if r == verdict) / sum(w for w, _ in weights)
    return agree * min(1.0, best.support / CONFIDENCE_SUPPORT)


def _categories(mentions: Sequence[Any]) -> list[str]:
    """The mentions that name a shared value ("goalkeepers"): see ``mentions.is_category_value``."""
    return [getattr(m, "text", "") for m in mentions if getattr(m, "category", False)]


def _two_topics(shape: ShapeReading, mentions: Sequence[Any]) -> bool:
    """The question joins two topics: it says so ("both ... and", "X and Y"), or it names two
    things with capitalised names ("which player in Tigres UANL is from Mexico") or by a shared
    value ("which *goalkeepers* play for Mexico")."""
    if shape.shape == "intersection" or shape.conjunction == "and":
        return True
    return sum(1 for m in mentions if getattr(m, "text", "")[:1].isupper() or getattr(m, "category", False)) >= 2


def _explicit_kind(question: str, shape: ShapeReading, klass: str | None) -> bool:
    """Whether the question says what kind it wants: a number, a date, a yes/no, a named class,
    or a person/place question word; a bare "what" does not."""
    if shape.answer_kind != "entity" or klass is not None:
        return True
    first = question.strip().split(" ", 1)[0].lower()
    return first in ("who", "whom", "whose", "where")


def _named_by_class(path: RankedPath, kind: AnswerKind) -> RankedPath:
    """A path whose end set is of the class the question names counts as named by that class word."""
    if kind.class_iri is None:
        return path
    return path.model_copy(update={"support": max(path.support, CONFIDENCE_SUPPORT)})


def _kind_words(kind: AnswerKind) -> str:
    if kind.class_label:
        return f"a {kind.class_label}"
    return {"entity": "an entity", "number": "a number", "date": "a date", "string": "a text", "boolean": "yes or no"}[kind.kind]


def _literal_valued(path: RankedPath) -> bool:
    return bool(path.answers) and all(a.get("type") == "literal" for a in path.answers[:20])


def _mention_iris(m: Any) -> list[str]:
    if hasattr(m, "exact_iris"):
        return list(m.exact_iris())
    return list(getattr(m, "iris", []) or [])


def _readable(label: str) -> str:
    """A relation's label (or, unlabelled, its IRI) as lower-case words."""
    if label.startswith(("http://", "https://")):
        return readable_name(label)
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", label).replace("_", " ").lower()


def _stem(word: str) -> str:
    w = word.lower()
    for suffix, repl in (("iest", "y"), ("ier", "y"), ("est", ""), ("er", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            base = w[: -len(suffix)] + repl
            if len(base) > 3 and base[-1] == base[-2]:  # biggest -> big
                base = base[:-1]
            return base
    return w


def _adjective_base(word: str) -> str:
    """The adjective a gradable word is made of ("smallest" -> small, "largest" -> large, "higher"
    -> high), as far as its dimensions are known; else the word's stem."""
    for base in (superlative_base(word), comparative_base(word), _stem(word)):
        if base is None:
            continue
        for form in (base, base + "e"):
            if form in DIMENSIONS:
                return form
    return _stem(word)


def _adjectival(word: str) -> bool:
    """A gradable adjective (or its -er/-est form) whose dimension nouns are known."""
    if word in _DIMENSION_NOUNS:
        return False
    return word in DIMENSIONS or _adjective_base(word) in DIMENSIONS


def measure_weights(question: str) -> tuple[str, dict[str, float]]:
    """The dimension words of a measure question: the adjective after "how" ("how *big* is X"), a
    noun for people ("how many *people* live in X"), or a dimension noun ("the *size* of X")."""
    low = [t.lower for t in tokenize(question)]
    said: list[str] = []
    for i, w in enumerate(low[:-1]):
        if w == "how" and low[i + 1] not in ("many", "much", "often") and low[i + 1] not in STOPWORDS:
            said.append(low[i + 1])
    said += [w for w in low if w in PEOPLE_NOUNS or (w in DIMENSIONS and w not in said and w in _DIMENSION_NOUNS)]
    text = " ".join(dict.fromkeys(said))
    return text, ordering_weights(text)


def ordering_weights(text: str) -> dict[str, float]:
    """The ordering words, their adjective stem and the dimension nouns the stem names, each with
    how much a match counts: the words themselves fully (a noun before the head noun a little
    less: "population *density*"), each later dimension a little less (a "big" state is first its
    area, then its population); nouns for people name a population."""
    out: dict[str, float] = {}
    words = text.lower().split()
    for n, w in enumerate(words):
        modifier = n < len(words) - 1 and not _adjectival(w) and w not in DIMENSIONS
        out[w] = max(out.get(w, 0.0), 0.9 if modifier else 1.0)
        if not modifier:
            out.setdefault(_adjective_base(w), 1.0)
    # a noun said outright ("the largest *area*") names the attribute; the adjective's dimensions
    # then only break ties
    said_noun = any(not _adjectival(w) and w not in _QUANTITY_WORDS for w in words)
    for w in words:
        base = _adjective_base(w)
        people = w in PEOPLE_NOUNS or base in PEOPLE_NOUNS
        dims = ("population",) if people else DIMENSIONS.get(base, ())
        scale = 0.85 if said_noun and not people and _adjectival(w) else 1.0
        for rank, dim in enumerate(dims):
            out.setdefault(dim, round(scale * (1.0 - _DIMENSION_STEP * rank), 4))
    return out


def _against_date(shape: ShapeReading) -> bool:
    return any(_stem(w) in _AGAINST_DATE for w in (shape.order_words or "").split())


def _date_like(style: str, label: str) -> bool:
    return style == "date" or any(w in _readable(label) for w in ("date", "year", "born", "founded"))


def _value_expr(end: Var, pred: str, style: str, value: Var,
                name_predicate: str = RDFS_LABEL) -> tuple[list[Triple], Func | Var]:
    """Triples that reach the member's value and the expression to order or compare by: a number
    cast, the year of a date, or the number a year node is named by."""
    triples = [Triple(subject=end, predicate=Iri(iri=pred), object=value)]
    if style == "named":
        name = Var(name="vname")
        triples.append(Triple(subject=value, predicate=Iri(iri=name_predicate), object=name))
        return triples, Func(name=XSD + "decimal", args=[Func(name="str", args=[name])])
    if style == "date":
        return triples, Func(name=XSD + "integer", args=[Func(name="substr", args=[
            Func(name="str", args=[value]), Lit(value="1", datatype=XSD + "integer"),
            Lit(value="4", datatype=XSD + "integer")])])
    return triples, Func(name=XSD + "decimal", args=[Func(name="str", args=[value])])



"""The query graph: the one typed query language every playbook's SPARQL comes from.

A chain from one entity is one case of it; so are counts, superlatives (MAX/MIN with ties
kept), literal comparisons, yes/no (ASK), two-entity intersections, "or" (UNION) and "not"
(NOT EXISTS). It covers the operators KBQA research converged on: GrailQA's S-expressions
(JOIN, reverse R, AND, COUNT, ARGMAX/ARGMIN, <, <=, >, >=) and KQA Pro's KoPL (find, relate,
filter by concept / attribute, count, select between, verify).

Only data here; ``kgteam.tools.query_builder`` compiles it to SPARQL (checked IRIs, escaped
literals), ``kgteam.tools.query_parse`` reads SPARQL back into it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
XSD = "http://www.w3.org/2001/XMLSchema#"


class Var(BaseModel):
    """A variable, named without the ``?``."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["var"] = "var"
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")


class Iri(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["iri"] = "iri"
    iri: str


class Lit(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["literal"] = "literal"
    value: str
    datatype: str | None = None
    lang: str | None = None


Term = Annotated[Var | Iri | Lit, Field(discriminator="kind")]


class Func(BaseModel):
    """A function applied to terms: ``year(?d)``, ``lang(?l)``, ``xsd:decimal(?v)``, ``str(?x)``."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["func"] = "func"
    name: str  # a SPARQL built-in, operator or aggregate (lower case), or a full XSD cast IRI
    args: list[Expr] = Field(default_factory=list)
    distinct: bool = False  # an aggregate over distinct values: COUNT(DISTINCT ?x) in HAVING / ORDER BY


Expr = Annotated[Var | Iri | Lit | Func, Field(discriminator="kind")]
Func.model_rebuild()


class Triple(BaseModel):
    """One pattern, written in the direction the KG stores it (``subject predicate object``).

    ``repeat`` is a property-path modifier on the predicate (``rdfs:subClassOf*``)."""

    model_config = ConfigDict(frozen=True)
    subject: Term
    predicate: Term
    object: Term
    repeat: Literal["*", "+", "?"] | None = None


CompareOp = Literal["<", "<=", ">", ">=", "=", "!="]


class Compare(BaseModel):
    """``left op right``: a literal filter on numbers, dates or strings, or term (in)equality."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["compare"] = "compare"
    left: Expr
    op: CompareOp
    right: Expr


class TextMatch(BaseModel):
    """``contains`` / ``strstarts`` / ``strends`` / ``regex`` on a string expression."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["text"] = "text"
    function: Literal["contains", "strstarts", "strends", "regex"]
    target: Expr
    pattern: str
    flags: str | None = None


class Bound(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["bound"] = "bound"
    var: Var
    negated: bool = False


class ExprFilter(BaseModel):
    """``FILTER(expr)`` for any other boolean expression: ``?x IN (...)``, ``langMatches(...)``,
    ``a || b``, ``!(...)``. Read from real queries; playbooks use the specific conditions."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["expr"] = "expr"
    expr: Expr


Condition = Annotated[Compare | TextMatch | Bound | ExprFilter, Field(discriminator="kind")]


class Group(BaseModel):
    """A basic graph pattern with its filters and the set operations nested in it.

    ``unions``: each entry is a list of alternatives ("or"); ``not_exists``: "not";
    ``optional``: values that may be missing. Triples in one group are joined ("and")."""

    triples: list[Triple] = Field(default_factory=list)
    filters: list[Condition] = Field(default_factory=list)
    values: dict[str, list[Term]] = Field(default_factory=dict)  # VALUES ?var { ... }
    binds: dict[str, Expr] = Field(default_factory=dict)  # BIND(expr AS ?var)
    unions: list[list[Group]] = Field(default_factory=list)
    optional: list[Group] = Field(default_factory=list)
    not_exists: list[Group] = Field(default_factory=list)
    minus: list[Group] = Field(default_factory=list)
    exists: list[Group] = Field(default_factory=list)
    subqueries: list[QueryGraph] = Field(default_factory=list)  # { SELECT ... } joined with the rest

    def all_triples(self) -> list[Triple]:
        out = list(self.triples)
        for alternatives in self.unions:
            for g in alternatives:
                out += g.all_triples()
        for g in (*self.optional, *self.not_exists, *self.minus, *self.exists):
            out += g.all_triples()
        for sub in self.subqueries:
            out += sub.where.all_triples()
        return out


AnswerKindName = Literal["entity", "number", "date", "string", "boolean"]


class AnswerKind(BaseModel):
    """What the question asks for: an entity (of class ``class_iri`` when known), a number, a date,
    a string or a boolean. Answers of another kind are rejected."""

    model_config = ConfigDict(frozen=True)
    kind: AnswerKindName = "entity"
    class_iri: str | None = None
    class_label: str | None = None


class Aggregate(BaseModel):
    """``COUNT(DISTINCT ?var)`` (and the rest of SPARQL's aggregates, for parsed gold queries)."""

    model_config = ConfigDict(frozen=True)
    function: Literal["count", "max", "min", "sum", "avg", "sample", "group_concat"] = "count"
    var: Var | None = None  # None: COUNT(*) (or the aggregate is over ``expr``)
    distinct: bool = True
    alias: str = "count"
    expr: Func | None = None  # aggregate over an expression instead of a variable: MAX(YEAR(?d))


class OrderKey(BaseModel):
    model_config = ConfigDict(frozen=True)
    expr: Expr
    descending: bool = False


Shape = Literal["chain", "intersection", "union", "negation", "count", "superlative", "comparative",
                "ask", "literal"]


class QueryGraph(BaseModel):
    """One question's reading. ``answer`` names the selected variables (SELECT); ASK has none.

    A superlative is ``order`` + ``limit`` 1; with ``ties`` every value that shares the best key
    is kept (compiled as a MAX/MIN sub-select), so "the highest" never drops an equal second."""

    form: Literal["select", "ask"] = "select"
    answer: list[Var] = Field(default_factory=list)
    distinct: bool = True
    where: Group = Field(default_factory=Group)
    aggregate: Aggregate | None = None
    group_by: list[Var] = Field(default_factory=list)
    having: list[Condition] = Field(default_factory=list)
    order: list[OrderKey] = Field(default_factory=list)
    limit: int | None = Field(None, ge=0)
    offset: int | None = Field(None, ge=0)
    ties: bool = False
    expected: AnswerKind | None = None
    topics: list[str] = Field(default_factory=list)  # the IRIs the question names

    @property
    def shape(self) -> Shape:
        """The question shape this graph expresses (one label; the most specific wins)."""
        if self.form == "ask":
            return "ask"
        if self.aggregate is not None and self.aggregate.function == "count":
            return "count"
        if self.order and self.limit is not None:
            return "superlative"
        if _has_comparison(self.where):
            return "comparative"
        if self.where.not_exists or self.where.minus:
            return "negation"
        if any(len(alternatives) > 1 for alternatives in self.where.unions):  # one alternative: a nested { }
            return "union"
        if self.expected is not None and self.expected.kind in ("number", "date", "string"):
            return "literal"
        entities = {t.iri for tr in self.where.triples for t in (tr.subject, tr.object) if isinstance(t, Iri)}
        entities |= {t.iri for vs in self.where.values.values() for t in vs if isinstance(t, Iri)}
        return "intersection" if len(entities) >= 2 else "chain"


Group.model_rebuild()


def _has_comparison(group: Group) -> bool:
    def numeric(e: Expr) -> bool:
        return isinstance(e, Lit) and (e.datatype or "").startswith(XSD) and not e.datatype.endswith("string")

    return any(isinstance(f, Compare) and f.op in ("<", "<=", ">", ">=")
               and (numeric(f.right) or numeric(f.left) or isinstance(f.right, Var | Func))
               for f in group.filters)


def var(name: str) -> Var:
    return Var(name=name)


def iri(value: str) -> Iri:
    return Iri(iri=value)


def lit(value: str | int | float, datatype: str | None = None, lang: str | None = None) -> Lit:
    if datatype is None and isinstance(value, bool):
        datatype = XSD + "boolean"
        value = "true" if value else "false"
    elif datatype is None and isinstance(value, int):
        datatype = XSD + "integer"
    elif datatype is None and isinstance(value, float):
        datatype = XSD + "decimal"
    return Lit(value=str(value), datatype=datatype, lang=lang)

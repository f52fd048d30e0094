"""A claim read as what it is: a yes/no question about the KG, an ASK query graph.

The semantic layer's shape reader (``shape.read_shape``) reads the claim's words model-free: a
negation ("not", "never", "no"), a comparison with a number ("before 2010", "more than three",
"at least 20") or a bare number ("came out in 2010"). From them:

* a number is a **literal**: the claim's entity has a value of a relation its words name, and the
  value is compared with the number (a filter); a mention that is the number itself ("2010", a
  film of that name) is no entity of the claim, unless no relation of the entity holds numbers;
* a number beside a relation whose values are **things** counts them: COUNT compared with it;
* a **negation** puts the claim's graph under NOT EXISTS: the rule's verdict flips.

Each rule keeps its ASK query (compiled from the query graph) beside its premises, so what the
claim says can be run on the KG as it is. Only closed-class English lives here: spelled numbers
and the comparison words of the shape reader; relations come from the KG's labels.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kgteam.protocols.evidence import RelationMatch
from kgteam.protocols.payloads import Axiom, TopicMention, TriplePattern
from kgteam.protocols.query_graph import (
    XSD,
    Aggregate,
    Compare,
    Func,
    Group,
    Iri,
    Lit,
    QueryGraph,
    Triple,
    Var,
)
from kgteam.roles.r3.rules import (
    MIN_NAMED,
    _path_claim,
    _patterns,
    _ranked_paths,
    _step_triples,
    _steps_text,
    candidate_axioms,
    comparison_words,
    first_person,
    numeric,
    question_form,
    stated_relations,
    value_of,
)
from kgteam.roles.semantic import SemanticLayer
from kgteam.roles.semantic.shape import read_shape
from kgteam.roles.semantic.shaped import mask_mentions, not_shape_words
from kgteam.roles.semantic.text import tokenize
from kgteam.tools.iri import RDFS_LABEL
from kgteam.tools.query_builder import compile_query
from kgteam.tools.types import ToolError

# closed-class English: numbers written as words
SPELLED = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
           "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
           "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
           "dozen": 12, "once": 1, "twice": 2}
_OPS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "=": "eq"}
_SPARQL_OPS = {v: k for k, v in _OPS.items()}
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_CLAUSE_BREAK = re.compile(r"[,;:]|\b(?:and|but|that|which|who|whom|whose|where|while)\b", re.IGNORECASE)
# words of time before a year ("in 1865", "since 2001")
TIME_WORDS = frozenset(["in", "before", "after", "since", "until", "till", "by", "from", "during", "than"])


@dataclass
class ClaimShape:
    """What the claim's words do with its entities: negate, compare with a number."""

    negated: bool = False
    op: str | None = None  # lt / le / gt / ge / eq
    number: float | None = None
    number_text: str = ""
    anchors: list[TopicMention] = field(default_factory=list)  # the claim's entities, less its shape words


def number_value(text: str) -> float | None:
    """``"2,500"`` → 2500, ``"three"`` → 3; None when it is no number."""
    t = text.strip().lower().replace(",", "")
    if t in SPELLED:
        return float(SPELLED[t])
    return float(t) if _NUMBER.fullmatch(t) else None


def read_claim(question: str, anchors: Sequence[TopicMention]) -> ClaimShape:
    """The claim's shape, read as the semantic layer reads a question's: its comparison words and
    number first (so "before *2010*" is no film called 2010), then negation with names masked (so
    "Men *Without* Women" negates nothing)."""
    raw = read_shape(question)
    kept = not_shape_words(list(anchors), raw) if raw.comparison else list(anchors)
    masked = read_shape(mask_mentions(question, kept))
    out = ClaimShape(negated=masked.negated, anchors=kept)
    if raw.comparison and raw.number:
        value = number_value(raw.number)
        if value is not None:
            out.op, out.number, out.number_text = _OPS.get(raw.comparison), value, raw.number
        return out
    # a bare number outside the claim's other names ("came out in 2010"): equality with a value
    tokens = tokenize(question)
    named = {i for a in kept if not _is_number_mention(a) for i in range(a.start, a.end)}
    numbers = [t.text for i, t in enumerate(tokens) if i not in named and number_value(t.text) is not None
               and t.text[:1].isdigit()]
    if len(numbers) == 1:
        out.op, out.number, out.number_text = "eq", number_value(numbers[0]), numbers[0]
    return out


def _is_number_mention(a: TopicMention) -> bool:
    return number_value(a.text) is not None


# ------------------------------------------------------------------------------------------ query graphs

def _term(t: str) -> Var | Iri | Lit:
    if t.startswith("?"):
        return Var(name=t[1:])
    return Iri(iri=t) if t.startswith(("http://", "https://", "urn:")) else Lit(value=t)


def _triples(patterns: Sequence[TriplePattern]) -> list[Triple]:
    return [Triple(subject=_term(p.subject), predicate=_term(p.predicate), object=_term(p.object)) for p in patterns]


def _value_expr(value: Var, style: str) -> tuple[list[Triple], Any]:
    """What a value compares as: a number, the year of a date, or the number a node is named by."""
    if style == "named":
        name = Var(name="vname")
        return ([Triple(subject=value, predicate=Iri(iri=RDFS_LABEL), object=name)],
                Func(name=XSD + "decimal", args=[Func(name="str", args=[name])]))
    if style == "date":
        return [], Func(name=XSD + "integer", args=[Func(name="substr", args=[
            Func(name="str", args=[value]), Lit(value="1", datatype=XSD + "integer"),
            Lit(value="4", datatype=XSD + "integer")])])
    return [], Func(name=XSD + "decimal", args=[Func(name="str", args=[value])])


def _number(n: float) -> Lit:
    return Lit(value=f"{n:g}" if n.is_integer() else str(n), datatype=XSD + ("integer" if n.is_integer() else "decimal"))


def claim_graph(axiom: Axiom, style: str = "number") -> QueryGraph | None:
    """The claim as an ASK query graph: the rule's patterns (NOT EXISTS under a negation), a
    literal filter, or a COUNT compared with the claim's number."""
    if axiom.form in ("path", "same"):
        inner = Group(triples=_triples(axiom.patterns))
    elif axiom.form == "literal" and axiom.op and axiom.value is not None:
        value = Var(name="v")
        more, expr = _value_expr(value, style)
        inner = Group(triples=[*_triples(_patterns(axiom.anchors[0], axiom.steps, "?v")), *more],
                      filters=[Compare(left=expr, op=_SPARQL_OPS[axiom.op], right=_number(axiom.value))])  # type: ignore[arg-type]
    elif axiom.form == "tally" and axiom.op and axiom.value is not None:
        end, n = Var(name="x"), Var(name="n")
        counted = QueryGraph(aggregate=Aggregate(function="count", var=end, alias="n"),
                             where=Group(triples=_triples(_patterns(axiom.anchors[0], axiom.steps, "?x"))))
        inner = Group(subqueries=[counted], filters=[Compare(left=n, op=_SPARQL_OPS[axiom.op], right=_number(axiom.value))])  # type: ignore[arg-type]
    else:
        return None
    where = Group(not_exists=[inner]) if axiom.negated else inner
    return QueryGraph(form="ask", where=where, topics=[a for a in axiom.anchors if a.startswith(("http", "urn:"))])


def with_query(axiom: Axiom, style: str = "number") -> Axiom:
    graph = claim_graph(axiom, style)
    return axiom.model_copy(update={"query": compile_query(graph)}) if graph is not None else axiom


# ------------------------------------------------------------------------------------------ rules

async def _value_style(tools: Any, iri: str, step: RelationMatch) -> tuple[str | None, bool]:
    """How the step's values from ``iri`` compare ("number", "date", "named" for a node named by a
    number such as a year node; None: things, not values) and whether they are times (dates, years
    by datatype, or nodes named by a year: a plain integer such as a height is an amount)."""
    found, _ = await _step_triples(tools, iri, step)
    if not found:
        return None, False
    values = [value_of(t) for t in found]
    numbers = [numeric(v) for v in values]
    if any(n is None for n in numbers):
        return None, False
    dated = all(len(v) >= 7 and v[4:5] == "-" for v in values)
    literal = all(t.object_is_literal for t in found)
    yearly = all(n is not None and n.is_integer() and 1000 <= n <= 2100 for n in numbers) and (
        not literal or all((t.object_datatype or "").endswith("gYear") for t in found))
    style = "date" if dated else ("number" if literal else "named")
    return style, dated or yearly


def _year_claimed(question: str, claim: ClaimShape) -> bool:
    """The claim's number is a year: four digits after a word of time ("in 1865", "before 2010")."""
    if claim.number is None or not claim.number.is_integer() or not 1000 <= claim.number <= 2100:
        return False
    words = [t.lower for t in tokenize(question)]
    at = next((i for i, w in enumerate(words) if w == claim.number_text.lower()), -1)
    return at > 0 and bool(set(words[max(0, at - 2): at]) & TIME_WORDS)


def _one_clause(question: str, anchor: TopicMention, number: str) -> bool:
    """The number and the entity stand in one clause: no comma, "and", "that", "which", "who"
    between them."""
    tokens = tokenize(question)
    at = next((i for i, t in enumerate(tokens) if t.lower == number.lower() and not anchor.start <= i < anchor.end), -1)
    if at < 0 or not tokens or anchor.end > len(tokens):
        return False
    a, b = (tokens[anchor.end - 1].end, tokens[at].start) if at >= anchor.end else (tokens[at].end, tokens[anchor.start].start)
    return not _CLAUSE_BREAK.search(question[a:b])


def _counted_words(question: str, claim: ClaimShape) -> set[str]:
    """The words right after the claim's number ("more than three *films*"): what is counted, not
    the relation that counts it."""
    words = [t.lower for t in tokenize(question)]
    at = next((i for i, w in enumerate(words) if w == claim.number_text.lower()), -1)
    return set(words[at + 1: at + 3]) if at >= 0 else set()


async def value_axioms(layer: SemanticLayer, question: str, claim: ClaimShape, *, keep: int) -> list[Axiom]:
    """Rules that compare the claim's entity's value (a literal filter) or how many values it has
    (a COUNT) with the claim's number, through a relation the claim's words name; a year compares
    only with times and, when no word names the relation, with the entity's one time relation."""
    firm = sorted([a for a in claim.anchors if a.iris and a.firm and not _is_number_mention(a)], key=lambda a: a.start)
    if len(firm) != 1 or claim.op is None or claim.number is None:
        return []
    anchor = firm[0]
    if not _one_clause(question, anchor, claim.number_text):
        return []  # the number is said of something else ("X is aged 37 and A wears number X")
    year = _year_claimed(question, claim)
    counted = _counted_words(question, claim)
    paths = await _ranked_paths(layer, question, [anchor], anchor, hops=1, keep=12)
    named = [p for p in paths if p.steps[0].words and p.steps[0].strength >= MIN_NAMED]
    # "directed more than three *films*": the counted noun is what is counted when another word
    # names the relation; "has more than two *apprentices*": with no other, it is the relation
    verb_named = any(not set(p.steps[0].words.split()) <= counted for p in named)
    out: list[Axiom] = []
    times: list[tuple[Any, str]] = []
    for p in paths:
        step = p.steps[0]
        style, timely = await _value_style(layer.tools, anchor.iris[0], step)
        if style is not None and timely:
            times.append((p, style))
        if p not in named or (style is None and verb_named and set(step.words.split()) <= counted):
            continue  # a relation the claim does not name decides nothing ("first climbed" is no elevation)
        if style is not None and year and not timely:
            continue  # a year is compared with times only
        axiom = _value_axiom(anchor, p, claim, style, timely)
        if axiom is not None:
            out.append(axiom)
        if len(out) >= keep:
            break
    if not out and year and len({_signature(p) for p, _ in times}) == 1:
        p, style = times[0]
        axiom = _value_axiom(anchor, p, claim, style, True)
        out = [axiom] if axiom is not None else []
    return out


def _signature(p: Any) -> tuple[tuple[str, str], ...]:
    return tuple((s.predicate, s.direction) for s in p.steps)


def _value_axiom(anchor: TopicMention, p: Any, claim: ClaimShape, style: str | None, timely: bool) -> Axiom | None:
    assert claim.op is not None and claim.number is not None
    n = claim.number
    said = comparison_words(claim.op, timely)
    what = _steps_text(p.steps)
    if style is not None:
        text = f"If {anchor.text}'s {what} is {said} {claim.number_text}, the claim holds"
        axiom = Axiom(text=text, form="literal", op=claim.op, value=n, steps=p.steps, score=round(p.score, 4),  # type: ignore[arg-type]
                      anchors=[anchor.iris[0]], anchor_labels=[anchor.text],
                      patterns=_patterns(anchor.iris[0], p.steps, "?v"),
                      premises=[f"{anchor.text} — {what} → ?v"], conclusion=f"?v {said} {claim.number_text}")
    elif claim.op != "eq" and n.is_integer() and n >= 0:
        text = f"If {anchor.text} has {said} {claim.number_text} '{what}', the claim holds"
        axiom = Axiom(text=text, form="tally", op=claim.op, value=n, steps=p.steps, score=round(p.score, 4),  # type: ignore[arg-type]
                      anchors=[anchor.iris[0]], anchor_labels=[anchor.text],
                      patterns=_patterns(anchor.iris[0], p.steps, "?x"),
                      premises=[f"{anchor.text} — {what} → ?x"], conclusion=f"count(?x) {said} {claim.number_text}")
    else:
        return None
    return with_query(axiom, style or "number")


async def _direct_link(tools: Any, firm: list[TopicMention], stated: dict[str, int]) -> list[Axiom]:
    """Two entities no word of the claim links ("Mount Sel is in Ostrand"): one relation that joins
    them directly, the only one, is what the claim says; it can only support it (no word says
    which relation a "no" would be closed on). A claim that writes out another relation's label
    ("Corlis is the *capital* of Havenmoor") says something else."""
    if len(firm) != 2:
        return []
    a, b = sorted(firm, key=lambda m: m.start)
    x, y = Iri(iri=a.iris[0]), Iri(iri=b.iris[0])
    p = Var(name="p")
    found: list[tuple[str, str]] = []
    for direction, (s, o) in (("out", (x, y)), ("in", (y, x))):
        graph = QueryGraph(answer=[p], where=Group(triples=[Triple(subject=s, predicate=p, object=o)]), limit=3)
        try:
            res = await tools["run_sparql"](compile_query(graph))
        except (ToolError, KeyError):
            return []
        found += [(row["p"].value, direction) for row in res.rows if "p" in row]
    if len(found) != 1:
        return []
    pred, direction = found[0]
    try:
        label = (await tools["labels_for"]([pred])).get(pred, pred)
    except (ToolError, KeyError):
        label = pred
    if stated and label not in stated:
        return []
    step = RelationMatch(predicate=pred, label=label, direction=direction)
    claim = _path_claim(a.text, [step], b.text)
    return [Axiom(text=f"If {claim}, the claim holds", form="path", steps=[step], score=0.0,
                  anchors=[a.iris[0], b.iris[0]], anchor_labels=[a.text, b.text],
                  patterns=_patterns(a.iris[0], [step], b.iris[0]), premises=[f"{a.text} — {label} → {b.text}"],
                  conclusion=claim)]


def negate(axiom: Axiom) -> Axiom:
    """The rule of a negated claim: the same premises, the verdict the other way (NOT EXISTS)."""
    text = axiom.text.replace(", the claim holds", ", the claim fails")
    if text == axiom.text:
        text = f"{axiom.text}; the claim says the opposite"
    return with_query(axiom.model_copy(update={"negated": True, "text": text}),
                      "named" if "vname" in axiom.query else ("date" if "substr" in axiom.query else "number"))


async def claim_axioms(layer: SemanticLayer, question: str, anchors: Sequence[TopicMention], *,
                       hops: int = 2, keep: int = 4) -> list[Axiom]:
    """The rules that could decide the claim (or yes/no question), best first, read through its
    shape: a number compared as a literal or a count, a negation flipping the verdict. A
    preference (first person) keeps its own reading."""
    if question_form(question) != "claim" and first_person(question, anchors):
        return await candidate_axioms(layer, question, anchors, hops=hops, keep=keep)
    claim = read_claim(question, anchors)
    found: list[Axiom] = []
    if claim.op is not None:
        found = await value_axioms(layer, question, claim, keep=keep)
    others = [a for a in claim.anchors if a.iris and a.firm and not _is_number_mention(a)]
    if not found and len(others) == 1 and _year_claimed(question, claim):
        return []  # a year the entity has no time to compare with: the KG lacks the relation
    if not found:
        rest = claim.anchors
        if claim.op is not None and claim.op != "eq":  # a compared number is no entity of the claim
            rest = [a for a in rest if not _is_number_mention(a)]
        found = await candidate_axioms(layer, question, rest, hops=hops, keep=keep)
        if not found and question_form(question) == "claim":
            found = await _direct_link(layer.tools, [a for a in rest if a.iris and a.firm],
                                       await stated_relations(question, layer.tools))
        found = [with_query(a) for a in found]
    if claim.negated:
        found = [negate(a) if a.form != "prefer" else a for a in found]
    return found

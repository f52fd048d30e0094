"""R3's deterministic core: what a question asks (a claim, yes/no), which general rules could
decide it, the facts that bind a rule's premises, and the verdict those facts give.

A rule (an axiom) is one of four forms over the question's anchor entities and a relation path
the question's words name (the semantic layer's path scorer, as KERAG plans paths):

* ``path``: the first anchor reaches the second through the path (a claim, "did X direct Y");
* ``same``: both anchors have a common value of the path ("same club", "share a director");
* ``compare``: the anchors' values of the path compared ("older", "before", "more");
* ``count``: how many values of the path each anchor has, compared ("more films than").

Only general English lives here (question words, auxiliaries, comparatives, words of sameness);
relation meaning comes from the KG's labels. A verdict is True/False only when every premise is
bound to listed triples; the "False" of a path rule is closed-world on the path's relation: the
first anchor has values of it, and the second is not among them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kgteam.protocols.evidence import EvidenceTriple, RelationMatch
from kgteam.protocols.payloads import Axiom, TopicMention, TriplePattern
from kgteam.roles.kerag.planning import Limits, expand, filter_hop
from kgteam.roles.semantic import SemanticLayer
from kgteam.roles.semantic.text import SAMENESS, WH_WORDS, tokenize
from kgteam.tools.types import ToolError

AUXILIARIES = frozenset(["is", "are", "was", "were", "did", "does", "do", "could", "can", "has", "have", "had",
                         "will", "would", "should", "may", "might", "must"])
# comparatives: the first anchor's value is less ("lt") or greater ("gt") than the second's.
# For dates and years "older"/"earlier"/"before" mean an earlier (smaller) value.
TIME_COMPARATIVES = frozenset(["older", "earlier", "before", "sooner", "younger", "newer", "later", "after"])
COMPARATIVES = {"older": "lt", "earlier": "lt", "before": "lt", "sooner": "lt",
                "younger": "gt", "newer": "gt", "later": "gt", "after": "gt",
                "more": "gt", "fewer": "lt", "less": "lt", "larger": "gt", "bigger": "gt", "higher": "gt",
                "greater": "gt", "smaller": "lt", "lower": "lt", "longer": "gt", "shorter": "lt"}
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?")
MAX_VALUES = 60  # values fetched per anchor and hop


def question_form(question: str) -> str:
    """``claim`` for a statement ("Claim: ..." or no question form), else ``yes_no``."""
    text = question.strip()
    if text.lower().startswith("claim:"):
        return "claim"
    words = [t.lower for t in tokenize(text)]
    if text.endswith("?") or (words and (words[0] in AUXILIARIES or words[0] in WH_WORDS)):
        return "yes_no"
    return "claim"


def verdict_label(form: str, verdict: str) -> str:
    if form == "claim":
        return {"true": "supported", "false": "refuted"}.get(verdict, "not enough info")
    return {"true": "True", "false": "False"}.get(verdict, "I don't know")


def comparative(question: str) -> str | None:
    for t in tokenize(question):
        if t.lower in COMPARATIVES:
            return t.lower
    return None


def has_sameness(question: str) -> bool:
    return any(t.lower in SAMENESS or t.lower == "both" for t in tokenize(question))


def numeric(value: str) -> float | None:
    m = _NUMBER.match(value.strip())
    return float(m.group(0)) if m else None


# ------------------------------------------------------------------------------------------ axioms

def _steps_text(steps: Sequence[RelationMatch]) -> str:
    return " / ".join(("^" if s.direction == "in" else "") + s.label for s in steps)


def _patterns(subject: str, steps: Sequence[RelationMatch], end: str) -> list[TriplePattern]:
    out = []
    current = subject
    for i, s in enumerate(steps):
        nxt = end if i == len(steps) - 1 else f"?x{i + 1}"
        a, b = (current, nxt) if s.direction == "out" else (nxt, current)
        out.append(TriplePattern(subject=a, predicate=s.predicate, object=b))
        current = nxt
    return out


async def _ranked_paths(layer: SemanticLayer, question: str, anchors: Sequence[TopicMention], start: TopicMention,
                        *, hops: int, keep: int) -> list[Any]:
    """Relation paths from ``start`` that the question's words name, best first (KERAG's planning)."""
    topics = [start, *[a for a in anchors if a is not start]]
    limits = Limits(top_n=keep)
    kept: list[Any] = []
    for hop in range(1, hops + 1):
        try:
            candidates = await expand(layer.tools, [start], kept, hop, limits)
        except ToolError:
            break
        if not candidates:
            break
        keep_now, _ = await filter_hop(layer, question, topics, kept, candidates, limits)
        kept += keep_now
    return sorted(kept, key=lambda p: (-p.score, len(p.steps)))


async def candidate_axioms(layer: SemanticLayer, question: str, anchors: Sequence[TopicMention], *,
                           hops: int = 2, keep: int = 4) -> list[Axiom]:
    """The rules that could decide the question, best first (each becomes a branch of the search)."""
    # the claim's subject first: a rule reads from the entity the sentence is about
    firm = sorted([a for a in anchors if a.iris and a.firm], key=lambda a: a.start)
    if not firm:
        return []
    first = firm[0]
    second = firm[1] if len(firm) > 1 else None
    comp = comparative(question)
    out: list[Axiom] = []
    if second is not None and (comp or has_sameness(question)):
        paths = await _ranked_paths(layer, question, firm, first, hops=1, keep=12)
        timely = comp in TIME_COMPARATIVES
        for p in paths[: keep * 3]:
            steps = p.steps
            if comp:
                op = COMPARATIVES[comp]
                numbers = await _numeric_values(layer.tools, first.iris[0], steps) if (p.literal_end or timely) else False
                if timely and not numbers:
                    continue  # "older", "before": only a relation with dates or numbers can decide it
                form = "compare" if numbers else "count"
                if form == "count" and p.score <= 0:
                    continue
                what = _steps_text(steps)
                text = (f"If {first.text}'s {what} is {'less' if op == 'lt' else 'greater'} than {second.text}'s, "
                        f"then '{comp}' holds" if form == "compare" else
                        f"If {first.text} has {'fewer' if op == 'lt' else 'more'} '{what}' than {second.text}, "
                        f"then '{comp}' holds")
                out.append(Axiom(text=text, form=form, op=op, steps=steps, score=round(p.score, 4),
                                 anchors=[first.iris[0], second.iris[0]], anchor_labels=[first.text, second.text],
                                 patterns=[*_patterns(first.iris[0], steps, "?a"), *_patterns(second.iris[0], steps, "?b")],
                                 premises=[f"{first.text} — {what} → ?a", f"{second.text} — {what} → ?b"],
                                 conclusion=f"?a {op} ?b"))
            elif p.score > 0:
                what = _steps_text(steps)
                out.append(Axiom(text=f"If {first.text} and {second.text} have the same {what}, the answer is yes",
                                 form="same", steps=steps, score=round(p.score, 4),
                                 anchors=[first.iris[0], second.iris[0]], anchor_labels=[first.text, second.text],
                                 patterns=[*_patterns(first.iris[0], steps, "?v"), *_patterns(second.iris[0], steps, "?v")],
                                 premises=[f"{first.text} — {what} → ?v", f"{second.text} — {what} → ?v"],
                                 conclusion="a common ?v exists"))
    elif second is not None:
        paths = await _ranked_paths(layer, question, firm, first, hops=hops, keep=keep * 2)
        for p in paths:
            if p.literal_end or p.score <= 0:
                continue  # a rule the question's words do not name decides nothing
            what = _steps_text(p.steps)
            out.append(Axiom(text=f"If {first.text} reaches {second.text} through {what}, the claim holds",
                             form="path", steps=p.steps, score=round(p.score, 4),
                             anchors=[first.iris[0], second.iris[0]], anchor_labels=[first.text, second.text],
                             patterns=_patterns(first.iris[0], p.steps, second.iris[0]),
                             premises=[f"{first.text} — {what} → {second.text}"],
                             conclusion=f"{second.text} is among {first.text}'s {what}"))
    out.sort(key=lambda a: -(a.score or 0.0))
    return out[:keep]


# ------------------------------------------------------------------------------------------ facts

async def _numeric_values(tools: Any, iri: str, steps: Sequence[RelationMatch]) -> bool:
    """Whether the path's values from ``iri`` read as numbers (years, dates, counts)."""
    if len(steps) != 1:
        return False
    values = await _step_triples(tools, iri, steps[0])
    return bool(values) and all(numeric(value_of(t)) is not None for t in values)


def value_of(t: EvidenceTriple) -> str:
    return t.object if t.object_is_literal else (t.object_label or t.object)


async def _step_triples(tools: Any, iri: str, step: RelationMatch) -> list[EvidenceTriple]:
    try:
        rows = await tools["neighbors"](iri, predicates=[step.predicate], direction=step.direction, limit=MAX_VALUES)
    except ToolError:
        return []
    return [EvidenceTriple(**r.model_dump(include=set(EvidenceTriple.model_fields))) for r in rows
            if r.predicate == step.predicate]


def _far(t: EvidenceTriple, iri: str) -> str:
    return t.object if t.subject == iri else t.subject


async def walk(tools: Any, start: str, steps: Sequence[RelationMatch]) -> list[EvidenceTriple]:
    """Every triple on the path's walks from ``start`` (at most ``MAX_VALUES`` per node and hop)."""
    frontier = [start]
    out: list[EvidenceTriple] = []
    for step in steps:
        nxt: list[str] = []
        for node in frontier[:MAX_VALUES]:
            for t in await _step_triples(tools, node, step):
                out.append(t)
                if not t.object_is_literal:
                    nxt.append(_far(t, node))
        frontier = list(dict.fromkeys(nxt))
    return out


async def premise_facts(tools: Any, axiom: Axiom) -> list[EvidenceTriple]:
    facts: list[EvidenceTriple] = []
    for anchor in axiom.anchors[: 1 if axiom.form == "path" else 2]:
        facts += await walk(tools, anchor, axiom.steps)
    return facts


async def neighbourhood(tools: Any, iri: str, limit: int = 40) -> list[EvidenceTriple]:
    try:
        rows = await tools["neighbors"](iri, limit=limit)
    except ToolError:
        return []
    return [EvidenceTriple(**r.model_dump(include=set(EvidenceTriple.model_fields))) for r in rows]


# ------------------------------------------------------------------------------------------ verdict

@dataclass
class Decision:
    verdict: str  # true / false / unknown
    cited: list[int] = field(default_factory=list)  # positions in the listed triples
    reasoning: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _reach(triples: Sequence[EvidenceTriple], start: str, steps: Sequence[RelationMatch]
           ) -> tuple[dict[str, list[int]], bool]:
    """Nodes (or literal values) the path reaches from ``start`` over the listed triples, each with
    the positions of the triples of one walk to it; and whether every hop was bound."""
    paths: dict[str, list[int]] = {start: []}
    for step in steps:
        nxt: dict[str, list[int]] = {}
        for node, chain in paths.items():
            for i, t in enumerate(triples):
                if t.predicate != step.predicate:
                    continue
                if step.direction == "out" and t.subject == node:
                    nxt.setdefault(t.object, [*chain, i])
                elif step.direction == "in" and t.object == node and not t.object_is_literal:
                    nxt.setdefault(t.subject, [*chain, i])
        if not nxt:
            return {}, False
        paths = nxt
    return paths, True


def _say(t: EvidenceTriple, i: int) -> str:
    return f"{t.subject_label or t.subject} — {t.predicate_label or t.predicate} → {t.object_label or t.object} [t{i}]"


def decide(axiom: Axiom, triples: Sequence[EvidenceTriple]) -> Decision:
    """The axiom's verdict on the listed triples alone (never the KG): True/False only when every
    premise is bound to listed triples."""
    if axiom.form is None or not axiom.anchors:
        return Decision("unknown", missing=["the rule has no checkable premises"])
    a = axiom.anchors[0]
    reached_a, bound_a = _reach(triples, a, axiom.steps)
    label_a = axiom.anchor_labels[0] if axiom.anchor_labels else a
    if not bound_a:
        return Decision("unknown", missing=[axiom.premises[0] if axiom.premises else f"{label_a}'s facts"])
    if axiom.form == "path":
        b = axiom.anchors[1]
        if b in reached_a:
            cited = reached_a[b]
            return Decision("true", cited, [*(_say(triples[i], i) for i in cited),
                                            f"so {axiom.conclusion} [axiom]"])
        shown = [c[-1] for c in list(reached_a.values())[:3]]
        return Decision("false", shown, [*(_say(triples[i], i) for i in shown),
                                         f"{len(reached_a)} value(s) in all, and {axiom.anchor_labels[1]} is not one "
                                         f"of them, so the premise fails [axiom]"])
    b = axiom.anchors[1]
    reached_b, bound_b = _reach(triples, b, axiom.steps)
    if not bound_b:
        return Decision("unknown", missing=[axiom.premises[1] if len(axiom.premises) > 1 else "the second anchor's facts"])
    if axiom.form == "same":
        common = [v for v in reached_a if v in reached_b]
        if common:
            cited = [*reached_a[common[0]], *reached_b[common[0]]]
            return Decision("true", cited, [*(_say(triples[i], i) for i in cited), "a common value: the rule holds [axiom]"])
        cited = [c[-1] for c in list(reached_a.values())[:2]] + [c[-1] for c in list(reached_b.values())[:2]]
        return Decision("false", cited, [*(_say(triples[i], i) for i in cited),
                                         "no value in common: the rule does not hold [axiom]"])
    if axiom.form == "count":
        na, nb = len(reached_a), len(reached_b)
        holds = na < nb if axiom.op == "lt" else na > nb
        cited = [c[-1] for c in list(reached_a.values())[:2]] + [c[-1] for c in list(reached_b.values())[:2]]
        return Decision("true" if holds else "false", cited,
                        [*(_say(triples[i], i) for i in cited),
                         f"{label_a} has {na}, {axiom.anchor_labels[1]} has {nb} [axiom]"])
    values_a = [(numeric(value_of(triples[c[-1]])), c) for v, c in reached_a.items()]
    values_b = [(numeric(value_of(triples[c[-1]])), c) for v, c in reached_b.items()]
    values_a = [x for x in values_a if x[0] is not None]
    values_b = [x for x in values_b if x[0] is not None]
    if not values_a or not values_b:
        return Decision("unknown", missing=["a value that can be compared"])
    (va, ca), (vb, cb) = min(values_a, key=lambda x: x[0]), min(values_b, key=lambda x: x[0])  # type: ignore[arg-type,return-value]
    if va == vb:
        return Decision("unknown", [*ca, *cb], [_say(triples[ca[-1]], ca[-1]), _say(triples[cb[-1]], cb[-1]),
                                                "equal values decide nothing [axiom]"], missing=["a difference"])
    holds = va < vb if axiom.op == "lt" else va > vb  # type: ignore[operator]
    cited = [*ca, *cb]
    return Decision("true" if holds else "false", cited,
                    [_say(triples[ca[-1]], ca[-1]), _say(triples[cb[-1]], cb[-1]),
                     f"{va:g} {'<' if va < vb else '>'} {vb:g}, so the rule {'holds' if holds else 'fails'} [axiom]"])  # type: ignore[operator]

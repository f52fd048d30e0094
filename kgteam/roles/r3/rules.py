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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kgteam.protocols.evidence import EvidenceTriple, RelationMatch
from kgteam.protocols.payloads import Axiom, Constraint, TopicMention, TriplePattern
from kgteam.roles.semantic import SemanticLayer
from kgteam.roles.semantic.mentions import is_exact_hit
from kgteam.roles.semantic.path_planning import Limits, plan_paths
from kgteam.roles.semantic.paths import NAMING_PREDICATES
from kgteam.roles.semantic.text import SAMENESS, WH_WORDS, normalise, tokenize
from kgteam.roles.statements import statement
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
_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?")
AGE_WORDS = frozenset(["older", "younger"])  # their direction depends on ages versus dates
MAX_VALUES = 300  # values read per node and hop; past it the facts are incomplete
MAX_FRONTIER = 60  # nodes a walk goes on from at each hop; past it the facts are incomplete
MIN_NAMED = 0.5  # how strongly the question's words must name each relation of a path rule


FIRST_PERSON = frozenset(["i", "my", "me", "i'm", "myself"])
NEGATIONS = frozenset(["not", "never", "no", "nor", "without", "except", "avoid", "avoids"])


def first_person(question: str, anchors: Sequence[TopicMention] = ()) -> bool:
    """The question speaks for its asker ("I", "my"), outside any name it writes ("I Remember Mama")."""
    inside = {i for a in anchors for i in range(a.start, a.end)}
    return any(t.lower in FIRST_PERSON and i not in inside for i, t in enumerate(tokenize(question)))


def _negated(question: str, start: int) -> bool:
    """A negation among the few words before the token at ``start`` ("never watch horror films")."""
    words = [t.lower for t in tokenize(question)][max(0, start - 4): start]
    return any(w in NEGATIONS or w.endswith("n't") for w in words)


def _comparative_before(question: str, start: int) -> str | None:
    words = [t.lower for t in tokenize(question)][max(0, start - 3): start]
    return next((w for w in reversed(words) if w in TIME_COMPARATIVES), None)


# how a comparison with a number reads in a verdict, for times and for amounts
_TIME_WORDS = {"lt": "before", "le": "in or before", "gt": "after", "ge": "in or after", "eq": "in"}
_AMOUNT_WORDS = {"lt": "less than", "le": "at most", "gt": "more than", "ge": "at least", "eq": "exactly"}


def compares(value: float, op: str, number: float) -> bool:
    """``value op number``: a literal, or a count, against the number a claim writes."""
    return {"lt": value < number, "le": value <= number, "gt": value > number, "ge": value >= number,
            "eq": value == number}[op]


def comparison_words(op: str, time: bool) -> str:
    return (_TIME_WORDS if time else _AMOUNT_WORDS)[op]


# an opening that asks for values ("count the films ...", "list ...", "give me ..."), and the
# prepositions that may come before a wh-word ("in which year ..."): general English only
REQUEST_WORDS = frozenset(["count", "list", "give", "name", "tell", "show", "find", "enumerate", "identify",
                           "describe", "provide", "return", "get", "please"])
LEADING_PREPOSITIONS = frozenset(["in", "on", "at", "for", "from", "by", "with", "to", "of", "during", "since"])


def question_form(question: str, anchors: Sequence[TopicMention] = ()) -> str:
    """``claim`` for a statement ("Claim: ..." or no question form), ``request`` for an input that asks
    for values (an imperative opening, or a wh-word after a preposition: no claim and no yes/no
    question, so R3 cannot read it), else ``yes_no``. A request word inside a linked name (the film
    "Count Dracula") is no request."""
    text = question.strip()
    if text.lower().startswith("claim:"):
        return "claim"
    words = [t.lower for t in tokenize(text)]
    inside = {i for a in anchors for i in range(a.start, a.end)}
    if words and words[0] in REQUEST_WORDS and 0 not in inside:
        return "yes_no" if {"whether", "if"} & set(words[1:4]) else "request"  # "tell me whether ..." is yes/no
    lead = next((i for i, w in enumerate(words) if w not in LEADING_PREPOSITIONS), len(words))
    if 0 < lead < len(words) and words[lead] in WH_WORDS and 0 not in inside:
        return "request"
    if text.endswith("?") or (words and (words[0] in AUXILIARIES or words[0] in WH_WORDS)):
        return "yes_no"
    return "claim"


def unsure_names(question: str) -> bool:
    """An input with no capital letter: its names are read in every way the KG allows (a film or a
    tag of the same words), so silence on one reading says nothing about the KG."""
    return not any(c.isupper() for c in question)


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
    return any(t.lower in SAMENESS for t in tokenize(question))


def numeric(value: str) -> float | None:
    m = _NUMBER.match(value.strip())
    return float(m.group(0)) if m else None


# ------------------------------------------------------------------------------------------ axioms

async def _pair_axioms(layer: SemanticLayer, question: str, anchor: TopicMention, *, keep: int) -> list[Axiom]:
    """One entity, two relations the question names ("did the director of X also act in it"):
    the rule holds when they share a value."""
    paths = await _ranked_paths(layer, question, [anchor], anchor, hops=1, keep=12)
    best: dict[str, Any] = {}
    for p in paths:
        s0 = p.steps[0]
        if s0.words and s0.strength >= MIN_NAMED and s0.words not in best and not p.literal_end:
            best[s0.words] = p
    named = list(best.values())
    out = []
    for i in range(len(named)):
        for j in range(i + 1, len(named)):
            a, b = named[i].steps, named[j].steps
            if a[0].predicate == b[0].predicate and a[0].direction == b[0].direction:
                continue
            text = (f"If {anchor.text}'s {_steps_text(a)} is also its {_steps_text(b)} (a shared value), "
                    f"the answer is yes")
            out.append(Axiom(text=text, form="same", steps=a, steps_b=b, anchors=[anchor.iris[0], anchor.iris[0]],
                             anchor_labels=[anchor.text, anchor.text],
                             score=round(a[0].strength + b[0].strength + 0.1 * (named[i].score + named[j].score), 4),
                             patterns=[*_patterns(anchor.iris[0], a, "?v"), *_patterns(anchor.iris[0], b, "?v")],
                             premises=[f"{anchor.text} — {_steps_text(a)} → ?v", f"{anchor.text} — {_steps_text(b)} → ?v"],
                             conclusion="a common ?v exists"))
    out.sort(key=lambda x: -(x.score or 0.0))
    return out[:keep]


def _path_claim(start: str, steps: Sequence[RelationMatch], end: str) -> str:
    """What a path says in words: one step is a triple's clause in the KG's direction ("Grisk
    flows through Quillsey" for Quillsey —^flows through→ Grisk); longer paths name their relations."""
    if len(steps) == 1:
        s = steps[0]
        return statement(start, s.label, end) if s.direction == "out" else statement(end, s.label, start)
    return f"{start} reaches {end} through {_steps_text(steps)}"


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
    """Relation paths from ``start`` that the question's words name, best first (the shared hop loop)."""
    topics = [start, *[a for a in anchors if a is not start]]
    return await plan_paths(layer, question, topics, hops=hops, limits=Limits(top_n=keep), start=[start])


def stated_times(question: str, label: str) -> int:
    """How often the question writes a relation's label word for word."""
    want = normalise(label)
    return len(re.findall(rf"(?<!\S){re.escape(want)}(?!\S)", normalise(question))) if want else 0


async def stated_relations(question: str, tools: Any) -> dict[str, int]:
    """The KG relation labels the question writes word for word, with how often."""
    try:
        hits = await tools["search_relations"](question[:500], k=20)
    except (ToolError, KeyError):
        return {}
    out = {h.label: stated_times(question, h.label) for h in hits if h.label}
    return {label: n for label, n in out.items() if n}


def _as_often_as_stated(stated: dict[str, int], paths: list[Any], *, only: bool = False) -> list[Any]:
    """Where the question writes relation labels word for word, only the paths that use each of
    them as often as written ("X has starred actors A and X has starred actors B" is two hops of
    it): a path that leaves a written relation out, or walks it more often, is not what the
    sentence says; with ``only`` (a claim, which states every relation it uses) no other relation
    may join them. Wording that matches no label word for word keeps every path."""
    if not stated:
        return paths
    return [p for p in paths if (not only or all(s.label in stated or _named_apart(s, stated) for s in p.steps))
            and all(sum(1 for s in p.steps if s.label == lab) == n for lab, n in stated.items())]


def _named_apart(step: RelationMatch, stated: dict[str, int]) -> bool:
    """A step that other words of the claim name ("*starred* in a film directed by"), not the
    words of a relation it writes out: people name a relation without writing its label."""
    return bool(step.words) and step.strength >= MIN_NAMED and not any(
        set(step.words.split()) & set(normalise(lab).split()) for lab in stated)


async def preference_axiom(tools: Any, question: str, anchors: Sequence[TopicMention]) -> Axiom | None:
    """A preference stated in the question ("I only watch films in French from before 1970: would
    I like X?"): the item is the last name the question writes; every other name is something it
    must have (or must not, after a negation), through the relation that name is reached by in
    the KG; a year after "before"/"after" bounds the item's year-valued relation."""
    named = sorted([a for a in anchors if a.iris], key=lambda a: a.start)
    if not named:
        return None
    item = named[-1]
    # numbers the KG does not know as names still bound a value ("from before 2000")
    tokens = tokenize(question)
    covered = {i for a in named for i in range(a.start, a.end)}
    named = [*named[:-1], *(TopicMention(text=t.text, start=i, end=i + 1, iris=[t.text], firm=True)
                            for i, t in enumerate(tokens) if i not in covered and _NUMBER.fullmatch(t.text))]
    if not named:
        return None
    item_iri = item.iris[0]
    try:
        schema = await tools["entity_schema"](item_iri)
    except ToolError:
        return None
    held = {(st.predicate, st.direction) for st in [*schema.outgoing, *schema.incoming]}
    constraints: list[Constraint] = []
    for c in named:
        number = numeric(c.text) if _NUMBER.fullmatch(c.text.strip()) else None
        comp = _comparative_before(question, c.start) if number is not None else None
        if number is not None and comp is not None:
            timed = [st for st in schema.outgoing
                     if await _numeric_values(tools, item_iri, [RelationMatch(predicate=st.predicate, label=st.label,
                                                                              direction="out")]) == "time"]
            if timed:
                constraints.append(Constraint(predicate=timed[0].predicate, label=timed[0].label, op=COMPARATIVES[comp],
                                              value=number, negated=_negated(question, c.start)))
            continue
        try:
            other = await tools["entity_schema"](c.iris[0])
        except ToolError:
            continue
        # the relation that reaches this name from things like the item: one the item has too
        links = [(st.predicate, "out" if st.direction == "in" else "in", st.label) for st in other.incoming + other.outgoing]
        link = next(((p, d, lab) for p, d, lab in links if (p, d) in held), None)
        if link is None:
            # no relation joins the name to the item itself: its own facts may say what the item
            # must be (a viewer named in the question, and what that viewer watches)
            constraints += await profile_constraints(tools, c, item_iri, schema, held)
            continue
        constraints.append(Constraint(predicate=link[0], direction=link[1], label=link[2], target=c.iris[0],  # type: ignore[arg-type]
                                      target_label=c.text, negated=_negated(question, c.start), firm=c.firm))
    if not constraints:
        return None
    said = "; ".join(k.text() for k in constraints)
    return Axiom(text=f"A preference holds for {item.text} when it has: {said}", form="prefer", score=1.0,
                 anchors=[item_iri], anchor_labels=[item.text], constraints=constraints,
                 premises=[f"{item.text}: {k.text()}" for k in constraints], conclusion="every condition holds")


MAX_PROFILE_VALUES = 20  # values of one profile relation read to find how they bind the item


def _negative(label: str) -> bool:
    """A relation whose name says "not" ("avoids genre", "never watches"): its values are excluded."""
    return any(t.lower in NEGATIONS or t.lower.endswith("n't") for t in tokenize(label))


async def _time_relation(tools: Any, iri: str, schema: Any) -> Any | None:
    """The entity's first outgoing relation whose values are years or dates, written whole (a
    literal, or an entity named "1954"; not a tag named "1950s")."""
    for st in schema.outgoing:
        if st.predicate in NAMING_PREDICATES:
            continue
        step = RelationMatch(predicate=st.predicate, label=st.label, direction="out")
        values = [value_of(t).strip() for t in (await _step_triples(tools, iri, step))[0]]
        if values and all(_year(v) is not None for v in values):
            return st
    return None


def _year(text: str) -> float | None:
    """A year (or a date's year) when that is the whole text."""
    if _DATE.fullmatch(text) or re.fullmatch(r"\d{4}-\d{2}-\d{2}T[\d:.]+Z?", text):
        return float(text[:4])
    n = numeric(text) if _NUMBER.fullmatch(text) else None
    return n if n is not None and n.is_integer() and 1000 <= n <= 2100 else None


KIND_SAMPLE = 200  # things like the item sampled to learn which relations such things have
KIND_SHARE = 0.1  # share of them that must have a relation for it to be a relation of the kind


async def _kind_relations(tools: Any, schema: Any) -> set[str]:
    """Outgoing relations that things like the item have (the item's own, and those of at least
    a tenth, and two or more, of a sample of the subjects of its first relation): a film's
    starring actors, even when this film lists none. A fact only one odd member has (a viewer
    joined by name with a film of that name) is not one of them."""
    own = [st.predicate for st in schema.outgoing if st.predicate not in NAMING_PREDICATES]
    out = set(own)
    if not own:
        return out
    q = (f"SELECT ?p (COUNT(DISTINCT ?s) AS ?n) WHERE {{ {{ SELECT DISTINCT ?s WHERE {{ ?s <{own[0]}> ?a }} "
         f"LIMIT {KIND_SAMPLE} }} ?s ?p ?b }} GROUP BY ?p")
    try:
        res = await tools["run_sparql"](q, limit=1000)
    except ToolError:
        return out
    counts = {r["p"].value: int(r["n"].value) for r in res.rows if "p" in r and "n" in r and r["n"].value.isdigit()}
    sampled = max(counts.get(own[0], 0), 1)
    return out | {p for p, n in counts.items() if n >= max(2, KIND_SHARE * sampled)}


async def profile_constraints(tools: Any, who: TopicMention, item_iri: str, schema: Any,
                              held: set[tuple[str, str]]) -> list[Constraint]:
    """Conditions a named one's own facts put on the item ("I am Sam": Sam —watches only films
    in→ Japanese). Each relation of theirs whose values the item's kind of thing reaches (films
    have languages) is one condition: the item's value of that relation is one of them, or none
    of them when the relation's name says "not" ("avoids genre"). Values that carry years of
    their own (a decade that starts in 1950 and ends in 1959) bound the item's year-valued
    relation instead. Relations the item's kind never reaches are not conditions on it, nor are
    relations things like the item have (a viewer joined by name with a film of that name has
    the film's)."""
    holder = who.iris[0]
    try:
        mine = await tools["entity_schema"](holder)
    except ToolError:
        return []
    out: list[Constraint] = []
    timed: Any | None = None
    kind = await _kind_relations(tools, schema) if mine.outgoing else set()
    for st in mine.outgoing:
        if st.predicate in NAMING_PREDICATES or st.predicate in kind:
            continue  # a relation things like the item have is a fact of such a thing, not a condition on it
        via = RelationMatch(predicate=st.predicate, label=st.label, direction="out")
        found, _ = await _step_triples(tools, holder, via)
        values = list(dict.fromkeys(t.object for t in found if not t.object_is_literal))[:MAX_PROFILE_VALUES]
        votes: Counter[tuple[str, str, str]] = Counter()
        spans = 0
        for v in values:
            try:
                other = await tools["entity_schema"](v)
            except ToolError:
                continue
            links = [(x.predicate, "out" if x.direction == "in" else "in", x.label)
                     for x in [*other.incoming, *other.outgoing]
                     if x.predicate != st.predicate and x.predicate not in NAMING_PREDICATES]
            link = next(((p, d, lab) for p, d, lab in links if (p, d) in held), None)
            if await _time_relation(tools, v, other) is not None:
                spans += 1  # its own years say what it covers: more than a name it shares with a tag
            elif link is not None:
                votes[link] += 1
        common = {"holder": holder, "holder_label": who.text, "via": st.predicate, "via_label": st.label,
                  "negated": _negative(st.label), "firm": who.firm}
        if spans and spans >= sum(votes.values()):
            timed = timed or await _time_relation(tools, item_iri, schema)
            if timed is not None:
                out.append(Constraint(predicate=timed.predicate, label=timed.label, op="within", **common))
        elif votes:
            (pred, direction, label), _n = votes.most_common(1)[0]
            out.append(Constraint(predicate=pred, direction=direction, label=label, **common))  # type: ignore[arg-type]
    return out


async def candidate_axioms(layer: SemanticLayer, question: str, anchors: Sequence[TopicMention], *,
                           hops: int = 2, keep: int = 4) -> list[Axiom]:
    """The rules that could decide the question, best first (each becomes a branch of the search)."""
    if question_form(question) != "claim" and first_person(question, anchors):
        preference = await preference_axiom(layer.tools, question, anchors)
        if preference is not None:
            return [preference]
    # the claim's subject first: a rule reads from the entity the sentence is about
    firm = sorted([a for a in anchors if a.iris and a.firm], key=lambda a: a.start)
    if not firm:
        return []
    if len(firm) == 1 and has_sameness(question):
        pairs = await _pair_axioms(layer, question, firm[0], keep=keep)
        if pairs:
            return pairs
    if len(firm) == 1 and (value := _stated_value(question, firm[0])) is not None:
        # "X wears number 14": the value the claim names is the other end, an entity of that name
        # or a literal
        at = len(tokenize(question))
        try:
            hits = [h.iri for h in await layer.tools["search_entities"](value, k=3) if is_exact_hit(h, value)]
        except (ToolError, KeyError):
            hits = []
        end = TopicMention(text=value, start=at, end=at, iris=hits or [value])
        found = await _axioms_for(layer, question, [firm[0], end], hops=hops, keep=keep, literal_end=not hits)
        if found:
            return found
    if len(firm) == 1:
        # a lower-case name ("has tags tony burton") may be the other end: each is tried, and only a
        # path the question's words name, to exactly that entity, makes a rule
        stated = await stated_relations(question, layer.tools)
        loose = sorted([a for a in anchors if a.iris and not a.firm and not _in_stated_label(question, a, stated)],
                       key=lambda a: (-(a.end - a.start), a.start))
        out: list[Axiom] = []
        for other in loose[:2]:  # a lower-case end takes part in path rules only (no counting a tag)
            out += [a for a in await _axioms_for(layer, question, [firm[0], other], hops=hops, keep=keep,
                                                 stated=stated) if a.form == "path"]
        out.sort(key=lambda a: -(a.score or 0.0))
        return out[:keep]
    return await _axioms_for(layer, question, firm, hops=hops, keep=keep)


# closed-class words that add no relation between two names ("X's birthplace *is not* Y")
_NO_RELATION = frozenset(["a", "an", "the", "not", "also", "himself", "herself", "itself", "themselves",
                          "still", "indeed", "really", "actually", "in", "fact", "none", "other", "than"])


def through_noun(question: str, first: TopicMention, second: TopicMention) -> bool:
    """The claim reaches ``second`` through a thing it names by a noun of ``first``: "X's *master*
    was an apprentice of Y", "the *maker* of X started Y". A rule of one hop skips that thing."""
    tokens = tokenize(question)
    words = [t.lower for t in tokens]
    if first.end < len(words) - 1 and words[first.end] in ("'s", "'") and words[first.end + 1].isalpha():
        between = words[first.end + 2: second.start]
    elif first.start >= 3 and words[first.start - 1] == "of" and words[first.start - 3] in ("the", "a", "an") \
            and words[first.start - 2].isalpha():
        between = words[first.end: second.start]
    else:
        return False
    return any(w.isalpha() and w not in AUXILIARIES and w not in _NO_RELATION and w not in NEGATIONS
               for w in between)


def _in_stated_label(question: str, anchor: TopicMention, stated: dict[str, int]) -> bool:
    """The lower-case mention is a word of a relation label the question writes ("X has starred
    *actors* Bo Hopkins"): part of the relation's name, not an entity."""
    words = [t.lower for t in tokenize(question)]
    for label in stated:
        want = [t.lower for t in tokenize(label)]
        n = len(want)
        for i in range(len(words) - n + 1):
            if words[i:i + n] == want and i <= anchor.start and anchor.end <= i + n:
                return True
    return False


def _stated_value(question: str, anchor: TopicMention) -> str | None:
    """A number the question writes outside the anchor's name (a claimed value), or None."""
    words = [t.text for i, t in enumerate(tokenize(question)) if not anchor.start <= i < anchor.end]
    numbers = [w for w in words if _NUMBER.fullmatch(w)]
    return numbers[-1] if len(numbers) == 1 else None


async def _axioms_for(layer: SemanticLayer, question: str, firm: list[TopicMention], *, hops: int,
                      keep: int, literal_end: bool = False, stated: dict[str, int] | None = None) -> list[Axiom]:
    """Rules over the firm anchors; ``stated``: the relation labels the question writes, when the
    caller has read them already."""
    first = firm[0]
    second = firm[1] if len(firm) > 1 else None
    comp = comparative(question)
    out: list[Axiom] = []
    if second is None and has_sameness(question):
        return await _pair_axioms(layer, question, first, keep=keep)
    if second is not None and (comp or has_sameness(question)):
        paths = await _ranked_paths(layer, question, firm, first, hops=1, keep=12)
        timely = comp in TIME_COMPARATIVES
        for p in paths[: keep * 3]:
            steps = p.steps
            named = bool(steps[0].words) and steps[0].strength >= MIN_NAMED
            if comp:
                op = COMPARATIVES[comp]
                numbers = await _numeric_values(layer.tools, first.iris[0], steps) if (p.literal_end or timely) else None
                if timely and not numbers:
                    continue  # "older", "before": only a relation with dates or numbers can decide it
                if numbers == "quantity" and comp in AGE_WORDS:
                    op = "gt" if op == "lt" else "lt"  # an older thing has the larger age, the smaller year
                form = "compare" if numbers else "count"
                if form == "count" and not named:
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
            elif named:
                what = _steps_text(steps)
                out.append(Axiom(text=f"If {first.text} and {second.text} have the same {what}, the answer is yes",
                                 form="same", steps=steps, score=round(steps[0].strength + 0.1 * p.score, 4),
                                 anchors=[first.iris[0], second.iris[0]], anchor_labels=[first.text, second.text],
                                 patterns=[*_patterns(first.iris[0], steps, "?v"), *_patterns(second.iris[0], steps, "?v")],
                                 premises=[f"{first.text} — {what} → ?v", f"{second.text} — {what} → ?v"],
                                 conclusion="a common ?v exists"))
    elif second is not None:
        if stated is None:
            stated = await stated_relations(question, layer.tools)
        hop_between = len(firm) == 2 and through_noun(question, first, firm[1])
        out = await _path_axioms(layer, question, firm, stated, hops=hops, keep=keep, literal_end=literal_end,
                                 hop_between=hop_between)
        if not out and len(firm) == 2 and not literal_end and not hop_between:
            # "Corlis is the capital of Havenmoor": no path the words name leaves the entity named
            # first; the chain starts from the other one, where the relation is stored
            # (one step of a relation with one value per entity, as a capital: a longer chain, or a
            # many-valued relation, from the far end reaches too much to decide the claim)
            out = [a.model_copy(update={"sole_value": True})
                   for a in await _path_axioms(layer, question, [firm[1], first], stated, hops=1, keep=keep,
                                               literal_end=False, hop_between=False)
                   if len(a.steps) == 1 and await one_valued(layer.tools, a.steps[0])]
    out.sort(key=lambda a: -(a.score or 0.0))
    return out[:keep]


async def one_valued(tools: Any, step: RelationMatch) -> bool:
    """No entity of the KG holds two values of the step's relation in its direction (a capital, a
    birthplace); a relation used by fewer than three entities shows nothing either way."""
    p = f"<{step.predicate}>"
    if step.direction == "out":
        one, twice_q = "?s", f"ASK {{ ?s {p} ?o . ?s {p} ?o2 FILTER(?o != ?o2) }}"
    else:
        one, twice_q = "?o", f"ASK {{ ?s {p} ?o . ?s2 {p} ?o FILTER(?s != ?s2) }}"
    try:
        used = await tools["run_sparql"](f"SELECT (COUNT(DISTINCT {one}) AS ?n) WHERE {{ ?s {p} ?o }}")
        twice = await tools["run_sparql"](twice_q)
    except (ToolError, KeyError):
        return False
    n = numeric(str(used.rows[0]["n"].value)) if used.rows and "n" in used.rows[0] else None
    return bool(n and n >= 3) and not twice.boolean


async def _path_axioms(layer: SemanticLayer, question: str, firm: list[TopicMention], stated: dict[str, int], *,
                       hops: int, keep: int, literal_end: bool, hop_between: bool) -> list[Axiom]:
    """Path rules from ``firm[0]`` that reach every other anchor through relations the words name."""
    first = firm[0]
    paths = _as_often_as_stated(stated, await _ranked_paths(layer, question, firm, first, hops=hops,
                                                            keep=keep * 2), only=question_form(question) == "claim")
    out: list[Axiom] = []
    for p in paths:
        named = all(s.words and s.strength >= MIN_NAMED for s in p.steps) and p.score > 0
        if hop_between and len(p.steps) < 2:
            continue  # "X's master was ... of Y": the thing between is no hop to skip
        if p.literal_end != literal_end or not (stated or named):
            continue  # a rule whose relations the question does not name (word for word, or by
            # meaning) decides nothing
        what = _steps_text(p.steps)
        targets = firm[1:]  # "X acted in both A and B": every other anchor must be reached
        names = " and ".join(t.text for t in targets)
        out.append(Axiom(text=f"If {_path_claim(first.text, p.steps, names)}, the claim holds",
                         form="path", steps=p.steps, score=round(p.score, 4),
                         anchors=[first.iris[0], *(t.iris[0] for t in targets)],
                         anchor_labels=[first.text, *(t.text for t in targets)],
                         patterns=[q for t in targets for q in _patterns(first.iris[0], p.steps, t.iris[0])],
                         premises=[f"{first.text} — {what} → {t.text}" for t in targets],
                         conclusion=_path_claim(first.text, p.steps, names)))
    return out


# ------------------------------------------------------------------------------------------ facts

async def _numeric_values(tools: Any, iri: str, steps: Sequence[RelationMatch]) -> str | None:
    """``"time"`` when the path's values from ``iri`` read as years or dates, ``"quantity"`` when
    they read as other numbers (an age, a count), else None."""
    if len(steps) != 1:
        return None
    values = [value_of(t) for t in (await _step_triples(tools, iri, steps[0]))[0]]
    numbers = [numeric(v) for v in values]
    if not values or any(n is None for n in numbers):
        return None
    timely = all(_DATE.match(v.strip()) or (n is not None and n.is_integer() and 1000 <= n <= 2100)
                 for v, n in zip(values, numbers, strict=True))
    return "time" if timely else "quantity"


def value_of(t: EvidenceTriple) -> str:
    return t.object if t.object_is_literal else (t.object_label or t.object)


async def _step_triples(tools: Any, iri: str, step: RelationMatch) -> tuple[list[EvidenceTriple], bool]:
    """The step's triples at ``iri`` and whether that is all of them (False: cut at MAX_VALUES)."""
    try:
        rows = await tools["neighbors"](iri, predicates=[step.predicate], direction=step.direction,
                                        limit=MAX_VALUES + 1)
    except ToolError:
        return [], True
    found = [t for t in as_evidence(rows) if t.predicate == step.predicate]
    return found[:MAX_VALUES], len(found) <= MAX_VALUES


def _is_iri(term: str) -> bool:
    return term.startswith(("http://", "https://", "urn:"))


def reverse_steps(steps: Sequence[RelationMatch]) -> list[RelationMatch]:
    """The same path walked from its other end."""
    return [st.model_copy(update={"direction": "in" if st.direction == "out" else "out"}) for st in reversed(steps)]


def _far(t: EvidenceTriple, iri: str) -> str:
    return t.object if t.subject == iri else t.subject


async def walk(tools: Any, start: str, steps: Sequence[RelationMatch]) -> tuple[list[EvidenceTriple], bool]:
    """Every triple on the path's walks from ``start``, and whether none was left unread."""
    frontier = [start]
    out: list[EvidenceTriple] = []
    complete = True
    for step in steps:
        nxt: list[str] = []
        complete = complete and len(frontier) <= MAX_FRONTIER
        for node in frontier[:MAX_FRONTIER]:
            found, whole = await _step_triples(tools, node, step)
            complete = complete and whole
            for t in found:
                out.append(t)
                if not t.object_is_literal:
                    nxt.append(_far(t, node))
        frontier = list(dict.fromkeys(nxt))
    return out, complete


async def premise_facts(tools: Any, axiom: Axiom) -> tuple[list[EvidenceTriple], bool]:
    """The triples the rule's premises read, and whether they are all of them (a verdict other
    than a found match needs every value: see ``grounded_answerer``)."""
    if axiom.form == "prefer":
        facts: list[EvidenceTriple] = []
        complete = True
        for k in axiom.constraints:
            found, whole = await _step_triples(tools, axiom.anchors[0], RelationMatch(
                predicate=k.predicate, label=k.label, direction=k.direction))
            facts += found
            complete = complete and whole
            if k.holder is not None and k.via is not None:
                mine, whole = await _step_triples(tools, k.holder, RelationMatch(
                    predicate=k.via, label=k.via_label, direction="out"))
                facts += mine
                complete = complete and whole
                for t in mine if k.op == "within" else []:
                    facts += await _numbers_of(tools, t.object)
        return facts, complete
    if not axiom.anchors:
        return [], True
    if axiom.form in ("literal", "tally"):
        return await walk(tools, axiom.anchors[0], axiom.steps)
    if axiom.form == "path":
        facts, complete = await walk(tools, axiom.anchors[0], axiom.steps)
        back = reverse_steps(axiom.steps)
        for target in axiom.anchors[1:]:  # from the other end too: "false" needs both ends to speak
            if _is_iri(target):
                more, _ = await walk(tools, target, back[:1])
                facts += more
        return facts, complete
    a, whole_a = await walk(tools, axiom.anchors[0], axiom.steps)
    b, whole_b = await walk(tools, axiom.anchors[1], axiom.steps_b or axiom.steps)
    return [*a, *b], whole_a and whole_b


async def _numbers_of(tools: Any, iri: str) -> list[EvidenceTriple]:
    """The entity's facts whose values are numbers (a decade's first and last year)."""
    try:
        rows = await tools["neighbors"](iri, direction="out", limit=MAX_VALUES)
    except ToolError:
        return []
    return [t for t in as_evidence(rows) if t.object_is_literal and numeric(t.object) is not None]


def as_evidence(rows: Sequence[Any]) -> list[EvidenceTriple]:
    """Tool triples (neighbors, similar_triples) as plain evidence triples."""
    return [EvidenceTriple(**r.model_dump(include=set(EvidenceTriple.model_fields))) for r in rows]


async def neighbourhood(tools: Any, iri: str, limit: int = 40) -> list[EvidenceTriple]:
    try:
        return as_evidence(await tools["neighbors"](iri, limit=limit))
    except ToolError:
        return []


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


def _cites(positions: Sequence[int]) -> str:
    return "".join(f"[t{i}]" for i in dict.fromkeys(positions))


def _state(t: EvidenceTriple) -> str:
    return statement(t.subject_label or t.subject, t.predicate_label or t.predicate, t.object_label or t.object)


def _say(t: EvidenceTriple, i: int) -> str:
    return f"{t.subject_label or t.subject} — {t.predicate_label or t.predicate} → {t.object_label or t.object} [t{i}]"


def _profile_holds(k: Constraint, reached: dict[str, list[int]], triples: Sequence[EvidenceTriple]
                   ) -> tuple[bool, list[int]] | None:
    """Does the item's value (``reached``) meet the holder's values: one of them, or within the
    span of years one of them carries? With the triples that show it; None when the holder's
    values (or their spans) are not among the listed triples."""
    allowed, bound = _reach(triples, k.holder or "", [RelationMatch(predicate=k.via or "", label=k.via_label,
                                                                     direction="out")])
    if not bound:
        return None
    if k.op != "within":
        common = [v for v in allowed if v in reached]
        if common:
            return True, [*allowed[common[0]], *reached[common[0]]]
        return False, [*(c[-1] for c in list(reached.values())[:2]), *(c[-1] for c in list(allowed.values())[:3])]
    spans: dict[str, list[tuple[float, int]]] = {}
    for i, t in enumerate(triples):
        if t.subject in allowed and t.object_is_literal and (n := numeric(t.object)) is not None:
            spans.setdefault(t.subject, []).append((n, i))
    if not spans:
        return None
    values = [(n, c) for c in reached.values() if (n := _year(value_of(triples[c[-1]]).strip())) is not None]
    if not values:
        return None
    for n, chain in values:
        for v, bounds in spans.items():
            low, high = min(b for b, _ in bounds), max(b for b, _ in bounds)
            if low <= n <= high:
                return True, [*chain, *allowed[v], *(i for _, i in bounds)]
    return False, [values[0][1][-1], *(i for bounds in spans.values() for _, i in bounds)]


def _decide_preference(axiom: Axiom, triples: Sequence[EvidenceTriple]) -> Decision:
    item = axiom.anchors[0]
    cited: list[int] = []
    lines: list[str] = []
    unknown: list[str] = []
    for k in axiom.constraints:
        step = RelationMatch(predicate=k.predicate, label=k.label, direction=k.direction)
        reached, bound = _reach(triples, item, [step])
        if not bound:
            unknown.append(f"{axiom.anchor_labels[0]}'s {k.label}")
            continue
        if k.holder is not None:
            found = _profile_holds(k, reached, triples)
            if found is None:
                unknown.append(f"{k.holder_label}'s {k.via_label}")
                continue
            holds, used = found
        elif k.target is not None:
            holds = k.target in reached
            used = reached[k.target] if holds else [c[-1] for c in list(reached.values())[:2]]
        else:
            values = [(numeric(value_of(triples[c[-1]])), c) for c in reached.values()]
            values = [(v, c) for v, c in values if v is not None]
            if not values:
                unknown.append(f"{axiom.anchor_labels[0]}'s {k.label} as a number")
                continue
            v, c = values[0]
            holds = v < k.value if k.op == "lt" else v > k.value  # type: ignore[operator]
            used = c
        cited += used
        lines += [_say(triples[i], i) for i in used]
        if holds == k.negated:
            if not k.firm and not holds:  # an everyday word the item lacks is no evidence against it
                unknown.append(f"whether '{k.target_label}' is a condition at all")
                continue
            return Decision("false", cited, [*lines, f"{axiom.anchor_labels[0]}: the condition '{k.text()}' fails "
                                                     f"{_cites(used)} [axiom]"])
    if unknown:
        return Decision("unknown", cited, lines, missing=unknown)
    return Decision("true", cited, [*lines, f"{axiom.anchor_labels[0]} meets every condition of the preference "
                                            f"{_cites(cited)} [axiom]"])


def _decide_value(axiom: Axiom, triples: Sequence[EvidenceTriple]) -> Decision:
    """A literal rule: some value of the anchor's relation compares with the claim's number as the
    claim says; a tally rule: how many values it has does. The counted set is the evidence."""
    a, label = axiom.anchors[0], axiom.anchor_labels[0] if axiom.anchor_labels else axiom.anchors[0]
    reached, bound = _reach(triples, a, axiom.steps)
    if not bound or axiom.op is None or axiom.value is None:
        return Decision("unknown", missing=[axiom.premises[0] if axiom.premises else f"{label}'s facts"])
    number = f"{axiom.value:g}"
    last = axiom.steps[-1]
    if axiom.form == "tally":
        n = len(reached)
        holds = compares(n, axiom.op, axiom.value)
        cited = list(dict.fromkeys(c[-1] for c in reached.values()))
        names = [triples[i].subject_label or triples[i].subject if last.direction == "in" else
                 triples[i].object_label or triples[i].object for i in cited]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        if last.direction == "in" and len(axiom.steps) == 1:
            said = statement(shown, last.label, label).replace(f"{shown} is ", f"{shown} {'are' if n > 1 else 'is'} ", 1)
        else:
            said = f"{label} has {n} '{_steps_text(axiom.steps)}': {shown}"
        verdict = f"{n} in all, which is {'' if holds else 'not '}{comparison_words(axiom.op, False)} {number}"
        return Decision("true" if holds else "false", cited,
                        [*(_say(triples[i], i) for i in cited), f"so {said}: {verdict} {_cites(cited)} [axiom]"])
    values = [(numeric(value_of(triples[c[-1]])), c) for c in reached.values()]
    values = [(v, c) for v, c in values if v is not None]
    if not values:
        return Decision("unknown", missing=[f"{label}'s {last.label} as a number"])
    timely = all(v.is_integer() and 1000 <= v <= 2100 for v, _ in values)
    good = [(v, c) for v, c in values if compares(v, axiom.op, axiom.value)]
    chosen = good[:1] if good else values[:3]
    cited = list(dict.fromkeys(i for _, c in chosen for i in c))
    facts = " and ".join(_state(triples[i]) for i in cited)
    words = comparison_words(axiom.op, timely)
    if good:
        tail = "" if axiom.op == "eq" else f", which is {words} {number}"
    else:
        tail = f", not {number}" if axiom.op == "eq" else f", which is not {words} {number}"
    return Decision("true" if good else "false", cited,
                    [*(_say(triples[i], i) for i in cited), f"so {facts}{tail} {_cites(cited)} [axiom]"])


def negated(decision: Decision) -> Decision:
    """A negated claim's verdict: the rule's, the other way; the facts and their reading stay."""
    flip = {"true": "false", "false": "true"}
    return Decision(flip.get(decision.verdict, decision.verdict), decision.cited, decision.reasoning, decision.missing)


def decide(axiom: Axiom, triples: Sequence[EvidenceTriple]) -> Decision:
    """The axiom's verdict on the listed triples alone (never the KG): True/False only when every
    premise is bound to listed triples."""
    if axiom.form is None or not axiom.anchors:
        return Decision("unknown", missing=["the rule has no checkable premises"])
    if axiom.form == "prefer":
        return _decide_preference(axiom, triples)
    if axiom.form in ("literal", "tally"):
        return _decide_value(axiom, triples)
    a = axiom.anchors[0]
    reached_a, bound_a = _reach(triples, a, axiom.steps)
    label_a = axiom.anchor_labels[0] if axiom.anchor_labels else a
    if not bound_a:
        return Decision("unknown", missing=[axiom.premises[0] if axiom.premises else f"{label_a}'s facts"])
    if axiom.form == "path":
        targets = list(zip(axiom.anchors[1:], axiom.anchor_labels[1:], strict=False))
        missing = [(b, label) for b, label in targets if b not in reached_a]
        if not missing:
            cited = [i for b, _ in targets for i in reached_a[b]]
            ends = [i for b, _ in targets for i in (reached_a[b][0], reached_a[b][-1])]  # they touch the anchors
            said = " and ".join(_state(triples[i]) for i in dict.fromkeys(cited))  # the facts, in their direction
            return Decision("true", cited, [*(_say(triples[i], i) for i in dict.fromkeys(cited)),
                                            f"so {said} {_cites(ends)} [axiom]"])
        # closed world on the relation from both ends (as the claim generator grades): the other end
        # must hold the path's last relation too, else the KG is silent on it, not against it
        silent = [label for b, label in missing if _is_iri(b) and not _reach(triples, b, reverse_steps(axiom.steps)[:1])[1]]
        if silent and not (axiom.sole_value and len(reached_a) == 1):
            return Decision("unknown", missing=[f"the KG has no '{axiom.steps[-1].label}' fact on {silent[0]}"])
        chains = list(reached_a.values())[:3]
        shown = list(dict.fromkeys(i for c in chains for i in c))
        starts = list(dict.fromkeys(c[0] for c in chains))  # the triples that touch the first anchor
        said = " and ".join(_state(triples[i]) for i in shown)
        more = f" (and {len(reached_a) - len(chains)} more)" if len(reached_a) > len(chains) else ""
        return Decision("false", shown, [*(_say(triples[i], i) for i in shown),
                                         f"the KG states{'' if more else ' only'} that {said}{more}, not that "
                                         f"{axiom.conclusion} {_cites(starts)} [axiom]"])
    b = axiom.anchors[1]
    reached_b, bound_b = _reach(triples, b, axiom.steps_b or axiom.steps)
    if not bound_b:
        return Decision("unknown", missing=[axiom.premises[1] if len(axiom.premises) > 1 else "the second anchor's facts"])
    if axiom.form == "same":
        common = [v for v in reached_a if v in reached_b]
        if common:
            cited = [*reached_a[common[0]], *reached_b[common[0]]]
            return Decision("true", cited, [*(_say(triples[i], i) for i in cited),
                                            f"{triples[cited[-1]].object_label or common[0]} is a common value of "
                                            f"{label_a} and {axiom.anchor_labels[1]}: the rule holds {_cites(cited)} [axiom]"])
        cited = [c[-1] for c in list(reached_a.values())[:2]] + [c[-1] for c in list(reached_b.values())[:2]]
        return Decision("false", cited, [*(_say(triples[i], i) for i in cited),
                                         f"{label_a} and {axiom.anchor_labels[1]} have no value in common: the rule "
                                         f"does not hold {_cites(cited)} [axiom]"])
    if axiom.form == "count":
        na, nb = len(reached_a), len(reached_b)
        holds = na < nb if axiom.op == "lt" else na > nb
        cited = [c[-1] for c in list(reached_a.values())[:2]] + [c[-1] for c in list(reached_b.values())[:2]]
        return Decision("true" if holds else "false", cited,
                        [*(_say(triples[i], i) for i in cited),
                         f"{label_a} has {na}, {axiom.anchor_labels[1]} has {nb} {_cites(cited)} [axiom]"])
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
                     f"{value_of(triples[ca[-1]])} {'<' if va < vb else '>'} {value_of(triples[cb[-1]])}, so the rule "  # type: ignore[operator]
                     f"{'holds' if holds else 'fails'} {_cites(cited)} [axiom]"])

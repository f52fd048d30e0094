"""Payload kinds exchanged on the conversation bus.

Every payload has a literal ``kind`` so routing, persistence and replay can recover the type
from JSON alone. Keep payloads small and explicit; add fields, never repurpose them. Values a
route may test (phases, outcomes, statuses) are ``Literal`` types, so a team file that routes on
a value the payload cannot take is rejected when it is loaded, not silently never matched.
Every payload has a one-line :meth:`Payload.summary` that the trace, the chat and the web UI
show. Plugins may add kinds with :func:`register_payload`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, SerializeAsAny, ValidationInfo, field_validator, model_validator

from kgteam.protocols.evidence import Evidence, EvidenceDocument, EvidenceTriple, RelationMatch, Usage
from kgteam.protocols.graph_template import GraphTemplate
from kgteam.protocols.query_graph import QueryGraph

SUMMARY_CHARS = 110


def shorten(text: str, limit: int = SUMMARY_CHARS) -> str:
    """One line, at most ``limit`` characters (an ellipsis marks the cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Payload(BaseModel):
    """Base of all payloads; ``kind`` is the routing key."""

    kind: str

    def summary(self) -> str:
        """A one-line gist for people watching the team work (trace, chat, web UI)."""
        data = self.model_dump(exclude={"kind"})
        return shorten(", ".join(f"{k}={v}" for k, v in data.items()))


RouteName = Literal["kg", "web", "both"]


class Question(Payload):
    kind: Literal["question"] = "question"
    text: str
    original_text: str | None = None  # the user's words before the contextualizer rewrote them
    route: RouteName | None = None  # set when a router hands the question to a sub-team

    def summary(self) -> str:
        rewritten = self.original_text and self.original_text.strip() != self.text.strip()
        note = f"  [rewritten from: {shorten(self.original_text or '', 50)}]" if rewritten else ""
        return shorten(self.text) + note


class RouteDecision(Payload):
    """Where the answer should come from: the KG, the web (a document search), or both."""

    kind: Literal["route_decision"] = "route_decision"
    route: RouteName
    reason: str = ""
    question: str = ""
    signals: dict[str, Any] = Field(default_factory=dict)  # what the deterministic router saw
    fallback: bool = False  # a later role re-routed here (the KG had no answer)

    def summary(self) -> str:
        return shorten(f"{self.route}: {self.reason}")


class TriplePattern(BaseModel):
    """One pattern such as ``<?bridge, designed by, Ava Lindqvist>``; ``?x`` marks an unknown."""

    subject: str
    predicate: str
    object: str


class TriplePatterns(Payload):
    kind: Literal["triple_patterns"] = "triple_patterns"
    patterns: list[TriplePattern]

    def summary(self) -> str:
        return shorten("; ".join(f"<{t.subject}, {t.predicate}, {t.object}>" for t in self.patterns))


AnswerTypeName = Literal["resource", "number", "date", "boolean", "string"]


class AnswerType(Payload):
    kind: Literal["answer_type"] = "answer_type"
    type: AnswerTypeName
    is_list: bool = True

    def summary(self) -> str:
        return f"{self.type}{' list' if self.is_list else ''}"


class KGMapped(BaseModel):
    """A confidence that went through the KG's own map (fitted on its examples) and nothing after:
    the value before the map, and the map's name. The answer reports both, and the playbook's
    shipped map is not applied on top. A confidence changed after the map (a product, a minimum
    with another) carries none."""

    raw: float
    name: str


class ReadingSignals(BaseModel):
    """What the reading behind an answer knows about itself: the features its confidence is made
    of (a signal map, ``kgteam.protocols.calibration.SignalWeights``), shown so a person can see why."""

    score: float = Field(0.0, ge=0.0, le=1.0)  # the scorer's confidence before the prior
    shape: str = "chain"
    unread: list[str] = Field(default_factory=list)  # content words of the question no part of the reading read
    unnamed: int = Field(0, ge=0)  # relations walked that no word of the question named
    steps: int = Field(0, ge=0)
    described: bool = False  # the topic was a description ("the largest state"), read first
    inferred: bool = False  # a relation chosen by a gradable adjective's dimensions, not named
    values: int = Field(0, ge=0)


class GraphReading(BaseModel):
    """A question read into a query graph (a count, a superlative, a yes/no, a join of two
    entities ...): what the decision maker runs instead of filling a chain template."""

    graph: QueryGraph
    confidence: float = Field(0.0, ge=0.0, le=1.0)
    explanation: str = ""
    matches: list[RelationMatch] = Field(default_factory=list)
    key: str = ""
    evidence_graph: QueryGraph | None = None  # the set a count or an ordering ran over
    guess_only: bool = False  # no reading of the question fits the kind it asks for
    kg_map: KGMapped | None = None  # set when ``confidence`` is a path's, through the KG's own map
    unread: list[str] = Field(default_factory=list)  # the question's content words this reading left unread
    described: bool = False  # its topic is a description read first ("the largest state")
    inferred: bool = False  # a relation it walks was chosen by an adjective's dimensions, not named


class SparqlTemplate(Payload):
    """A SPARQL skeleton with placeholders (``<E0>``, ``<R0>`` ...), never real IRIs; or, for a
    question that is no chain, the query graph read from it (``reading``)."""

    kind: Literal["sparql_template"] = "sparql_template"
    template: str
    entity_placeholders: list[str] = Field(default_factory=list)
    relation_placeholders: list[str] = Field(default_factory=list)
    reading: GraphReading | None = None
    graph: GraphTemplate | None = None  # the model's query-graph template, for the decision maker to fill

    def summary(self) -> str:
        return shorten(self.template)


class Candidate(BaseModel):
    iri: str
    label: str
    score: float = 0.0
    source: str = ""  # "search", "traversal:out", "llm", "fallback" (display only)


def _labels(cands: list[Candidate], n: int = 3) -> str:
    shown = ", ".join(c.label or c.iri for c in cands[:n])
    return shown + (f" (+{len(cands) - n})" if len(cands) > n else "")


class EntityCandidates(Payload):
    kind: Literal["entity_candidates"] = "entity_candidates"
    mention: str
    placeholder: str | None = None
    candidates: list[Candidate]

    def summary(self) -> str:
        return shorten(f"{self.mention!r} → {_labels(self.candidates)}")


class RelationCandidates(Payload):
    kind: Literal["relation_candidates"] = "relation_candidates"
    phrase: str
    placeholder: str | None = None
    candidates: list[Candidate]

    def summary(self) -> str:
        return shorten(f"{self.phrase!r} → {_labels(self.candidates)}")


Direction = Literal["out", "in"]


class RelationBinding(BaseModel):
    """A relation placeholder filled with a KG predicate, in the direction it was observed."""

    placeholder: str
    iri: str
    direction: Direction = "out"


class CandidateQuery(BaseModel):
    """One filling of a template: the query, what filled it, and what it returned."""

    sparql: str
    key: str = ""  # identifies the filling, so a retry can exclude what was tried
    entity: str | None = None  # the IRI bound to the entity placeholder
    relations: list[RelationBinding] = Field(default_factory=list)
    score: float | None = None  # the deterministic scorer's score of this filling
    confidence: float | None = None  # a query graph reading's own confidence
    row_count: int | None = None
    error: str | None = None


class QueryCandidates(Payload):
    kind: Literal["query_candidates"] = "query_candidates"
    queries: list[CandidateQuery]
    selected: int | None = None

    def summary(self) -> str:
        sel = f", selected #{self.selected}" if self.selected is not None else ""
        return f"{len(self.queries)} queries{sel}"


QueryOutcome = Literal["ok", "empty_result", "no_entity", "query_error"]


class QueryResult(Payload):
    kind: Literal["query_result"] = "query_result"
    sparql: str
    variables: list[str] = Field(default_factory=list)
    rows: list[dict[str, Any]] = Field(default_factory=list)
    outcome: QueryOutcome = "ok"
    error: str | None = None  # a readable message when the outcome is not "ok"
    triples: list[EvidenceTriple] = Field(default_factory=list)  # the facts the rows rest on
    reading: GraphReading | None = None  # the query graph reading that ran, when one did

    @model_validator(mode="after")
    def _empty_is_not_ok(self) -> QueryResult:
        if self.outcome == "ok" and not self.rows:
            self.outcome = "empty_result"
        return self

    def summary(self) -> str:
        if self.outcome == "ok":
            return f"{len(self.rows)} rows"
        return f"{self.outcome}" + (f": {shorten(self.error, 60)}" if self.error else "")


class RankedPath(BaseModel):
    """A relation path from a topic entity, scored against the question, with its end values."""

    entity: str
    mention: str
    steps: list[RelationMatch]
    score: float
    support: float = 0.0  # the weakest named step's strength
    answers: list[dict[str, Any]] = Field(default_factory=list)  # SPARQL JSON terms of the end values
    sparql: str = ""
    triple_ids: list[int] = Field(default_factory=list)  # the retrieved triples that walk this path (KERAG)
    # set when the KG's trained reader scored this path: the bank examples that taught it (maybe none)
    learned_from: list[str] | None = None
    # the KG's own confidence map (Platt a, b on the logit), refit on its examples, cross-fitted
    calibration: tuple[float, float] | None = None
    calibration_name: str | None = None  # that map's name, which the answer reports

    @property
    def hops(self) -> int:
        return len(self.steps)

    @property
    def key(self) -> str:
        return "|".join([self.entity, *(f"{s.direction}|{s.predicate}" for s in self.steps)])

    def explain(self) -> str:
        return "; ".join(s.explain() for s in self.steps)


class RelationPaths(Payload):
    """The semantic layer's reading of a question: ranked paths, best first, and its confidence."""

    kind: Literal["relation_paths"] = "relation_paths"
    question: str = ""
    mention: str | None = None
    paths: list[RankedPath] = Field(default_factory=list)
    confidence: float = 0.0
    margin: float = 0.0
    kg_map: KGMapped | None = None  # set when ``confidence`` is the best path's, through the KG's own map
    # how sure the topic itself is: 1 for a name, less for a described one ("the largest state")
    certainty: float = Field(1.0, ge=0.0, le=1.0)
    unread: list[str] = Field(default_factory=list)  # the question's content words the best path left unread
    described: bool = False  # the topic is a description read first
    described_as: str | None = None  # how it was read ("the largest state = alaska (highest area ...)")

    @property
    def best(self) -> RankedPath | None:
        return self.paths[0] if self.paths else None

    def of_length(self, hops: int) -> list[RankedPath]:
        return [p for p in self.paths if p.hops == hops]

    def confidence_of(self, key: str) -> float:
        """How sure the scorer is of the path ``key``: its lead over the best rival with other answers."""
        path = next((p for p in self.paths if p.key == key), None)
        if path is None:
            return 0.0
        return path_confidence(path, self.paths) * self.certainty

    def belief_of(self, key: str) -> tuple[float, KGMapped | None]:
        """``confidence_of(key)`` and whether it went through the KG's own map (see ``path_belief``)."""
        path = next((p for p in self.paths if p.key == key), None)
        if path is None:
            return 0.0, None
        belief, kg_map = path_belief(path, self.paths)
        if self.certainty < 1.0:  # a product is no longer the map's value
            return round(belief * self.certainty, 4), None
        return belief, kg_map

    def summary(self) -> str:
        best = self.best
        if best is None:
            return "no relation path found"
        return shorten(f"{best.mention}: {best.explain()} (confidence {self.confidence:.2f}, {len(self.paths)} paths)")


CONFIDENCE_TEMPERATURE = 0.1  # score units; chosen on dev questions of four KGs (docs/benchmarks.md)
CONFIDENCE_SUPPORT = 0.15  # p(relation | word) at which a step counts as fully named


class ScoredReading(Protocol):
    """What confidence needs of a reading: an identity, a score, its weakest naming, its answers."""

    @property
    def key(self) -> str: ...

    score: float
    support: float
    answers: list[dict[str, Any]]


def path_confidence(path: ScoredReading, paths: Sequence[ScoredReading]) -> float:
    """How likely ``path`` is the reading, against the paths whose answers mostly differ from its own:
    a softmax of the scores (paths that agree on the answers are not rivals), times how well its
    weakest step is named (through the KG's own map when the path carries one)."""
    return path_belief(path, paths)[0]


def path_belief(path: ScoredReading, paths: Sequence[ScoredReading]) -> tuple[float, KGMapped | None]:
    """``path_confidence`` and, when the path carries the KG's map, the value before it and its name."""
    mine = {a.get("value") for a in path.answers}
    rivals = [p.score for p in paths if p.key != path.key and p.answers
              and len(mine & {a.get("value") for a in p.answers}) < 0.5 * max(1, min(len(mine), len(p.answers)))]
    weight = sum(math.exp(max(-50.0, min(50.0, (r - path.score) / CONFIDENCE_TEMPERATURE))) for r in rivals)
    # a step that no word names is a guess however far ahead the path is
    named = min(1.0, path.support / CONFIDENCE_SUPPORT)
    raw = named / (1.0 + weight)
    calibration = getattr(path, "calibration", None)
    mapped = round(platt(raw, calibration), 4)
    if calibration is None:
        return mapped, None
    return mapped, KGMapped(raw=round(raw, 4), name=getattr(path, "calibration_name", None) or KG_MAP_NAME)


def mapped_by(kg_map: KGMapped | None) -> dict[str, Any]:
    """An answer's fields for a confidence through the KG's map: the value before it and the map's
    name (none: the playbook's shipped map is applied to the answer later, by the supervisor)."""
    return {"raw_confidence": kg_map.raw, "calibration": kg_map.name} if kg_map is not None else {}


def kg_map_of(answer: Answer) -> KGMapped | None:
    """Whether an answer's confidence went through the KG's own map (before any playbook map: the
    supervisor sets ``raw_confidence`` only on the final answer)."""
    if answer.raw_confidence is None or answer.calibration is None:
        return None
    return KGMapped(raw=answer.raw_confidence, name=answer.calibration)


# The most an answer through the KG's own map may say. A Platt map extrapolates past what a few
# hundred held-out examples can vouch for (without this, 4 of 200 PathQuestion 2H answers were wrong
# at 0.9 or more), and a wrong answer at 0.9 or more is a defect here; the playbooks' shipped maps top out at 0.88.
KG_MAP_CEILING = 0.89

KG_MAP_NAME = "examples of the KG"  # a map's name when the KG's name is not known


def kg_map_name(kg: str | None) -> str:
    """The name an answer gives the map fitted on a KG's examples."""
    return f"examples of KG {kg!r}" if kg else KG_MAP_NAME


def platt(confidence: float, calibration: tuple[float, float] | None) -> float:
    """``confidence`` through a Platt map on its logit (``None``: unchanged)."""
    if calibration is None:
        return confidence
    a, b = calibration
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, a * clipped_logit(confidence) + b))))


def clipped_logit(p: float) -> float:
    """The logit of a confidence, within +-7: 0 or 1 says "far", not "infinitely far" (the Platt map
    is fitted and applied on this)."""
    p = min(1 - 1e-6, max(1e-6, p))
    return max(-7.0, min(7.0, math.log(p / (1 - p))))


class TopicMention(BaseModel):
    """A span of the question linked to KG entities (token offsets, see ``semantic.text.tokenize``)."""

    text: str
    start: int
    end: int
    iris: list[str] = Field(default_factory=list)
    firm: bool = True  # the main mention, or written as a name; a lowercase everyday word may be a relation word
    category: bool = False  # a common noun naming a value many things share ("goalkeepers" -> Goalkeeper)


class PlannedPath(BaseModel):
    """A schema-level path of a retrieval plan: relations only, no instances fetched yet."""

    entity: str
    mention: str
    steps: list[RelationMatch]
    score: float = 0.0
    unexplained: float = 0.0  # relational meaning of the question's words this path leaves over
    count: int | None = None  # triples its last step holds (sampled past the first hop)
    literal_end: bool = False

    @property
    def key(self) -> str:
        return "|".join([self.entity, *(f"{s.direction}|{s.predicate}" for s in self.steps)])

    def explain(self) -> str:
        return " / ".join(("^" if s.direction == "in" else "") + s.label for s in self.steps)


Combine = Literal["single", "and", "or"]


class RetrievalPlan(Payload):
    """KERAG's plan, grown one hop at a time: the planner expands (``stage: expanded``) the kept
    paths by the predicates their end nodes hold, the filter keeps some (``stage: filtered``) and
    says whether the plan is sufficient."""

    kind: Literal["retrieval_plan"] = "retrieval_plan"
    topic_entities: list[str]  # IRIs
    relations_per_hop: list[list[str]] = Field(default_factory=list)  # predicate IRIs kept per hop
    hops: int = 1
    sufficient: bool = False
    stage: Literal["expanded", "filtered"] = "filtered"
    question: str = ""
    mentions: list[TopicMention] = Field(default_factory=list)
    candidates: list[PlannedPath] = Field(default_factory=list)  # the hop just expanded
    kept: list[PlannedPath] = Field(default_factory=list)  # every path kept so far, all hops
    dropped: list[list[str]] = Field(default_factory=list)  # per hop, the paths the filter dropped
    combine: Combine = "single"  # how the answers of several topic entities join
    reason: str = ""  # why the filter called the plan sufficient (or not)

    def summary(self) -> str:
        if self.stage == "expanded":
            return shorten(f"hop {self.hops}: {len(self.candidates)} candidate relations around "
                           + ", ".join(m.text for m in self.mentions))
        now = [p for p in self.kept if len(p.steps) == self.hops]
        best = "; ".join(p.explain() for p in sorted(now, key=lambda p: -p.score)[:3])
        dropped = len(self.dropped[-1]) if self.dropped else 0
        return shorten(f"hop {self.hops}: kept {len(now)} ({best}), dropped {dropped}"
                       + (" — sufficient" if self.sufficient else ""))


class Reading(BaseModel):
    """One way to answer from a sub-graph: a path, or paths from several topic entities joined."""

    paths: list[int]  # indexes into ``Subgraph.paths``
    combine: Combine = "single"
    score: float
    support: float = 0.0
    answers: list[dict[str, Any]] = Field(default_factory=list)  # SPARQL JSON terms
    triple_ids: list[int] = Field(default_factory=list)  # ``Subgraph.triples`` walked to its answers
    calibration: tuple[float, float] | None = None  # the KG's own confidence map (see RankedPath)
    calibration_name: str | None = None

    @property
    def key(self) -> str:
        return f"{self.combine}:" + ",".join(map(str, self.paths))


class Subgraph(Payload):
    kind: Literal["subgraph"] = "subgraph"
    triples: list[EvidenceTriple]
    source: str = ""
    question: str = ""
    paths: list[RankedPath] = Field(default_factory=list)  # executed plan paths, with answers and triple ids
    readings: list[Reading] = Field(default_factory=list)  # best first
    truncated: bool = False  # the triple budget cut the retrieval
    reason: str = ""  # why nothing was retrieved, when nothing was

    def summary(self) -> str:
        return f"{len(self.triples)} triples over {len(self.paths)} paths" + (" (budget reached)" if self.truncated else "")


class PseudoTriple(TriplePattern):
    """A triple the team believes (PG&AKV): words as written, with the KG terms linked so far.
    A term starting with ``?`` is unknown (the model left it open, or the reading asks for it)."""

    subject_iri: str | None = None
    predicate_iri: str | None = None
    object_iri: str | None = None
    object_is_literal: bool = False
    answer_end: Literal["subject", "object"] | None = None  # the end of this triple that answers the question

    def sentence(self) -> str:
        """The triple as the words an embedder compares with the KG's verbalised facts."""
        return " ".join(t.replace("_", " ") for t in (self.subject, self.predicate, self.object)
                        if not t.startswith("?"))


PseudoSource = Literal["llm", "reading"]


class PseudoGraph(Payload):
    """PG&AKV's belief: the facts the question needs, written as code (Turtle) and parsed."""

    kind: Literal["pseudo_graph"] = "pseudo_graph"
    triples: list[PseudoTriple]
    code: str = ""
    question: str = ""
    plan: list[str] = Field(default_factory=list)  # the facts the generator said it needs, in words
    open_ended: bool = False  # "Tell me about X": the answer is a short text, not values
    source: PseudoSource = "reading"
    confidence: float = 0.0  # the reading's confidence (model-free); the model's graph has none
    kg_map: KGMapped | None = None  # ``confidence`` is the best path's, through the KG's own map

    def subjects(self) -> list[str]:
        """Distinct subjects (linked IRI, else the words): the paper's k."""
        return list(dict.fromkeys(t.subject_iri or t.subject for t in self.triples))

    def summary(self) -> str:
        shown = "; ".join(f"<{t.subject}, {t.predicate}, {t.object}>" for t in self.triples[:3])
        return shorten(f"{len(self.triples)} pseudo-triples ({self.source}): {shown}")


class RetrievedTriple(EvidenceTriple):
    """A real triple retrieved for a pseudo-triple: its cosine similarity, and the KG it came from."""

    score: float = 0.0
    kg: str = ""


class AtomicCheck(BaseModel):
    """One pseudo-triple's retrieval: its top similar real triples (after pruning), every KG together."""

    pseudo: int  # index into the pseudo-graph's triples
    candidates: list[RetrievedTriple] = Field(default_factory=list)
    exact: bool = False  # the pseudo-triple itself is a triple of a KG


class DroppedSubject(BaseModel):
    subject: str
    label: str = ""
    mean_similarity: float = 0.0
    reason: Literal["rare", "dissimilar"] = "dissimilar"


class VerifiedGraph(Payload):
    """The atomic verifier's result: retrieved real triples per pseudo-triple, pruned by subject."""

    kind: Literal["verified_graph"] = "verified_graph"
    checks: list[AtomicCheck] = Field(default_factory=list)
    kept_subjects: list[str] = Field(default_factory=list)
    dropped: list[DroppedSubject] = Field(default_factory=list)
    threshold: float = 0.0
    sources: list[str] = Field(default_factory=list)  # KG names retrieved from
    on_the_fly: list[str] = Field(default_factory=list)  # KGs whose neighbourhoods were embedded per question
    embedded: int = 0  # triples embedded on the fly
    truncated: bool = False  # a triple or time cap stopped the on-the-fly embedding

    def summary(self) -> str:
        found = sum(len(c.candidates) for c in self.checks)
        return shorten(f"{found} real triples for {len(self.checks)} pseudo-triples; kept {len(self.kept_subjects)} "
                       f"subjects, dropped {len(self.dropped)} (threshold {self.threshold:.2f})"
                       + (f"; {self.embedded} embedded on the fly" if self.on_the_fly else ""))


FixStatus = Literal["verified", "replaced", "added", "unverified"]


class FixedTriple(BaseModel):
    """One triple of the fixed graph: a real triple (verified, replacing or added), or a pseudo-triple
    no real triple supports (``unverified``: shown, never stated as fact)."""

    status: FixStatus
    triple: EvidenceTriple
    pseudo: int | None = None  # the pseudo-triple it checks or replaces
    kg: str = ""
    score: float = 0.0


class FixedGraph(Payload):
    kind: Literal["fixed_graph"] = "fixed_graph"
    triples: list[FixedTriple] = Field(default_factory=list)
    deleted: list[int] = Field(default_factory=list)  # pseudo-triples the fixer removed as unsupported
    source: Literal["llm", "fallback"] = "fallback"

    def facts(self) -> list[FixedTriple]:
        return [t for t in self.triples if t.status != "unverified"]

    def summary(self) -> str:
        counts: dict[str, int] = {}
        for t in self.triples:
            counts[t.status] = counts.get(t.status, 0) + 1
        return shorten(", ".join(f"{n} {k}" for k, n in counts.items()) or "no triple")


class Anchors(Payload):
    """R3: the entities a question is about (linker and model, united) and what kind of question it is."""

    kind: Literal["anchors"] = "anchors"
    question: str
    # a claim is supported / refuted; a question true / false; a request for values is not R3's to answer
    form: Literal["claim", "yes_no", "request"] = "yes_no"
    anchors: list[TopicMention] = Field(default_factory=list)

    def summary(self) -> str:
        return shorten(f"{self.form}: " + ", ".join(a.text for a in self.anchors) if self.anchors
                       else f"{self.form}: no entity the KG knows")


AxiomForm = Literal["path", "same", "compare", "count", "prefer", "literal", "tally"]


class Constraint(BaseModel):
    """One condition of a preference rule on the item: it has ``target`` through ``predicate``
    (``direction`` from the item), or its value of ``predicate`` is ``op`` ``value``; ``negated``
    turns "must" into "must not"."""

    predicate: str
    label: str
    direction: Literal["out", "in"] = "out"
    target: str | None = None
    target_label: str = ""
    op: Literal["lt", "gt", "within"] | None = None
    value: float | None = None
    negated: bool = False
    firm: bool = True  # written as a name; an everyday word ("love") that is some entity's label is not
    # a profile's condition: the item's value must be one of the values ``holder`` has through
    # ``via`` (op None), or fall in the span of numbers one of them carries (op "within")
    holder: str | None = None
    holder_label: str = ""
    via: str | None = None
    via_label: str = ""

    def text(self) -> str:
        arrow = "→" if self.direction == "out" else "←"
        if self.holder is not None:
            what = (f"a value within a '{self.via_label}' span of {self.holder_label}" if self.op == "within"
                    else f"one of {self.holder_label}'s '{self.via_label}'")
            return f"{'no ' if self.negated else ''}{self.label} {arrow} {what}"
        what = f"{self.target_label}" if self.target is not None else f"a value {'<' if self.op == 'lt' else '>'} {self.value:g}"
        return f"{'not ' if self.negated else ''}{self.label} {arrow} {what}"


class Axiom(Payload):
    """A general rule (R3) whose premises are checkable facts; alternatives are ranked by ``score``.

    ``patterns`` are the premises as triple patterns over the anchors' IRIs, relation IRIs and
    variables (``?x``); ``form`` says how they decide: ``path`` (the first anchor reaches the second
    through ``steps``), ``same`` (both anchors share a value of one relation), ``compare``/``count``
    (the anchors' values, or how many they have, compared by ``op``), ``literal``/``tally`` (the
    first anchor's value, or how many values it has, compared by ``op`` with the number ``value``
    the claim writes). ``negated``: the claim says the rule does not hold ("not", "never"), so its
    verdict flips. ``query``: the claim as an ASK query (SPARQL compiled from its query graph)."""

    kind: Literal["axiom"] = "axiom"
    text: str
    premises: list[str] = Field(default_factory=list)
    score: float | None = None
    form: AxiomForm | None = None
    patterns: list[TriplePattern] = Field(default_factory=list)
    conclusion: str = ""
    anchors: list[str] = Field(default_factory=list)  # anchor IRIs, in the rule's order
    anchor_labels: list[str] = Field(default_factory=list)
    steps: list[RelationMatch] = Field(default_factory=list)  # the relation path (path/same/compare/count)
    steps_b: list[RelationMatch] = Field(default_factory=list)  # the second anchor's path, when it differs
    op: Literal["lt", "gt", "le", "ge", "eq"] | None = None  # compare/count: first anchor's value op the second's
    value: float | None = None  # literal/tally: the number the claim compares with
    negated: bool = False
    query: str = ""
    constraints: list[Constraint] = Field(default_factory=list)  # prefer: what the item must (not) have
    source: Literal["rule", "model"] = "rule"
    # path: the rule starts from the claim's second entity, whose one value of a one-step relation
    # is all the KG holds ("Havenmoor's capital is Brackwater", so Corlis is not): a silent far end
    # does not make the KG silent
    sole_value: bool = False

    def summary(self) -> str:
        return shorten(self.text)


class SelectedFacts(Payload):
    """R3: the listed KG triples a branch may use for its axiom, and the entities expanded so far."""

    kind: Literal["selected_facts"] = "selected_facts"
    triples: list[EvidenceTriple] = Field(default_factory=list)
    expanded: list[str] = Field(default_factory=list)
    offered: int = 0  # triples listed before the pick (premise fetches and dense top-k)
    complete: bool = True  # False: the KG held more premise values than were read (only a found match may stand)

    def summary(self) -> str:
        shown = "; ".join(t.readable() for t in self.triples[:2])
        more = f" (+{len(self.triples) - 2})" if len(self.triples) > 2 else ""
        return shorten(f"{len(self.triples)} of {self.offered} facts, {len(self.expanded)} expanded: {shown}{more}")


VerdictName = Literal["true", "false", "unknown"]


class Verdict(Payload):
    """R3: a branch's answer. True/False only when every premise is bound to listed triples."""

    kind: Literal["verdict"] = "verdict"
    verdict: VerdictName
    label: str  # as people read it: True / False / supported / refuted / not enough info / I don't know
    axiom: str = ""
    reasoning: list[str] = Field(default_factory=list)  # statements citing triples by position (t0 ...)
    triples: list[EvidenceTriple] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)  # premises no listed triple binds
    final: bool = False  # no further expansion will be tried on this branch

    def summary(self) -> str:
        return shorten(f"{self.label}" + (f" (missing: {'; '.join(self.missing[:2])})" if self.missing else "")
                       + f" — {self.axiom}")


class MissingInfo(Payload):
    kind: Literal["missing_info"] = "missing_info"
    description: str
    next_entity: str | None = None

    def summary(self) -> str:
        return shorten(self.description + (f" → expand {self.next_entity}" if self.next_entity else ""))


class AnswerValue(BaseModel):
    label: str
    iri: str | None = None


class Documents(Payload):
    """What a search returned for the question (every query's hits, best first, no duplicates)."""

    kind: Literal["documents"] = "documents"
    documents: list[EvidenceDocument]
    question: str = ""
    queries: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)  # a provider that failed, said plainly

    def summary(self) -> str:
        said = "; ".join(shorten(q, 40) for q in self.queries[:3])
        return f"{len(self.documents)} documents for {said}" + (f" ({len(self.errors)} errors)" if self.errors else "")


class DroppedDocument(BaseModel):
    id: str
    title: str | None = None
    reason: str = ""


class ProposedTriple(BaseModel):
    """A fact read from a document and linked to the KG's vocabulary: shown, never written.

    ``subject``/``object`` are KG IRIs when the text names a KG entity, else ``None`` with the
    words kept in the label and ``subject_new``/``object_new`` set: an entity the KG does not
    have (``kgteam kg add`` would make it); ``predicate`` is always a KG relation."""

    subject: str | None = None
    subject_label: str
    predicate: str
    predicate_label: str
    object: str | None = None
    object_label: str
    document: str  # the document id it was read from
    sentence: str = ""
    score: float = 0.0
    subject_new: bool = False
    object_new: bool = False

    def line(self) -> str:
        s = f"{self.subject_label} (new)" if self.subject_new else self.subject_label
        o = f"{self.object_label} (new)" if self.object_new else self.object_label
        return f"{s} --{self.predicate_label}--> {o}"


class GradedDocuments(Payload):
    """The documents a grader kept as relevant to the question, and the dropped ones with why."""

    kind: Literal["graded_documents"] = "graded_documents"
    question: str = ""
    kept: list[EvidenceDocument] = Field(default_factory=list)
    dropped: list[DroppedDocument] = Field(default_factory=list)
    proposals: list[ProposedTriple] = Field(default_factory=list)  # filled by the triple extractor

    def summary(self) -> str:
        kept = "; ".join(shorten(d.title or d.id, 30) for d in self.kept[:3]) or "none"
        extra = f", {len(self.proposals)} proposed triples" if self.proposals else ""
        return shorten(f"kept {len(self.kept)} ({kept}), dropped {len(self.dropped)}{extra}")


class Draft(Payload):
    """A generated answer before the graders pass it: text, values and what it stands on."""

    kind: Literal["draft"] = "draft"
    question: str
    text: str
    values: list[AnswerValue] = Field(default_factory=list)
    evidence: Evidence = Field(default_factory=Evidence)
    confidence: float = 0.0
    kg_map: KGMapped | None = None  # ``confidence`` is the graph answer's, through the KG's own map
    known: bool = True  # False: the draft says "I don't know"
    sources: list[str] = Field(default_factory=list)  # "kg", "web"
    proposals: list[ProposedTriple] = Field(default_factory=list)
    route: RouteName | None = None
    attempt: int = 1

    def summary(self) -> str:
        return shorten(f"{'' if self.known else '(unknown) '}{self.text}")


class Grade(Payload):
    kind: Literal["grade"] = "grade"
    grader: str
    verdict: bool
    reason: str = ""
    unsupported: list[str] = Field(default_factory=list)  # claims no retrieved fact carries

    def summary(self) -> str:
        return f"{self.grader}: {'yes' if self.verdict else 'no'} {shorten(self.reason, 60)}"


RetryPhase = Literal["parsing", "linking", "query", "retrieval", "generation", "grading"]
RetryReason = Literal["empty_result", "no_entity", "query_error", "grader_no", "unsupported", "low_confidence",
                      "parse_error"]


class RetryHint(BaseModel):
    """What must differ in the next attempt; exact for deterministic code, readable in a prompt."""

    note: str = ""
    hops: int | None = Field(None, ge=1, le=3)  # read the question with this many hops
    k: int | None = Field(None, ge=1, le=50)  # keep this many candidates
    exclude: list[str] = Field(default_factory=list)  # CandidateQuery.key values already tried
    tried_hops: list[int] = Field(default_factory=list)

    def text(self) -> str:
        """The hint as a sentence for a prompt."""
        parts = [self.note] if self.note else []
        if self.hops:
            parts.append(f"read the question as {self.hops} hop(s)")
        if self.k:
            parts.append(f"keep {self.k} candidates")
        if self.exclude:
            parts.append(f"{len(self.exclude)} combination(s) already tried")
        return "; ".join(parts)


class RetrySignal(Payload):
    """Typed request to redo an earlier phase; the supervisor bounds these by ``max_retries``."""

    kind: Literal["retry_signal"] = "retry_signal"
    phase: RetryPhase
    reason: RetryReason
    hint: RetryHint = Field(default_factory=RetryHint)
    attempt: int = 1

    def summary(self) -> str:
        return shorten(f"retry {self.phase} #{self.attempt} ({self.reason}) {self.hint.text()}")


BudgetName = Literal[
    "max_depth", "max_breadth", "max_retries", "max_turns", "max_llm_calls", "max_tokens", "timeout_s"
]
PruneReason = Literal["max_depth", "max_breadth", "max_retries", "join_first"]


class BudgetExceeded(Payload):
    kind: Literal["budget_exceeded"] = "budget_exceeded"
    budget: BudgetName
    limit: float
    used: float

    def summary(self) -> str:
        return f"{self.budget} exhausted ({self.used:g} of {self.limit:g})"


class PrunedBranch(BaseModel):
    """A branch the supervisor stopped while others went on, and why."""

    branch: int
    reason: PruneReason
    depth: int = 0
    detail: str = ""


class BranchPruned(Payload):
    """Streamed when a branch is pruned, so people watching see the tree being cut."""

    kind: Literal["branch_pruned"] = "branch_pruned"
    pruned: PrunedBranch

    def summary(self) -> str:
        p = self.pruned
        return shorten(f"branch {p.branch} pruned by {p.reason} at depth {p.depth}" + (f": {p.detail}" if p.detail else ""))


class Join(Payload):
    """What a join route hands its role: the joined kind's payloads from sibling branches."""

    kind: Literal["join"] = "join"
    of: str  # the payload kind that was joined
    items: list[SerializeAsAny[Payload]] = Field(default_factory=list)
    branches: list[int] = Field(default_factory=list)  # the branch of each item, same order
    pruned: list[PrunedBranch] = Field(default_factory=list)  # sibling branches that gave nothing

    @field_validator("items", mode="before")
    @classmethod
    def _decode_items(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [payload_from_dict(v) if isinstance(v, dict) else v for v in value]
        return value

    def summary(self) -> str:
        pruned = f", {len(self.pruned)} pruned" if self.pruned else ""
        return f"{len(self.items)} {self.of} from branches {self.branches}{pruned}"


AnswerStatus = Literal["answered", "unknown", "refused", "error"]
# Validation context for payloads read back from a record (older records may predate a rule).
STORED: dict[str, Any] = {"stored": True}
StopName = Literal[
    "done", "cancelled", "error",
    "max_depth", "max_breadth", "max_retries", "max_turns", "max_llm_calls", "max_tokens", "timeout_s",
]


class Answer(Payload):
    """The final word of a run: text, values, evidence, cost and why the run stopped.

    ``confidence`` (0..1) comes from the deterministic scorer, or the model where it decided;
    below the team's threshold the answer is "I don't know" and the best candidate, if any,
    stays in ``guess``. A stated answer (``status="answered"``) must carry one: a statement no
    calibration can judge is refused. Answers read back from a record (``context=STORED``, as
    :func:`payload_from_dict` and the session stores do) are kept as written.
    """

    kind: Literal["answer"] = "answer"
    text: str
    values: list[AnswerValue] = Field(default_factory=list)
    status: AnswerStatus = "answered"
    stopped_by: StopName = "done"
    grounded: bool = False
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    raw_confidence: float | None = Field(None, ge=0.0, le=1.0)  # the scorer's own score, before calibration
    calibration: str | None = None  # the map that turned raw_confidence into confidence (None: none applied)
    guess: list[AnswerValue] = Field(default_factory=list)  # best candidate kept when abstaining
    reading: str | None = None  # the query graph / path the answer came from, in words
    evidence: Evidence = Field(default_factory=Evidence)
    cost: Usage = Field(default_factory=Usage)
    fallbacks: list[str] = Field(default_factory=list)  # decisions taken by deterministic fallback
    pruned: list[PrunedBranch] = Field(default_factory=list)  # branches cut by a budget on the way
    model: str | None = None  # the team's model; "none" when the deterministic scorers decided alone
    error: str | None = None
    route: RouteName | None = None  # where a routing team looked for the answer (kg / web / both)
    proposals: list[ProposedTriple] = Field(default_factory=list)  # facts read from text, for review only
    signals: ReadingSignals | None = None  # what the confidence was made of (a semantic reading's answers)

    @model_validator(mode="after")
    def _stated_with_confidence(self, info: ValidationInfo) -> Answer:
        stored = isinstance(info.context, dict) and info.context.get("stored")
        if self.status == "answered" and self.confidence is None and not stored:
            raise ValueError("an answer with status 'answered' needs a confidence (0..1): the scorer's score, "
                             "which the team's calibration map turns into a probability; say status='unknown' for no answer")
        return self

    def summary(self) -> str:
        flags = ", ".join([self.status] + ([f"stopped by {self.stopped_by}"] if self.stopped_by != "done" else [])
                          + (["grounded"] if self.grounded else []))
        return shorten(f"[{flags}] {self.text}")


PAYLOAD_TYPES: dict[str, type[Payload]] = {
    cls.model_fields["kind"].default: cls
    for cls in (
        Question, RouteDecision, TriplePatterns, AnswerType, SparqlTemplate, EntityCandidates,
        RelationCandidates, QueryCandidates, QueryResult, RelationPaths, RetrievalPlan, Subgraph, PseudoGraph,
        VerifiedGraph, FixedGraph,
        Anchors, Axiom, SelectedFacts, Verdict, MissingInfo, Documents, GradedDocuments, Draft, Grade, RetrySignal, BudgetExceeded, BranchPruned, Join, Answer,
    )
}


def kind_of(cls: type[Payload]) -> str:
    """The routing key of a payload class (its ``kind`` literal)."""
    kind = cls.model_fields["kind"].default
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"{cls.__name__} needs a literal default for 'kind'")
    return kind


def register_payload(cls: type[Payload]) -> type[Payload]:
    """Register a plugin payload kind so envelopes carrying it can be decoded."""
    kind = kind_of(cls)
    existing = PAYLOAD_TYPES.get(kind)
    if existing is not None and existing is not cls:
        raise ValueError(f"payload kind {kind!r} is already registered by {existing.__name__}")
    PAYLOAD_TYPES[kind] = cls
    return cls


def payload_from_dict(data: dict[str, Any]) -> Payload:
    """A payload decoded from its record (a stored or sent envelope): kept as it was written."""
    kind = data.get("kind")
    cls = PAYLOAD_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown payload kind {kind!r}; known: {sorted(PAYLOAD_TYPES)}")
    return cls.model_validate(data, context=STORED)

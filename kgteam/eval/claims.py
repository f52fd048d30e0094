"""Claim sets over any loaded KG: supported, refuted and not-enough-info claims with the facts that decide them.

A claim is a path from a start entity along 1-3 relations (``Step``: predicate and direction) to an
end entity, said in words built from the KG's own relation labels. It is graded under the *partial
completeness assumption* (PCA) of knowledge-base completion: when the KG knows some value of a
relation for an entity, it is taken to know all of them. So

- **supported**: the path exists (its triples are the claim's ``facts``);
- **refuted**: the start reaches ends along the path, and the claimed end is not one of them; the
  claimed end is an entity of the same kind (it ends that last relation elsewhere), and from its
  side too the path does not lead back to the start;
- **not enough info**: the last relation is absent for every entity the path's prefix reaches,
  and absent (in reverse) for the claimed end too, although both are of kinds that usually have
  it; the KG says nothing either way, from either side.

Every claim is re-checked on the store with ASK queries through the KG tools before it is kept
(:func:`check_claim`), so the in-memory view used to walk the KG can be partial on a large KG
without a wrong gold label. The same seed on the same KG gives the same claims.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter, defaultdict
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from kgteam.eval.items import DatasetItem, GoldAnswer
from kgteam.eval.metrics import normalize
from kgteam.roles.semantic.paths import NAMING_PREDICATES
from kgteam.tools.sparql_guard import sparql_iri

if TYPE_CHECKING:
    from kgteam.tools.kg_tools import KGTools

Verdict = Literal["supported", "refuted", "not enough info"]
VERDICTS: tuple[Verdict, ...] = ("supported", "refuted", "not enough info")
INVERSE_SUFFIX = "_inverse"  # a KG may spell every edge twice, as ``r`` and ``r_inverse``: walk only ``r``
CLAIM_PREFIX = "Claim: "
_BULK_BYTES = 1 << 31
_BULK_TIMEOUT_S = 300.0

T = TypeVar("T")


class Step(NamedTuple):
    """One relation of a path, walked forwards (subject to object, "out") or backwards ("in")."""

    predicate: str
    direction: Literal["out", "in"]

    def reverse(self) -> Step:
        return Step(self.predicate, "in" if self.direction == "out" else "out")


class ClaimSettings(BaseModel):
    """How claims are drawn; the defaults are the ones documented in docs/eval.md."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(300, ge=1, description="claims to make (split evenly over the three verdicts and 1..max_hops)")
    seed: int = 0
    max_hops: int = Field(3, ge=1, le=3)
    max_end_degree: int = Field(50, ge=1, description="prefer ends reached along the last relation by at most "
                                "this many entities (a specific claim, not 'has genre Drama')")
    max_ends: int = Field(200, ge=1, description="paths reaching more ends from their start are too vague")
    min_cooccurrence: float = Field(0.2, gt=0, le=1, description="a relation 'fits' an entity when at least this "
                                    "share of entities sharing one of its relations have it (not-enough-info)")
    tries: int = Field(60, ge=1, description="walks tried for one claim before its slot goes to another verdict")
    max_edges_per_relation: int = Field(500_000, ge=1, description="edges of one relation read into memory")


# ------------------------------------------------------------------------------------ the edges

@dataclass
class EdgeView:
    """The KG's entity-to-entity edges in memory, sorted, so a seed walks the same way on every run."""

    out: dict[str, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(dict))
    into: dict[str, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(dict))
    inverse: dict[str, str] = field(default_factory=dict)  # predicate -> its ``_inverse`` duplicate
    nodes: list[str] = field(default_factory=list)
    pool: dict[Step, list[str]] = field(default_factory=dict)  # the ends of each step kind, KG-wide
    _kinds: dict[str, list[Step]] = field(default_factory=dict)
    _fits: dict[Step, dict[Step, float]] = field(default_factory=dict)

    def add(self, predicate: str, pairs: Iterable[tuple[str, str]]) -> None:
        for s, o in pairs:
            if s != o:
                self.out[s].setdefault(predicate, []).append(o)
                self.into[o].setdefault(predicate, []).append(s)

    def freeze(self) -> None:
        for side in (self.out, self.into):
            for edges in side.values():
                for p in edges:
                    edges[p] = sorted(set(edges[p]))
        self.nodes = sorted(set(self.out) | set(self.into))
        ends: dict[Step, set[str]] = defaultdict(set)
        for s, edges in self.out.items():
            for p, objects in edges.items():
                ends[Step(p, "out")].update(objects)
                ends[Step(p, "in")].add(s)
        self.pool = {k: sorted(v) for k, v in sorted(ends.items())}
        self._kinds = {n: self._step_kinds(n) for n in self.nodes}
        having: Counter[Step] = Counter()
        pairs: Counter[tuple[Step, Step]] = Counter()
        for kinds in self._kinds.values():
            having.update(kinds)
            pairs.update((a, b) for a in kinds for b in kinds if a != b)
        fits: dict[Step, dict[Step, float]] = defaultdict(dict)
        for (a, b), count in pairs.items():
            fits[a][b] = count / having[a]
        self._fits = dict(fits)

    def _step_kinds(self, node: str) -> list[Step]:
        return sorted([Step(p, "out") for p in self.out.get(node, {})] + [Step(p, "in") for p in self.into.get(node, {})])

    def steps_from(self, node: str) -> list[Step]:
        return self._kinds.get(node, [])

    def neighbours(self, node: str, step: Step) -> list[str]:
        side = self.out if step.direction == "out" else self.into
        edges = side.get(node)
        return edges.get(step.predicate, []) if edges else []

    def degree(self, node: str, step: Step) -> int:
        return len(self.neighbours(node, step))

    def ends(self, start: str, steps: Sequence[Step], cap: int) -> set[str] | None:
        """Every entity the path reaches from ``start`` (revisits allowed, as SPARQL reads it); None past ``cap``."""
        frontier = {start}
        for step in steps:
            frontier = {n for node in frontier for n in self.neighbours(node, step)}
            if len(frontier) > cap * 20:  # an intermediate hub: the path says little
                return None
        return frontier if len(frontier) <= cap else None

    def fitting(self, node: str, min_share: float) -> set[Step]:
        """Step kinds that entities like ``node`` (sharing one of its step kinds) usually have."""
        out: set[Step] = set()
        for kind in self.steps_from(node):
            out.update(b for b, share in self._fits.get(kind, {}).items() if share >= min_share)
        return out


async def _bulk(tools: KGTools, sparql: str, max_rows: int) -> list[dict[str, Any]]:
    """A query the generator built itself, run on the store directly: no row cap but ``max_rows``."""
    result = await asyncio.to_thread(tools.store.query, sparql, timeout_s=_BULK_TIMEOUT_S, max_rows=max_rows,
                                     max_bytes=_BULK_BYTES)
    return result.rows


async def _edges_of(tools: KGTools, predicate: str, max_rows: int) -> list[tuple[str, str]]:
    """The (subject, object) entity pairs of one relation; an embedded Oxigraph store is read directly."""
    from kgteam.tools.backends.oxigraph_store import OxigraphStore

    store = tools.store
    if isinstance(store, OxigraphStore):
        import pyoxigraph as ox

        def scan() -> list[tuple[str, str]]:
            out = []
            for quad in store.store.quads_for_pattern(None, ox.NamedNode(predicate), None):
                if isinstance(quad.subject, ox.NamedNode) and isinstance(quad.object, ox.NamedNode):
                    out.append((quad.subject.value, quad.object.value))
                    if len(out) >= max_rows:
                        break
            return out

        return await asyncio.to_thread(scan)
    rows = await _bulk(tools, f"SELECT ?s ?o WHERE {{ ?s {sparql_iri(predicate)} ?o FILTER(isIRI(?o) && isIRI(?s)) }}",
                       max_rows)
    return [(r["s"].value, r["o"].value) for r in rows if "s" in r and "o" in r]


async def read_edges(tools: KGTools, max_per_relation: int = 500_000) -> EdgeView:
    """Entity-to-entity edges of every relation but naming/typing ones and ``*_inverse`` duplicates."""
    rows = await _bulk(tools, "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o FILTER(isIRI(?o)) } GROUP BY ?p", 100_000)
    predicates = sorted(r["p"].value for r in rows if "p" in r)
    view = EdgeView()
    present = set(predicates)
    for p in predicates:
        if p in NAMING_PREDICATES:
            continue
        if p.endswith(INVERSE_SUFFIX) and p.removesuffix(INVERSE_SUFFIX) in present:
            view.inverse[p.removesuffix(INVERSE_SUFFIX)] = p
            continue
        view.add(p, await _edges_of(tools, p, max_per_relation))
    view.freeze()
    return view


# ------------------------------------------------------------------------------------- checking

def _step_path(step: Step, inverse: dict[str, str]) -> str:
    """A SPARQL property path for one step; a KG's ``r_inverse`` duplicate counts as ``r`` backwards."""
    p = sparql_iri(step.predicate)
    dup = inverse.get(step.predicate)
    if step.direction == "out":
        return f"({p}|^{sparql_iri(dup)})" if dup else p
    return f"(^{p}|{sparql_iri(dup)})" if dup else f"^{p}"


def path_ask(start: str, steps: Sequence[Step], end: str | None, inverse: dict[str, str]) -> str:
    """``ASK`` whether ``start`` reaches ``end`` (any entity when None) along ``steps``."""
    terms = [sparql_iri(start), *(f"?x{i}" for i in range(1, len(steps))), sparql_iri(end) if end else "?end"]
    body = " . ".join(f"{terms[i]} {_step_path(s, inverse)} {terms[i + 1]}" for i, s in enumerate(steps))
    return f"ASK {{ {body} }}"


def triple_ask(fact: Sequence[str]) -> str:
    s, p, o = fact
    return f"ASK {{ {sparql_iri(s)} {sparql_iri(p)} {sparql_iri(o)} }}"


class ClaimSpec(BaseModel):
    """What a claim says, in IRIs: the path from ``start`` to ``end`` and the verdict the KG gives it."""

    verdict: Verdict
    start: str
    steps: list[tuple[str, Literal["out", "in"]]]
    end: str
    inverse: dict[str, str] = Field(default_factory=dict)
    facts: list[list[str]] = Field(default_factory=list)

    def path(self) -> list[Step]:
        return [Step(p, d) for p, d in self.steps]


async def _ask(tools: KGTools, sparql: str) -> bool:
    result = await tools.run_sparql(sparql)
    return bool(result.boolean)


async def check_claim(tools: KGTools, spec: ClaimSpec) -> list[str]:
    """Re-executes what decides the claim on the KG; returns the problems (empty: the gold holds)."""
    steps, problems = spec.path(), []
    reaches = await _ask(tools, path_ask(spec.start, steps, spec.end, spec.inverse))
    if spec.verdict == "supported":
        if not reaches:
            problems.append("the path does not reach the claimed end")
        for fact in spec.facts:
            if not await _ask(tools, triple_ask(fact)):
                problems.append(f"fact not in the KG: {fact}")
    elif spec.verdict == "refuted":
        if reaches:
            problems.append("the claimed end is reachable: the claim holds")
        if not await _ask(tools, path_ask(spec.start, steps, None, spec.inverse)):
            problems.append("the path leads nowhere from the start: not enough info, not refuted")
        for fact in spec.facts:
            if not await _ask(tools, triple_ask(fact)):
                problems.append(f"fact not in the KG: {fact}")
    else:
        if await _ask(tools, path_ask(spec.start, steps, None, spec.inverse)):
            problems.append("the KG holds the relation for the start's side")
        if await _ask(tools, path_ask(spec.end, [steps[-1].reverse()], None, spec.inverse)):
            problems.append("the KG holds the relation for the claimed end")
    return problems


# ------------------------------------------------------------------------------------- wording

_AUX = {"is", "are", "was", "were", "has", "have", "had", "does", "did", "can", "will"}
_PREP = {"by", "in", "of", "for", "to", "at", "from", "with", "on", "into", "as", "under", "about", "near"}


def relation_phrase(label: str) -> str:
    """A relation label as the verb phrase of "<subject> ... <object>", from its words only:
    ``directed by`` -> ``is directed by``, ``has genre`` and ``plays in club`` stay, a noun phrase
    such as ``release year`` -> ``has release year``."""
    words = label.split()
    if not words:
        return "is related to"
    first, last = words[0].lower(), words[-1].lower()
    if first in _AUX or (len(words) > 1 and first.endswith("s") and not first.endswith(("ss", "us", "is"))):
        return label
    if last in _PREP or first in _PREP or any(w.lower() in {"of"} for w in words[1:-1]):
        return f"is {label}"
    return f"has {label}"


_VARIABLES = ("X", "Y", "Z")


def render_claim(start: str, steps: Sequence[Step], end: str, labels: dict[str, str]) -> str:
    """The claim in words: one hop as a sentence, longer paths with named unknown entities, e.g.
    ``there is an entity X such that X is directed by Woody Allen and X has starred actors Diane Keaton``."""
    names = [labels.get(start, start), *_VARIABLES[: len(steps) - 1], labels.get(end, end)]
    sentences = []
    for i, step in enumerate(steps):
        a, b = names[i], names[i + 1]
        subject, obj = (a, b) if step.direction == "out" else (b, a)
        sentences.append(f"{subject} {relation_phrase(labels.get(step.predicate, step.predicate))} {obj}")
    if len(steps) == 1:
        return f"{CLAIM_PREFIX}{sentences[0]}."
    unknown = names[1:-1]
    lead = ("there is an entity X such that " if len(unknown) == 1
            else f"there are entities {', '.join(unknown[:-1])} and {unknown[-1]} such that ")
    return f"{CLAIM_PREFIX}{lead}{', '.join(sentences[:-1])} and {sentences[-1]}."


# ----------------------------------------------------------------------------------- generation

@dataclass
class _Walk:
    nodes: list[str]
    steps: list[Step]


def _walk(view: EdgeView, rng: random.Random, hops: int, start: str | None = None) -> _Walk | None:
    """A random walk that never revisits an entity; each step first picks a relation, then a neighbour."""
    nodes = [start or rng.choice(view.nodes)]
    steps: list[Step] = []
    for _ in range(hops):
        options = view.steps_from(nodes[-1])
        if not options:
            return None
        step = rng.choice(options)
        seen = set(nodes)
        nexts = [n for n in view.neighbours(nodes[-1], step) if n not in seen]
        if not nexts:
            return None
        nodes.append(rng.choice(nexts))
        steps.append(step)
    return _Walk(nodes, steps)


def _facts(walk: _Walk) -> list[list[str]]:
    out = []
    for i, step in enumerate(walk.steps):
        a, b = walk.nodes[i], walk.nodes[i + 1]
        out.append([a, step.predicate, b] if step.direction == "out" else [b, step.predicate, a])
    return out


class ClaimGenerator:
    """Draws claims slot by slot: slot i asks for verdict ``VERDICTS[i % 3]`` with ``1 + (i // 3) % max_hops`` hops."""

    def __init__(self, tools: KGTools, view: EdgeView, settings: ClaimSettings):
        self.tools, self.view, self.settings = tools, view, settings
        self.rng = random.Random(settings.seed)
        self.seen: set[tuple[Any, ...]] = set()
        self.starts: Counter[str] = Counter()
        self.ends_used: Counter[str] = Counter()

    def _specific(self, walk: _Walk) -> tuple[set[str], int] | None:
        ends = self.view.ends(walk.nodes[0], walk.steps, self.settings.max_ends)
        if ends is None:
            return None
        return ends, self.view.degree(walk.nodes[-1], walk.steps[-1].reverse())

    def _fresh(self, walk_start: str, key: tuple[Any, ...], end: str | None = None) -> bool:
        """Not drawn before, and neither its start nor its end used twice already (a varied set)."""
        return key not in self.seen and self.starts[walk_start] < 2 and (end is None or self.ends_used[end] < 2)

    def _supported(self, hops: int) -> tuple[ClaimSpec, set[str]] | None:
        best: tuple[int, ClaimSpec, set[str]] | None = None
        for _ in range(self.settings.tries):
            walk = _walk(self.view, self.rng, hops)
            if walk is None:
                continue
            found = self._specific(walk)
            key = ("s", walk.nodes[0], tuple(walk.steps), walk.nodes[-1])
            if found is None or not self._fresh(walk.nodes[0], key, walk.nodes[-1]):
                continue
            ends, degree = found
            spec = ClaimSpec(verdict="supported", start=walk.nodes[0], steps=[(s.predicate, s.direction) for s in
                                                                               walk.steps],
                             end=walk.nodes[-1], inverse=self.view.inverse, facts=_facts(walk))
            if degree <= self.settings.max_end_degree:
                return spec, ends
            if best is None or degree < best[0]:
                best = (degree, spec, ends)
        return (best[1], best[2]) if best else None

    async def _refuted(self, hops: int) -> ClaimSpec | None:
        for _ in range(max(1, self.settings.tries // 10)):
            found = self._supported(hops)
            if found is None:
                return None
            spec, ends = found
            steps = spec.path()
            pool = self.view.pool.get(steps[-1], [])
            candidates = [c for c in self.rng.sample(pool, min(len(pool), 20)) if c not in ends and c != spec.start]
            if not candidates:
                continue
            labels = await self.tools.labels_for(sorted(ends | set(candidates)))
            taken = {normalize(labels.get(e, "")) for e in ends}
            for c in candidates:
                if normalize(labels.get(c, "")) not in taken and self.ends_used[c] < 2:
                    return spec.model_copy(update={"verdict": "refuted", "end": c})
        return None

    def _not_enough_info(self, hops: int) -> ClaimSpec | None:
        view, settings = self.view, self.settings
        for _ in range(settings.tries):
            walk = _walk(view, self.rng, hops - 1) if hops > 1 else _Walk([self.rng.choice(view.nodes)], [])
            if walk is None:
                continue
            reach = view.ends(walk.nodes[0], walk.steps, settings.max_ends) if walk.steps else {walk.nodes[0]}
            if not reach:
                continue
            last = walk.nodes[-1]
            absent = sorted(s for s in view.fitting(last, settings.min_cooccurrence)
                            if not any(view.degree(n, s) for n in reach))
            if not absent:
                continue
            step = self.rng.choice(absent)
            back = step.reverse()
            # the claimed end: fits the reverse relation (entities like it usually have it) and has none
            kinds = sorted({k for k, fits in view._fits.items() if fits.get(back, 0.0) >= settings.min_cooccurrence})
            if not kinds:
                continue
            for _ in range(10):
                kind = self.rng.choice(kinds)
                members = view.pool.get(kind.reverse(), [])  # entities that have step kind `kind`
                if not members:
                    continue
                end = self.rng.choice(members)
                if end in walk.nodes or view.degree(end, back):
                    continue
                key = ("n", walk.nodes[0], (*walk.steps, step), end)
                if not self._fresh(walk.nodes[0], key, end):
                    continue
                return ClaimSpec(verdict="not enough info", start=walk.nodes[0],
                                 steps=[(s.predicate, s.direction) for s in (*walk.steps, step)], end=end,
                                 inverse=view.inverse, facts=[])
        return None

    async def draw(self, verdict: Verdict, hops: int) -> ClaimSpec | None:
        for _ in range(3):  # a claim the KG itself contradicts (a partial view) is drawn again
            if verdict == "supported":
                found = self._supported(hops)
                spec = found[0] if found else None
            elif verdict == "refuted":
                spec = await self._refuted(hops)
            else:
                spec = self._not_enough_info(hops)
            if spec is None:
                return None
            if not await check_claim(self.tools, spec):
                self.seen.add((verdict[0], spec.start, tuple(spec.path()), spec.end))
                self.starts[spec.start] += 1
                self.ends_used[spec.end] += 1
                return spec
        return None


async def generate_claims(tools: KGTools, settings: ClaimSettings | None = None, *, kg: str = "kg",
                          view: EdgeView | None = None) -> list[DatasetItem]:
    """``settings.n`` claims (fewer only when the KG cannot give them), each checked on the KG."""
    settings = settings or ClaimSettings()
    view = view or await read_edges(tools, settings.max_edges_per_relation)
    if not view.nodes:
        return []
    gen = ClaimGenerator(tools, view, settings)
    specs: list[ClaimSpec] = []
    failed: Counter[str] = Counter()  # a verdict that failed 3 whole slots is not tried again
    for i in range(settings.n):
        wanted = VERDICTS[i % 3]
        hops = 1 + (i // 3) % settings.max_hops
        spec = None
        # a verdict or hop count the KG cannot give (a KG with no gaps has no not-enough-info claim)
        # passes the slot on: fewer hops first, then the other verdicts, the rarer one so far first
        made = Counter(s.verdict for s in specs)
        for verdict in (wanted, *sorted((v for v in VERDICTS if v != wanted), key=lambda v: made[v])):
            if failed[verdict] >= 3:
                continue
            for h in range(hops, 0, -1):
                spec = await gen.draw(verdict, h)
                if spec:
                    break
            if spec:
                break
            failed[verdict] += 1
        if spec is None:
            break
        specs.append(spec)
    return await _items(tools, specs, kg, settings.seed)


async def _items(tools: KGTools, specs: list[ClaimSpec], kg: str, seed: int) -> list[DatasetItem]:
    iris = {i for s in specs for i in (s.start, s.end, *(p for p, _ in s.steps))}
    labels = await tools.labels_for(sorted(iris))
    items = []
    for n, spec in enumerate(specs):
        text = render_claim(spec.start, spec.path(), spec.end, labels)
        hops = len(spec.steps)
        items.append(DatasetItem(
            id=f"claims-{kg}-s{seed}-{n:05d}", question=text, answers=[GoldAnswer(label=spec.verdict)],
            tags={"dataset": f"claims:{kg}", "hops": hops, "qtype": spec.verdict, "kind": "claim"},
            extra={"kind": "claim", "facts": spec.facts, "claim": spec.model_dump(exclude={"facts"})},
        ))
    return items


# ---------------------------------------------------------------------------------------- files

def claim_row(item: DatasetItem) -> dict[str, Any]:
    """The claim-file line: ``question, answers, kind, facts, hops`` plus ``id``, ``tags`` and the claim's IRIs."""
    return {"id": item.id, "question": item.question, "answers": [a.label for a in item.answers], "kind": "claim",
            "facts": item.extra.get("facts", []), "hops": item.hops, "tags": item.tags,
            "extra": {"claim": item.extra.get("claim")}}


def write_claims(items: Sequence[DatasetItem], path: str | Path) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(claim_row(item), ensure_ascii=False) + "\n")


def claim_stats(items: Sequence[DatasetItem]) -> dict[str, Any]:
    """Class balance and hop counts of a claim set, overall and per verdict."""
    verdicts = Counter(str(it.answers[0].label) for it in items if it.answers)
    hops = Counter(int(it.hops or 0) for it in items)
    per = {v: dict(sorted(Counter(int(it.hops or 0) for it in items if it.answers and it.answers[0].label == v)
                          .items())) for v in VERDICTS}
    return {"n": len(items), "verdicts": {v: verdicts.get(v, 0) for v in VERDICTS},
            "hops": dict(sorted(hops.items())), "hops_by_verdict": per}


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Runs a coroutine from sync code, also when the caller is inside an event loop (in a thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def load_claims(kg: str, n: int = 300, seed: int = 0, home: str | Path | None = None) -> list[DatasetItem]:
    """``claims:<kg>[:<n>[:<seed>]]``: open the KG, draw the claims, close it."""
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    graph = open_kg(kg, home=Path(home) if home else None)
    tools = KGTools.from_kg(graph, embedder=None)
    try:
        return run_sync(generate_claims(tools, ClaimSettings(n=n, seed=seed), kg=graph.name))
    finally:
        tools.close()

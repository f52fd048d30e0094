"""The semantic layer: question -> ranked relation paths from the topic entity -> answer + confidence.

Every playbook's deterministic fallback goes through here, so "which relations does this
question ask for, how many hops, and how sure are we" is decided once, the same way, on any KG.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from kgteam.protocols.evidence import RelationMatch
from kgteam.protocols.payloads import RankedPath, RelationPaths, path_belief
from kgteam.roles.semantic.mentions import Mention, spot_mentions
from kgteam.roles.semantic.paths import (
    PathStep,
    RelationPath,
    extend,
    first_hops,
    path_query,
)
from kgteam.roles.semantic.reader import ReaderScorer, TrainedReader, convention_of, masked_words, reader_of
from kgteam.roles.semantic.scoring import (
    PathScore,
    QuestionScorer,
    ScoringSettings,
    lexical_similarity,
    phrase_key,
)
from kgteam.roles.semantic.text import (
    DETERMINER_WH,
    WH_WORDS,
    Token,
    content_units,
    has_sameness,
    is_content,
    singular,
)
from kgteam.tools.types import RelationNames, ToolError

if TYPE_CHECKING:
    from kgteam.tools.toolbox import Toolbox

_FROM_TOOLS: Any = object()  # SemanticLayer(reader=...): "the reader the toolbox carries"
Similarity = Callable[[list[str], list[str]], Awaitable[list[list[float]]]]


class SemanticSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_hops: int = Field(3, ge=1, le=3)
    beam: int = Field(10, ge=1, le=50, description="path prefixes extended per hop")
    max_mentions: int = Field(3, ge=1, le=10)
    max_entities: int = Field(3, ge=1, le=10, description="KG entities tried per mention")
    executed: int = Field(6, ge=1, le=30, description="best paths run to compare their answers")
    scoring: ScoringSettings = Field(default_factory=ScoringSettings)


_RELATIVE = frozenset({"who", "which", "that", "whom"})


def type_positions(tokens: list[Token], span: tuple[int, int] | None = None) -> set[int]:
    """Words that name a kind, not a relation: right after a determiner question word ("which
    *club*", "how many *awards*"; not "who *plays*"), or between an article and the mention
    ("the *bridge* X", "the *river port* X")."""
    out: set[int] = set()
    if span and span[0] > 0:
        j = span[0] - 1
        kind: list[int] = []
        while j >= 0 and len(kind) < 2 and is_content(tokens[j]) and tokens[j].lower not in WH_WORDS:
            kind.append(j)
            j -= 1
        if kind and j >= 0 and tokens[j].lower in ("the", "a", "an"):
            out.update(kind)
    for i, t in enumerate(tokens):
        if t.lower in _RELATIVE and i >= 2 and (not span or not span[0] <= i - 1 < span[1]):
            # "a *player* who ...", "the *bridges* that ...": the noun a relative clause describes
            kind = [j for j in (i - 1, i - 2) if is_content(tokens[j]) and tokens[j].lower not in WH_WORDS]
            if kind and kind[0] == i - 1:
                k = kind[-1] if len(kind) == 2 else i - 1
                if k >= 1 and tokens[k - 1].lower in ("the", "a", "an"):
                    out.update(range(k, i))
        if t.lower in DETERMINER_WH:
            j = i + 1
            while j < len(tokens) and j <= i + 2 and is_content(tokens[j]) and tokens[j].lower not in WH_WORDS:
                out.add(j)
                if singular(tokens[j].lower) != tokens[j].lower:
                    break  # a plural ends the kind: "which goalkeepers *play* for", not "which river *port*"
                j += 1
    return out


_AUXILIARY = frozenset({"is", "are", "was", "were", "does", "do", "did", "has", "have", "had"})


def kind_heads(tokens: list[Token]) -> set[int]:
    """The noun that says what the answer is: the word right after a determiner question word
    ("which *country*", "how many *players*"), and the next one too when an auxiliary follows it
    ("which football *club* does X play for"). Otherwise the next word may be the verb ("which
    forwards *play* for"), which says nothing about what a relation points at."""
    out: set[int] = set()
    for i, t in enumerate(tokens[:-1]):
        if t.lower not in DETERMINER_WH or not is_content(tokens[i + 1]) or tokens[i + 1].lower in WH_WORDS:
            continue
        out.add(i + 1)
        if (i + 3 < len(tokens) and is_content(tokens[i + 2]) and tokens[i + 2].lower not in WH_WORDS
                and tokens[i + 3].lower in _AUXILIARY):
            out.add(i + 2)
    return out


def other_names(mentions: Sequence[Mention], mention: Mention) -> list[tuple[int, int]]:
    """The spans of the question's other names: another capitalised name, or a shared value
    ("dramas"), names an entity, never this mention's relation."""
    return [m.span for m in mentions if m is not mention and (m.text[:1].isupper() or m.category)
            and (m.start > mention.end or m.end < mention.start)]  # not a piece of the same title


class SemanticLayer:
    """Rank relation paths for a question over any KG reachable through the granted tools."""

    def __init__(self, tools: Toolbox, similarity: Similarity | None = None,
                 settings: SemanticSettings | None = None, *, reader: Any = _FROM_TOOLS) -> None:
        self.tools = tools
        # the KG's trained reader (from its example bank) re-scores every path; None: the hand scorer alone
        self.reader = reader_of(getattr(tools, "reader", None) if reader is _FROM_TOOLS else reader)
        self.similarity = similarity
        self.settings = settings or SemanticSettings()
        self._described: dict[str, RelationNames] = {}  # predicate -> what the KG says about naming it

    async def _sims(self, units: list[str], labels: list[str]) -> list[list[float]]:
        lexical = [[lexical_similarity(u, lab) for lab in labels] for u in units]
        if self.similarity is None or not units or not labels:
            return lexical
        dense = await self.similarity(units, labels)
        return [[max(a, b) for a, b in zip(lr, dr, strict=True)] for lr, dr in zip(lexical, dense, strict=True)]

    async def _descriptions(self, predicates: set[str]) -> None:
        missing = sorted(p for p in predicates if p not in self._described)
        if not missing:
            return
        try:
            found = await self.tools["relation_names"](missing)
        except KeyError:  # not granted (ToolNotGranted is a KeyError): labels only
            found = {}
        except ToolError:  # failed (a timeout): labels only this time, asked again next time
            return
        self._described.update({p: found.get(p) or RelationNames() for p in missing})

    async def scorer(self, question: str, mention: Mention | None, steps: Sequence[PathStep],
                     exclude: Sequence[tuple[int, int]] = ()) -> QuestionScorer:
        """Similarity of each question unit to each relation label. A label's other names (the KG's
        ``skos:altLabel``) count like the label; its descriptions (``rdfs:comment``) by meaning only;
        phrases of the KG's lexicon file only when the unit is that phrase. ``exclude``: the spans
        of the reading's other topic mentions."""
        tokens, units = content_units(question, mention.span if mention else None, exclude)
        uniq = sorted({s.label for s in steps})
        await self._descriptions({s.predicate for s in steps})
        names: dict[str, set[str]] = {label: set() for label in uniq}
        descriptions: dict[str, set[str]] = {label: set() for label in uniq}
        phrases: dict[str, set[str]] = {label: set() for label in uniq}
        for step in steps:
            known = self._described.get(step.predicate) or RelationNames()
            names[step.label].update(a for a in known.names if a != step.label)
            descriptions[step.label].update(known.descriptions)
            phrases[step.label].update(known.phrases)
        texts = [u.text for u in units]
        sims = await self._sims(texts, uniq)
        extra = sorted({n for v in names.values() for n in v})
        if extra and texts:
            alt_sims = dict(zip(extra, zip(*await self._sims(texts, extra), strict=True), strict=True))
            for j, label in enumerate(uniq):
                for n in names[label]:
                    for i in range(len(texts)):
                        sims[i][j] = max(sims[i][j], alt_sims[n][i])
        desc = sorted({d for v in descriptions.values() for d in v})
        if desc and texts and self.similarity is not None:
            dense = dict(zip(desc, zip(*await self.similarity(texts, desc), strict=True), strict=True))
            for j, label in enumerate(uniq):
                for d in descriptions[label]:
                    for i in range(len(texts)):
                        sims[i][j] = max(sims[i][j], dense[d][i])
        for j, label in enumerate(uniq):
            said = {phrase_key(p) for p in phrases[label]}
            for i, text in enumerate(texts):
                if said and phrase_key(text) in said:
                    sims[i][j] = 1.0
        span = mention.span if mention else None
        scorer = QuestionScorer(tokens, units, uniq, sims, sameness=has_sameness(tokens, span),
                                settings=self.settings.scoring, type_positions=type_positions(tokens, span),
                                kind_heads=kind_heads(tokens),
                                other_names={label: [*names[label], *phrases[label]] for label in uniq})
        if self.reader is None:
            return scorer
        return ReaderScorer(scorer, self.reader, masked_words(tokens, span, exclude))

    async def candidate_paths(self, question: str, mention: Mention, exclude: Sequence[tuple[int, int]] = ()
                              ) -> list[tuple[RelationPath, PathScore]]:
        """Beam search over paths from the mention's entities, scored at every depth; the words in
        ``exclude`` (a class the question names, say) name no relation."""
        entities = mention.exact_iris()[: self.settings.max_entities]
        paths: list[RelationPath] = []
        for iri in entities:
            try:
                paths += await first_hops(self.tools, iri)
            except ToolError:
                continue
        all_paths = list(paths)
        frontier = paths
        for _depth in range(2, self.settings.max_hops + 1):
            if not frontier:
                break
            scorer = await self.scorer(question, mention, [s for p in all_paths for s in p.steps], exclude)
            ranked = sorted(frontier, key=lambda p: -scorer.score(p.steps, literal_end=p.literal_end).score)[: self.settings.beam]
            grown = await asyncio.gather(*(extend(self.tools, p) for p in ranked))
            frontier = [p for g in grown for p in g]
            all_paths += frontier
        scorer = await self.scorer(question, mention, [s for p in all_paths for s in p.steps], exclude)
        scored = [(p, scorer.score(p.steps, literal_end=p.literal_end)) for p in all_paths]
        scored.sort(key=lambda ps: (-ps[1].score, len(ps[0].steps), ps[0].key))
        return scored

    async def rank(self, question: str, mentions: list[Mention] | None = None, *, keep: int = 24,
                   exclude: Sequence[tuple[int, int]] = ()) -> RelationPaths:
        """Best paths over the likeliest mentions (``keep`` of them, every length), best first.

        The best ``executed`` paths are run: a path whose query returns nothing is dropped, and
        the confidence compares the best path with the best one that answers differently.
        """
        if mentions is None:
            mentions = await spot_mentions(question, self.tools)
        scored: list[tuple[RelationPath, PathScore, Mention]] = []
        for mention in mentions[: self.settings.max_mentions]:
            found = await self.candidate_paths(question, mention, [*exclude, *other_names(mentions, mention)])
            scored += [(p, s, mention) for p, s in found[:keep]]
        scored.sort(key=lambda t: (-t[1].score, len(t[0].steps), t[0].key))
        ranked: list[RankedPath] = []
        executed = 0
        for path, score, mention in scored[:keep]:
            rp = _ranked(path, score, mention, self.reader)
            rp.sparql = path_query(path, convention=convention_of(self.reader))
            if executed < self.settings.executed:
                executed += 1
                try:
                    res = await self.tools["run_sparql"](rp.sparql, limit=1000)
                except ToolError:
                    continue
                var = f"x{len(path.steps)}"
                rp.answers = [row[var].model_dump(exclude_none=True) for row in res.rows if var in row]
                if not rp.answers:
                    continue
            ranked.append(rp)
        ranking = RelationPaths(question=question, mention=ranked[0].mention if ranked else None, paths=ranked)
        if ranked:
            # a trained reader's paths carry the map refit on the KG's own examples (cross-fitted)
            ranking.confidence, ranking.kg_map = path_belief(ranked[0], [p for p in ranked if p.answers])
        return ranking


def _ranked(path: RelationPath, score: PathScore, mention: Mention, reader: TrainedReader | None = None) -> RankedPath:
    steps = [RelationMatch(predicate=m.step.predicate, direction=m.step.direction, label=m.step.label,
                           words=m.unit.text if m.unit else None, strength=round(m.strength, 4),
                           learned_from=score.learned_from)
             for m in score.matches]
    return RankedPath(entity=path.entity, mention=mention.text, steps=steps, score=round(score.score, 4),
                      support=round(score.support, 4), learned_from=score.learned_from,
                      calibration=reader.calibration if reader is not None else None,
                      calibration_name=reader.map_name if reader is not None else None)

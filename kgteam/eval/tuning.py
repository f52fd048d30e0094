"""Learn a KG's relation lexicon from example question/answer pairs (``kgteam tune``).

For each example the layer ranks its relation paths as it would at run time; the best path whose
answers hold a gold answer is the reading the question meant. When exactly one step of that
reading is named by no word well enough, the words the reading left free name it ("heir" for ``children``,
"other half" for ``spouse``). A phrase becomes a lexicon entry when it named the same predicate
in at least ``min_count`` examples and at least ``min_precision`` of the times it named any predicate
or stood idle (a word that also names other relations, such as "place" in "place of birth", or
that is usually left over, such as "bridge" in "which bridge did X build", is not learned). The result is data in the KG folder (``lexicon.json``), not code; the KG is not changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from kgteam.eval.datasets import DatasetItem
from kgteam.eval.metrics import Predicted, match_item
from kgteam.roles.semantic.layer import SemanticLayer
from kgteam.roles.semantic.mentions import spot_mentions
from kgteam.roles.semantic.paths import PLAIN, ChainConvention, RelationPath, path_query, walked_back
from kgteam.roles.semantic.scoring import PathScore
from kgteam.roles.semantic.text import WH_WORDS, content_units
from kgteam.tools.example_bank import BANK_CANDIDATES
from kgteam.tools.lexicon import Lexicon
from kgteam.tools.types import ToolError


class LearnedPhrase(BaseModel):
    phrase: str
    predicate: str
    label: str
    count: int
    precision: float


class TuneReport(BaseModel):
    examples: int = 0
    linked: int = 0  # a mention of the question was found in the KG
    reached: int = 0  # some ranked path reaches a gold answer
    best_was_right: int = 0  # ... and it was the layer's best path already
    failed: int = 0  # a query of the example failed
    learned: list[LearnedPhrase] = Field(default_factory=list)


async def derive_lexicon(layer: SemanticLayer, items: Sequence[DatasetItem], *, min_count: int = 3,
                         min_precision: float = 0.75, weak: float = 0.5, candidates: int = BANK_CANDIDATES,
                         progress: Callable[[int, int], Any] | None = None) -> tuple[Lexicon, TuneReport]:
    """The phrases that name predicates in ``items`` (see the module docstring) and what was seen."""
    tools = layer.tools
    report = TuneReport(examples=len(items))
    named: Counter[tuple[str, str]] = Counter()
    elsewhere: Counter[tuple[str, str]] = Counter()  # phrase named another predicate well
    idle: Counter[str] = Counter()  # phrase was left over by a reading that needed no more words
    labels: dict[str, str] = {}
    for n, item in enumerate(items, start=1):
        if progress:
            progress(n, len(items))
        try:
            mentions = await spot_mentions(item.question, tools)
            if not mentions or not item.answers:
                continue
            report.linked += 1
            found = await _gold_reading(layer, item, mentions, candidates)
        except ToolError:  # this example's queries failed (a timeout): it teaches nothing
            report.failed += 1
            continue
        if found is None:
            continue
        path, score, mention, rank = found
        report.reached += 1
        report.best_was_right += rank == 0
        used = {p for m in score.matches if m.unit is not None and m.strength >= weak for p in m.unit.positions}
        _, units = content_units(item.question, mention.span)
        free = [u.text for u in units if not set(u.positions) & used and u.text not in WH_WORDS]
        for m in score.matches:
            if m.unit is not None and m.strength >= weak:
                elsewhere[(m.unit.text, m.step.predicate)] += 1
        # a relation said again in the same direction ("X's heir's child": children, children) is a
        # step of its own that needs its own word; only a walk back may go unnamed
        back = set(walked_back([(m.step.predicate, m.step.direction) for m in score.matches]))
        weak_steps = [m.step for n, m in enumerate(score.matches, start=1)
                      if (not m.shared or n not in back) and (m.unit is None or m.strength < weak)]
        if not weak_steps:  # every step named: the free words named nothing here
            idle.update(set(free))
        for step in weak_steps:
            labels[step.predicate] = step.label
        if len(weak_steps) == 1:
            for phrase in set(free):
                named[(phrase, weak_steps[0].predicate)] += 1
            continue
        # several unnamed steps: as many free words as steps, in walking order, pair up one to one
        words = sorted((u for u in units if len(u.positions) == 1 and u.text in free), key=lambda u: u.order)
        if weak_steps and len(words) == len(weak_steps):
            for u, step in zip(words, weak_steps, strict=True):
                named[(u.text, step.predicate)] += 1
    relations: dict[str, list[str]] = {}
    taken: set[str] = set()
    for (phrase, predicate), count in named.most_common():
        against = sum(c for (ph, pr), c in [*named.items(), *elsewhere.items()] if ph == phrase and pr != predicate)
        precision = count / (count + against + idle[phrase])
        if phrase not in taken and count >= min_count and precision >= min_precision:
            taken.add(phrase)  # one predicate per phrase: the one it named most often
            relations.setdefault(predicate, []).append(phrase)
            report.learned.append(LearnedPhrase(phrase=phrase, predicate=predicate, label=labels[predicate],
                                                count=count, precision=round(precision, 3)))
    stats = {"examples": report.examples, "reached": report.reached, "best_was_right": report.best_was_right}
    return Lexicon(relations=relations, stats=stats), report



async def path_terms(tools: Any, path: RelationPath, convention: ChainConvention = PLAIN) -> list[Any] | None:
    """The terms a relation path answers (its last variable), or None when its query fails."""
    try:
        res = await tools["run_sparql"](path_query(path, convention=convention), limit=1000)
    except ToolError:
        return None
    var = f"x{len(path.steps)}"
    return [row[var] for row in res.rows if var in row]

async def _gold_reading(layer: SemanticLayer, item: DatasetItem, mentions: list[Any], candidates: int,
                        ) -> tuple[RelationPath, PathScore, Any, int] | None:
    """The best-ranked path whose answers hold a gold answer, with its rank (None: no path does)."""
    scored: list[tuple[RelationPath, PathScore, Any]] = []
    for mention in mentions[: layer.settings.max_mentions]:
        scored += [(p, s, mention) for p, s in (await layer.candidate_paths(item.question, mention))]
    scored.sort(key=lambda t: (-t[1].score, len(t[0].steps), t[0].key))
    for rank, (path, score, mention) in enumerate(scored[:candidates]):
        terms = await path_terms(layer.tools, path)
        if terms is None:
            continue
        iris = [t.value for t in terms if t.type == "uri"]
        names = await layer.tools["labels_for"](iris) if iris else {}
        for t in terms:
            pred = Predicted(label=names.get(t.value, t.value), iri=t.value if t.type == "uri" else None)
            if any(match_item(pred, gold) for gold in item.answers):
                return path, score, mention, rank
    return None

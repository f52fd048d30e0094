"""Score a relation path against the question: which words explain which relation, and what is left.

For every content unit ``u`` of the question (mention removed) the scorer turns its similarity
to each relation label of the neighbourhood into a distribution ``p(label | u)`` that also
holds a *null* outcome (the word names no relation: "bridges" in "what bridges did X build").
A path is good when each step is named by its own unit, little relational meaning of the
question is left unexplained, the steps follow the words' order outwards from the mention, and
it is no longer than the question asks for. Walking one relation there and back ("bridges that
*share* a director") is free only when the question says so.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from kgteam.roles.semantic.paths import PathStep
from kgteam.roles.semantic.text import ENTITY_WH, WH_WORDS, Token, Unit, stem


class ScoringSettings(BaseModel):
    """Weights of the path score (generic: tuned once on several KGs, never per KG)."""

    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(0.06, gt=0, description="softness of p(label | word)")
    null_similarity: float = Field(0.22, description="similarity a word has to 'no relation'")
    hop_penalty: float = Field(0.12, ge=0)
    order_penalty: float = Field(0.3, ge=0)
    unexplained_weight: float = Field(0.8, ge=0)
    type_word_weight: float = Field(0.3, ge=0, le=1, description="weight of words that name the answer's kind")
    unmarked_return_penalty: float = Field(0.5, ge=0, description="walking back a relation the question does not "
                                                                   "mark as shared")
    unnamed_penalty: float = Field(0.6, ge=0, description="a step no word of the question names")
    min_named: float = Field(0.12, ge=0, le=1, description="p(label | word) below which a word does not name it")
    kind_word_naming: float = Field(0.7, ge=0, le=1, description="p(label | word) a kind word needs to name a step")
    diffuse_top: float = Field(0.4, description="a word this far from every relation may be diffuse")
    diffuse_ratio: float = Field(0.65, description="second-best / best similarity of a diffuse word")
    unused_sameness_penalty: float = Field(0.3, ge=0, description="the question says 'same' but the path "
                                                                  "walks no relation back")
    early_wh_penalty: float = Field(0.3, ge=0, description="a question word names a step before the last")
    value_for_entity_penalty: float = Field(0.5, ge=0, description="'who' asked, the path ends at bare values")
    top_units: int = Field(4, ge=1, le=10)


@dataclass
class StepMatch:
    step: PathStep
    unit: Unit | None  # the words that name this step (None: unnamed; shared with the step before)
    strength: float  # p(label | unit)
    shared: bool = False


@dataclass
class PathScore:
    score: float
    matches: list[StepMatch] = field(default_factory=list)
    unexplained: float = 0.0
    inversions: int = 0
    hand: float | None = None  # the hand scorer's score when a trained reader re-scored the path
    learned_from: list[str] | None = None  # the examples that taught the reader this path (None: not read by one)
    learned_support: float = 0.0  # how well the trained reader's examples name the path (0: they do not)

    @property
    def support(self) -> float:
        """The weakest named step's strength (0 when a step is named by nothing), or the trained
        reader's naming when its examples taught these words this path."""
        named = [m.strength for m in self.matches if not m.shared]
        return max(min(named) if named else 0.0, self.learned_support)


@functools.lru_cache(maxsize=200_000)  # the same word and label meet at every depth of every question
def lexical_similarity(unit: str, label: str) -> float:
    """Share of the unit's word stems found among the label's (1.0: every word is there)."""
    u = [stem(w) for w in unit.split() if len(w) > 2]
    lab = {stem(w) for w in label.lower().replace("_", " ").split()}
    if not u:
        return 0.0
    hits = sum(1 for w in u if w in lab or any(len(w) >= 4 and (x.startswith(w) or w.startswith(x)) for x in lab
                                               if len(x) >= 4))
    return hits / len(u)


def _singulars(word: str) -> set[str]:
    """The word and what its singular may be by the regular English endings ("movies" -> movie,
    "companies" -> company, "boxes" -> box); a stem would join "players" and "plays", this keeps
    them apart."""
    forms = {word}
    if word.endswith("s") and not word.endswith("ss"):
        forms.add(word[:-1])
        if word.endswith("es"):
            forms.add(word[:-2])
        if word.endswith("ies"):
            forms.add(word[:-3] + "y")
    return forms


@functools.lru_cache(maxsize=50_000)
def phrase_key(text: str) -> str:
    """A phrase compared as a whole: stemmed words in order ("other halves" ~ "other half")."""
    return " ".join(stem(w) for w in text.lower().replace("_", " ").split())


class QuestionScorer:
    """Everything about one question (and one mention) needed to score many paths fast."""

    def __init__(self, tokens: list[Token], units: list[Unit], labels: list[str], sims: list[list[float]],
                 *, sameness: bool, settings: ScoringSettings | None = None, type_positions: set[int] | None = None,
                 other_names: dict[str, list[str]] | None = None, kind_heads: set[int] | None = None):
        self.settings = settings or ScoringSettings()
        self.tokens = tokens
        self.units = units
        self.labels = labels
        self.sameness = sameness
        self.type_positions = type_positions or set()
        self.kind_heads = kind_heads or set()  # "which *country*": the answer's kind, right after the wh-word
        self.other_names = other_names or {}  # label -> the relation's other names and lexicon phrases
        s = self.settings
        self.prob: list[dict[str, float]] = []
        self.relational: list[float] = []  # 1 - p(null | unit)
        for u_sims in sims:
            exps = [math.exp(v / s.temperature) for v in u_sims]
            null = math.exp(s.null_similarity / s.temperature)
            total = sum(exps) + null
            probs: dict[str, float] = {}
            for label, e in zip(labels, exps, strict=True):
                probs[label] = max(probs.get(label, 0.0), e / total)
            self.prob.append(probs)
            self.relational.append(1.0 - null / total)
        # a word about as close to several relations as to its best one, and not close to any,
        # names the domain ("bridge" among bridge relations), not a relation: treat it as a kind word
        self.diffuse: set[int] = set()
        for i, u_sims in enumerate(sims):
            top = sorted(u_sims, reverse=True)[:2]
            if len(top) == 2 and top[0] < s.diffuse_top and top[1] >= s.diffuse_ratio * top[0] > 0:
                self.diffuse.add(i)
        self._spelled_cache: dict[tuple[int, str], bool] = {}
        self._claimed_cache: dict[tuple[int, str], set[int]] = {}
        self._by_label: dict[str, list[int]] = {}
        for label in set(labels):
            ranked = sorted(range(len(units)), key=lambda i: -self.prob[i].get(label, 0.0))
            self._by_label[label] = ranked[: s.top_units]

    def _spelled(self, i: int, label: str) -> bool:
        """Is every word of unit ``i`` in the label (it names that relation again, not another)?"""
        key = (i, label)
        if key not in self._spelled_cache:
            text = self.units[i].text
            self._spelled_cache[key] = (lexical_similarity(text, label) >= 1.0
                                        or any(phrase_key(text) == phrase_key(n) for n in self.other_names.get(label, ())))
        return self._spelled_cache[key]

    def _claimed(self, i: int, label: str) -> set[int]:
        """The words unit ``i`` takes when it names ``label``: with it, the neighbours its label
        spells too ("*birth*" naming "place of birth" takes "place"; it cannot name another step)."""
        key = (i, label)
        if key not in self._claimed_cache:
            mine = set(self.units[i].positions)
            for u, unit in enumerate(self.units):
                if len(unit.positions) > 1 and mine <= set(unit.positions) and self._spelled(u, label):
                    mine |= set(unit.positions)
            self._claimed_cache[key] = mine
        return self._claimed_cache[key]

    def _restates(self, i: int, namer: int | None, label: str) -> bool:
        """Does unit ``i`` name ``label`` again, across the mention from the word that named it ("the
        *club* that X *plays* for": one relation, said around X)? Two such words on one side of the
        mention ("songs *sung* by the *singer* of X") name two steps, there and back."""
        if namer is None or namer == i or not self._spelled(i, label):
            return False
        return (self.units[i].order[0] == 1) != (self.units[namer].order[0] == 1)

    def _beside(self, i: int, namer: int) -> bool:
        """Is unit ``i`` the word that names a relation, or right beside it ("languages *spoken*")?
        A word naming that relation again further off ("songs sung by the *singer* of X") asks
        for a second step and stays unexplained until a step walks the relation back."""
        mine, theirs = set(self.units[i].positions), set(self.units[namer].positions)
        if mine & theirs:
            return True
        return any(set(u.positions) <= mine | theirs and set(u.positions) & mine and set(u.positions) & theirs
                   for u in self.units if len(u.positions) > 1)

    def unit_weight(self, i: int) -> float:
        unit = self.units[i]
        if len(unit.positions) > 1:
            return 0.0  # pairs only name relations; their words' mass is counted once, as words
        if unit.positions[0] in self.type_positions or unit.text in WH_WORDS or i in self.diffuse:
            return self.settings.type_word_weight
        return 1.0

    def _names_end(self, i: int, step: PathStep) -> bool:
        """Does the kind word ``i`` say what the step's far end is? Walked forward, a word of the
        label names what the relation points at ("which *country*" ~ "is in country"). Walked back,
        only a noun made from an active verb names the subject ("how many *players*" ~ <-"plays
        for"); the label's own noun ("which *clubs*" ~ <-"plays in club") or a passive "by" label
        names the other end."""
        if set(self.units[i].positions) - self.kind_heads or not self._spelled(i, step.label):
            return False
        label_words = set(step.label.lower().replace("_", " ").split())
        own_noun = all(_singulars(w) & label_words for w in self.units[i].text.split())
        if step.direction == "out":
            # ... except a noun of the one who does it ("which *players*" ~ "plays for country"
            # names the subject, not the country), unless the label is passive ("written by")
            agent = any(a.endswith(("er", "or")) for w in self.units[i].text.split() for a in _singulars(w))
            return own_noun or "by" in label_words or not agent
        return not own_noun and "by" not in label_words

    def can_name(self, i: int, label: str, *, last: bool = False) -> bool:
        """A word that names a kind ("which *bridge*", "the *river* X") names a relation only by spelling
        it, and no other relation ("which *country*" ~ "is in country"): by meaning alone it is near
        every relation of its domain. The kind of the answer may name the step that ends at the
        answer whenever it spells what that end is (``last``; see :meth:`_names_end`): "which
        *country* is X in" ~ "is in country", though "plays for country" spells it too. A question word names one only
        when it is unmistakable ("where" ~ "located in")."""
        if set(self.units[i].positions) & self.type_positions or i in self.diffuse:
            if last and i not in self.diffuse:
                return True
            return self._spelled(i, label) and self.prob[i].get(label, 0.0) >= 0.5  # and spells only this one
        if self.units[i].text in WH_WORDS:
            return self.prob[i].get(label, 0.0) >= self.settings.kind_word_naming
        return True

    def score(self, steps: tuple[PathStep, ...], *, literal_end: bool = False) -> PathScore:
        s = self.settings
        labels: list[str] = []  # distinct labels in walking order
        for step in steps:
            if step.label not in labels:
                labels.append(step.label)
        final = steps[-1] if steps and steps[-1].label not in labels[:-1] else None
        options = [[i for i in self._by_label.get(label, [])
                    if self.can_name(i, label, last=final is not None and label == final.label
                                     and self._names_end(i, final))] + [None]
                   for label in labels]
        best_gain, best_combo = -1.0, None
        for combo in itertools.product(*options):
            used: set[int] = set()
            gain = 0.0
            ok = True
            for label, choice in zip(labels, combo, strict=True):
                if choice is None:
                    continue
                pos = self._claimed(choice, label)
                if pos & used:
                    ok = False
                    break
                used |= pos
                gain += self.prob[choice].get(label, 0.0)
            if not ok:
                continue
            orders = [self.units[c].order for c in combo if c is not None]
            inversions = sum(1 for a, b in itertools.combinations(orders, 2) if a > b)
            gain -= s.order_penalty * inversions
            if gain > best_gain:
                best_gain, best_combo = gain, combo
        assert best_combo is not None
        unit_of = dict(zip(labels, best_combo, strict=True))
        orders = [self.units[c].order for c in best_combo if c is not None]
        inversions = sum(1 for a, b in itertools.combinations(orders, 2) if a > b)
        adj = 0.0
        matches: list[StepMatch] = []
        seen: set[str] = set()
        used = {p for lab, c in unit_of.items() if c is not None for p in self._claimed(c, lab)}
        for step in steps:
            again = step.label in seen
            seen.add(step.label)
            if again:
                # walked back: licensed by a sameness word, or by a second word naming the same
                # relation ("songs *sung* by the *singers* of X": sung by, there and back)
                second = next((i for i in self._by_label.get(step.label, [])
                               if not set(self.units[i].positions) & used and self.can_name(i, step.label)
                               and self.prob[i].get(step.label, 0.0) >= s.min_named), None)
                if not self.sameness:
                    said = self.prob[second].get(step.label, 0.0) if second is not None else 0.0
                    adj -= s.unmarked_return_penalty * (1.0 - said)
                if second is not None:
                    used |= set(self.units[second].positions)
                matches.append(StepMatch(step, self.units[second] if second is not None else None,
                                         self.prob[second].get(step.label, 0.0) if second is not None else 0.0,
                                         shared=True))
                continue
            c = unit_of[step.label]
            if c is None or self.prob[c].get(step.label, 0.0) < s.min_named:
                adj -= s.unnamed_penalty
            matches.append(StepMatch(step, self.units[c] if c is not None else None,
                                     self.prob[c].get(step.label, 0.0) if c is not None else 0.0))
        # a relation said twice: the word nearer the topic names the earlier step; the second word
        # counts in the order too ("songs sung by the singer of X": singer, then sung)
        for k, m in enumerate(matches):
            if m.shared and m.unit is not None:
                first = next(j for j in range(k) if matches[j].step.label == m.step.label)
                a = matches[first]
                if a.unit is not None and m.unit.order < a.unit.order:
                    a.unit, m.unit = m.unit, a.unit
                    a.strength, m.strength = m.strength, a.strength
        said = [m.unit.order for m in matches if m.unit is not None]
        all_inversions = sum(1 for a, b in itertools.combinations(said, 2) if a > b)
        adj -= s.order_penalty * max(0, all_inversions - inversions)
        inversions = max(inversions, all_inversions)
        namers: dict[str, list[int]] = {label: [] for label in labels}
        for m in matches:
            if m.unit is not None:
                namers[m.step.label].append(self.units.index(m.unit))
        unexplained = 0.0
        for j in range(len(self.units)):
            w = self.unit_weight(j)
            if not w or any(self._restates(j, n, lab) for lab, ns in namers.items() for n in ns):
                continue
            counted = [lab for lab, ns in namers.items()
                       if w < 1.0 or not ns or any(self.unit_weight(n) < 1.0 or self._beside(j, n) for n in ns)]
            if any(self._spelled(j, lab) for lab in counted):
                continue  # the word is in that relation's name: nothing of it is left over
            explained = sum(self.prob[j].get(lab, 0.0) for lab in counted)
            unexplained += w * max(0.0, self.relational[j] - explained)
        if self.sameness and not any(m.shared for m in matches):
            adj -= s.unused_sameness_penalty
        for m in matches[:-1]:
            if m.unit is not None and m.unit.text in WH_WORDS:
                adj -= s.early_wh_penalty
        if literal_end and any(t.lower in ENTITY_WH for t in self.tokens):
            adj -= s.value_for_entity_penalty
        total = best_gain - s.unexplained_weight * unexplained - s.hop_penalty * len(steps) + adj
        return PathScore(total, matches, unexplained, inversions)

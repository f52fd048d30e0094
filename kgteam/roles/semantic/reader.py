"""The trained reader: a KG's example bank teaches the semantic layer which readings its questions mean.

A softmax ranker over one question's candidate readings (relation paths). Its logit is the hand
scorer's score over the confidence temperature plus a learned correction, and the correction is
pulled to zero (L2), so with few examples the hand scorer stays the prior and with none nothing
changes. The reading's score becomes ``temperature * logit``: the layer's confidence (a softmax of
scores at that temperature) is then the model's own probability among rivals.

Features (sparse, by name, so the weights are readable JSON and nothing is pickled): the question's
words with the mention masked, crossed with the path and with each step; the masked question as a
whole (its template) crossed with the path; the question word crossed with the path and the hop
count; the word naming the answer's kind ("which *actors*") crossed with the last step; hop
count; whether the path ends at literals; and the hand scorer's numbers (its score, weakest and
mean word-to-relation strength, the unexplained rest). One more learned number,
"none of these readings", is what a reading must beat before the examples vouch for it
(:func:`without_answer`).
"""

from __future__ import annotations

import math
import os
import random
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kgteam.protocols.payloads import (
    CONFIDENCE_SUPPORT,
    CONFIDENCE_TEMPERATURE,
    clipped_logit,
    kg_map_name,
    platt,
)
from kgteam.roles.semantic.paths import CHAIN_CONVENTIONS, PLAIN, ChainConvention, PathStep
from kgteam.roles.semantic.scoring import PathScore, QuestionScorer
from kgteam.roles.semantic.text import DETERMINER_WH, STOPWORDS, WH_WORDS, Token, stem
from kgteam.tools.example_bank import ANSWERS_NOTHING, Candidate, Example, mark_best

FEATURES_VERSION = 1
# the learned pull (in logit units) of the question's words towards a path at which the reader
# vouches that its examples name that path: e**1, about 2.7 times likelier than the hand scorer said
VOUCH = 1.0
# the feature of the reading "none of these": the entity lacks what the question asks
NONE = "none"
# the weight in training of the examples asked as if their entity lacked what they ask, against the
# real ones (0.5: held out on MetaQA's three hop sets, 17% of those were still answered, against 61%
# without them, and every right reading was stated)
UNANSWERED_WEIGHT = 0.5
STATED_AT = 0.5  # the playbooks' default stating line (``min_confidence``): below it, "I don't know"


def masked_words(tokens: Sequence[Token], span: tuple[int, int] | None,
                 exclude: Sequence[tuple[int, int]] = ()) -> list[str]:
    """The question's words, lower-cased and stemmed, the mention (and other topics) as ``<e>``."""
    out: list[str] = []
    for i, t in enumerate(tokens):
        if (span and span[0] <= i < span[1]) or any(a <= i < b for a, b in exclude):
            if not out or out[-1] != "<e>":
                out.append("<e>")
            continue
        out.append(stem(t.text.lower()))
    return out


def path_signature(steps: Sequence[Any]) -> str:
    """``pred1>^pred2``: the path's relations in walking order, ``^`` walking one backwards."""
    return ">".join(("^" if s.direction == "in" else "") + s.predicate for s in steps)


@dataclass
class ReadingView:
    """A candidate reading as the reader sees it (built the same way at training and at run time)."""

    words: list[str]
    steps: Sequence[Any]  # .predicate, .direction
    hand: float
    support: float = 0.0
    unexplained: float = 0.0
    strength: float = 0.0
    literal_end: bool = False


def one_topic(words: Sequence[str]) -> bool:
    """Whether the question names one entity only: a path from one of two named entities leaves the
    other unexplained (their join is the reading), so the reader leaves such questions to the hand
    scorer and the shape reader."""
    return sum(1 for w in words if w == "<e>") <= 1


def symbolic_features(words: Sequence[str], steps: Sequence[Any], literal_end: bool) -> tuple[list[str], list[str]]:
    """The reading's binary features: those tying the question's words to this path (they *name*
    it, see :meth:`TrainedReader.vouches`) and the rest (priors on paths, hop counts, literals)."""
    sig = path_signature(steps)
    n = len(steps)
    wh = next((w for w in words if w in WH_WORDS), "-")
    naming = [f"t={' '.join(words)}|{sig}", f"wh={wh}|{sig}"]
    rest = [f"hops={n}", f"path={sig}", f"wh={wh}|hops={n}"]
    if literal_end:
        rest.append(f"literal|wh={wh}")
    targets = word_targets(sig)
    head = kind_head(words)
    if head is not None:  # "which *actors* ...": the answer's kind against the step that ends at it
        naming.append(f"head={head}|{targets[-1]}")
    for w in set(words):
        if w == "<e>":
            continue
        naming += [f"w={w}|{t}" for t in targets]
    return naming, rest


def kind_head(words: Sequence[str]) -> str | None:
    """The noun right after a question word that takes one ("which *actor*", "what *genr*", "how
    many *film*"), if any; not a function word ("what *is* the genre")."""
    at = next((i for i, w in enumerate(words) if w in WH_WORDS), None)
    if at is not None and words[at] == "how" and at + 1 < len(words) and words[at + 1] == "many":
        at += 1
    if at is None or words[at] not in DETERMINER_WH or at + 1 >= len(words):
        return None
    head = words[at + 1]
    return None if head == "<e>" or head in STOPWORDS or head in WH_WORDS else head


def word_targets(sig: str) -> list[str]:
    """What a question word is crossed with for the path ``sig``: the path, each step, and the last
    step as such, each once (a one-step path is its own step: counted twice, a word's pull at run
    time would be double what training fitted)."""
    keys = sig.split(">")
    return list(dict.fromkeys([sig, *keys, f"last={keys[-1]}"]))


def features(view: ReadingView) -> dict[str, float]:
    naming, rest = symbolic_features(view.words, view.steps, view.literal_end)
    out = dict.fromkeys([*naming, *rest], 1.0)
    out.update({"hand": view.hand, "support": view.support, "unexplained": view.unexplained,
                "strength": view.strength})
    return out


def candidate_view(c: Candidate) -> ReadingView:
    return ReadingView(c.words, c.steps, c.hand, c.support, c.unexplained, c.strength, c.literal_end)


@dataclass
class TrainedReader:
    """The weights of the correction, which examples taught which path, and the confidence map."""

    weights: dict[str, float]
    taught: dict[str, list[str]] = field(default_factory=dict)  # path signature -> example ids (a few)
    calibration: tuple[float, float] | None = None  # Platt (a, b) on the logit of the confidence
    stats: dict[str, Any] = field(default_factory=dict)
    kg: str | None = None  # the KG whose examples taught it (named on the answers its map calibrates)
    # Platt (a, b) for the join of two named entities (the shape reader's, which the reader does not
    # score): fitted on the examples' recorded joins, whose confidence no training changes
    join_calibration: tuple[float, float] | None = None
    join_floor: float = 0.0  # the lowest recorded join confidence: below it the map has seen nothing
    # how the KG's examples count a chain's answers (a ``CHAIN_CONVENTIONS`` name): chains count so too
    convention: str = "default"

    @property
    def map_name(self) -> str | None:
        """The name answers give this reader's confidence map (None: it has none)."""
        return kg_map_name(self.kg) if self.calibration is not None else None

    @property
    def chain_convention(self) -> ChainConvention:
        """How chains count their answers on this KG (plain English for a name this code does not know)."""
        return CHAIN_CONVENTIONS.get(self.convention, PLAIN)

    @property
    def join_map_name(self) -> str | None:
        """The name answers give the joins' map (None: there is none)."""
        return f"{kg_map_name(self.kg)}, joins" if self.join_calibration is not None else None

    def correction(self, view: ReadingView) -> float:
        if not one_topic(view.words):  # as ReaderScorer: the hand scorer's alone
            return 0.0
        named, rest = self.symbolic(view.words, view.steps, view.literal_end)
        return named + rest + self.numeric(view)

    def symbolic(self, words: Sequence[str], steps: Sequence[Any], literal_end: bool) -> tuple[float, float]:
        """The learned pull of the naming features and of the rest (see :func:`symbolic_features`)."""
        w = self.weights
        naming, rest = symbolic_features(words, steps, literal_end)
        return sum(w.get(k, 0.0) for k in naming), sum(w.get(k, 0.0) for k in rest)

    def numeric(self, view: ReadingView) -> float:
        w = self.weights
        return (w.get("hand", 0.0) * view.hand + w.get("support", 0.0) * view.support
                + w.get("unexplained", 0.0) * view.unexplained + w.get("strength", 0.0) * view.strength)

    def score(self, view: ReadingView) -> float:
        """The reading's score on the hand scorer's scale: hand score + temperature * correction."""
        return view.hand + CONFIDENCE_TEMPERATURE * self.correction(view)

    def vouches(self, view: ReadingView) -> bool:
        """Whether the examples taught the question's words this path: then the path counts as named
        (the hand scorer's confidence is capped by how well words name every step; here the
        examples name it), and the confidence is the reader's softmax through its own map."""
        return one_topic(view.words) and self.symbolic(view.words, view.steps, view.literal_end)[0] >= VOUCH

    def support(self, view: ReadingView) -> float:
        return max(view.support, self.vouched_support(self.score(view))) if self.vouches(view) else view.support

    def vouched_support(self, score: float) -> float:
        """How well the examples name a path they vouch for: fully, times the reader's belief that
        the path beats "none of these" (the entity may lack what the question asks). The hand
        scorer's own naming stands beside it: a question worded unlike every example loses nothing."""
        return CONFIDENCE_SUPPORT / (1.0 + self.none_weight(score))

    def none_weight(self, score: float) -> float:
        """The softmax weight, against a reading with this score, of "none of these readings":
        trained on the examples as if their entity lacked what they ask, it says how strongly the
        examples must pull before they vouch for a reading (0 for a reader trained without). It is
        one number on the scores' own scale: made relative to the hand scorer's best reading of the
        question instead, it stated one more wrong answer of MetaQA's 100 shape questions."""
        bias = self.weights.get(NONE)
        if bias is None:
            return 0.0
        return math.exp(max(-50.0, min(50.0, bias - score / CONFIDENCE_TEMPERATURE)))

    def to_json(self) -> dict[str, Any]:
        return {"version": FEATURES_VERSION, "weights": {k: round(v, 5) for k, v in self.weights.items()
                                                         if abs(v) >= 1e-5 or k == NONE},
                "taught": self.taught, "calibration": list(self.calibration) if self.calibration else None,
                "join_calibration": list(self.join_calibration) if self.join_calibration else None,
                "join_floor": self.join_floor,
                "convention": self.convention, "stats": self.stats}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrainedReader:
        cal, join = data.get("calibration"), data.get("join_calibration")
        return cls(weights={str(k): float(v) for k, v in data["weights"].items()},
                   taught={str(k): list(v) for k, v in (data.get("taught") or {}).items()},
                   calibration=(float(cal[0]), float(cal[1])) if cal else None, stats=dict(data.get("stats") or {}),
                   kg=str(data["kg"]) if data.get("kg") else None,
                   join_calibration=(float(join[0]), float(join[1])) if join else None,
                   join_floor=float(data.get("join_floor") or 0.0),
                   convention=str(data.get("convention") or "default"))


def _usable(examples: Sequence[Example]) -> list[Example]:
    """Examples that teach something: some candidate is right and some is wrong, and the question
    names one entity (with two, the reading is their join, which single candidate paths cannot
    show: marked right or wrong, each side would teach the reader to undo the join)."""
    return [e for e in examples if any(c.gold for c in e.candidates) and not all(c.gold for c in e.candidates)
            and all(one_topic(c.words) for c in e.candidates if c.gold)]


def without_answer(example: Example) -> Example | None:
    """The example as if its entity lacked what it asks: its right readings gone, with every path
    that walks on from one (None: it has no right reading, or nothing else is left). Its right
    reading is then "none of these"; what is left is what a reader would otherwise state ("what
    genre is X" with no genre for X leaves the genres of X's director's other films).

    Also left out: the paths a right reading walks on from (that they are not the answer is the
    real example's lesson; "none" beating the films X directed, for "who wrote the films X
    directed", taught a reader of 2-hop examples alone that "how many films did X direct" has no
    reading), and paths read with two named entities (the reader never scores them, so "none"
    beating them would teach it nothing but a bias)."""
    gone = {path_signature(c.steps) for c in example.candidates if c.gold}
    left = [c for c in example.candidates
            if one_topic(c.words) and not any(_on_one_walk(path_signature(c.steps), g) for g in gone)]
    if not gone or not left:
        return None
    return example.model_copy(update={"candidates": [c.model_copy(update={"gold": False, "f1": 0.0}) for c in left]})


def _on_one_walk(sig: str, other: str) -> bool:
    """Whether one path is the other, or walks on from it."""
    return sig == other or sig.startswith(other + ">") or other.startswith(sig + ">")


@dataclass(frozen=True)
class _Block:
    """One example's candidates as training reads them: their features one after another."""

    cols: np.ndarray  # the features' columns (:class:`FeatureRows` numbering)
    vals: np.ndarray  # their values
    lengths: np.ndarray  # how many features each candidate has
    base: np.ndarray  # each candidate's hand score over the confidence temperature
    gold: np.ndarray  # whether each candidate is right


class FeatureRows:
    """Each example's candidate features and its answer-less copy, worked out once for every reader
    :func:`teach` trains (five folds and the final one see the same examples, and working out and
    gathering their features was about a third of each reader's training). Columns are numbered
    here once for all; :func:`train` renumbers those a reader sees as they first appear, as a reader
    built alone numbers them, so its sums run in the same order and its weights are the same to the
    last bit. Keyed by object (kept alive here): an example changed after it was seen must not be
    passed again. Readers trained in threads may share one (a lock numbers the columns)."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {NONE: 0}
        self._blocks: dict[int, tuple[Example, _Block]] = {}
        self._unasked: dict[int, tuple[Example, Example | None]] = {}
        self._lock = threading.Lock()

    def block(self, e: Example) -> _Block:
        """The example's candidates' non-zero features (none for a path read with two named
        entities: the hand scorer alone scores it, as at run time), hand scores and marks."""
        with self._lock:
            kept = self._blocks.get(id(e))
            if kept is None or kept[0] is not e:
                cols: list[int] = []
                vals: list[float] = []
                lengths: list[int] = []
                for c in e.candidates:
                    items = [(k, v) for k, v in (features(candidate_view(c)) if one_topic(c.words) else {}).items()
                             if v]
                    cols += [self.vocab.setdefault(k, len(self.vocab)) for k, _ in items]
                    vals += [v for _, v in items]
                    lengths.append(len(items))
                block = _Block(np.array(cols, dtype=np.intp), np.array(vals, dtype=float),
                               np.array(lengths, dtype=np.intp),
                               np.array([c.hand for c in e.candidates], dtype=float) / CONFIDENCE_TEMPERATURE,
                               np.array([c.gold for c in e.candidates], dtype=bool))
                kept = self._blocks[id(e)] = (e, block)
            return kept[1]

    def unasked(self, e: Example) -> Example | None:
        """:func:`without_answer`, once per example."""
        with self._lock:
            kept = self._unasked.get(id(e))
            if kept is None or kept[0] is not e:
                kept = self._unasked[id(e)] = (e, without_answer(e))
            return kept[1]

    def names(self) -> list[str]:
        """Every feature seen so far, by column."""
        with self._lock:
            return list(self.vocab)


# "none of these" as a row: its one feature, NONE (column 0), hand score 0; wrong, and right
_NONE_ROWS = tuple(_Block(np.zeros(1, dtype=np.intp), np.ones(1), np.ones(1, dtype=np.intp), np.zeros(1),
                          np.array([right])) for right in (False, True))


def train(examples: Sequence[Example], *, l2: float | None = None, iterations: int = 150,
          lr: float = 0.2, unanswered: float = UNANSWERED_WEIGHT, rows: FeatureRows | None = None) -> TrainedReader:
    """Fit the correction by full-batch Adam on the softmax loss of each example's gold readings.

    The pull to zero is ``1 / examples`` by default (the loss is a mean): with 25 examples the hand
    scorer still weighs as much as they do; with 400 they may overrule it (on held-out MetaQA and
    PathQuestion readings 1/n beat a fixed 0.05 by 1-4 points at 100-400 examples, and tied at 25).

    With ``unanswered`` above 0, every example also has the reading "none of these" (one learned
    number, ``NONE``), which its right readings must beat; and each example is asked again as if
    its entity lacked what it asks (:func:`without_answer`), where "none" is right. Those weigh
    ``unanswered`` of the real ones in all: they teach the reader that one word's pull towards a
    path's last step is not the question naming the path. ``rows``: features worked out before
    (:class:`FeatureRows`, shared by the readers :func:`teach` trains)."""
    started = time.perf_counter()
    design = rows if rows is not None else FeatureRows()
    usable = _usable(examples)
    unasked = [u for u in (design.unasked(e) for e in usable) if u is not None] if unanswered > 0 else []
    blocks: list[_Block] = []
    group: list[np.ndarray] = []
    group_weight: list[float] = []
    # half the real examples' weight in all, spread over the made-up ones, none weighing more than a real one
    each = min(1.0, unanswered * len(usable) / len(unasked)) if unasked else 0.0
    for g, (e, none_right) in enumerate([*((e, False) for e in usable), *((u, True) for u in unasked)]):
        group_weight.append(each if none_right else 1.0)
        blocks.append(design.block(e))
        if unasked:  # "none of these" (a reader taught no made-up example has none)
            blocks.append(_NONE_ROWS[none_right])
        group.append(np.full(len(e.candidates) + bool(unasked), g))
    taught: dict[str, list[str]] = {}
    for e in usable:
        for sig in dict.fromkeys(path_signature(c.steps) for c in e.readings):
            if len(taught.setdefault(sig, [])) < 5:
                taught[sig].append(e.id)
    if not usable:
        return TrainedReader({}, taught, stats={"examples": 0, "seconds": 0.0})
    if l2 is None:
        l2 = 1.0 / len(usable)
    b = np.concatenate([k.base for k in blocks])
    R = np.repeat(np.arange(len(b)), np.concatenate([k.lengths for k in blocks]))
    everywhere = np.concatenate([k.cols for k in blocks])
    V = np.concatenate([k.vals for k in blocks])
    # this reader's columns: NONE first, then as its features first appear
    seen, first = np.unique(everywhere, return_index=True)
    order = seen[np.argsort(first, kind="stable")]
    order = np.concatenate([np.zeros(1, dtype=np.intp), order[order != 0]])
    every_name = design.names()
    local = np.zeros(len(every_name), dtype=np.intp)
    local[order] = np.arange(len(order))
    C = local[everywhere]
    vocab = [every_name[i] for i in order]
    y = np.concatenate([k.gold for k in blocks])
    grp = np.concatenate(group)
    gw = np.array(group_weight)[grp]
    starts = np.flatnonzero(np.r_[True, grp[1:] != grp[:-1]])
    w = np.zeros(len(vocab))
    m = np.zeros_like(w)
    s = np.zeros_like(w)
    n = len(usable)
    for t in range(1, iterations + 1):
        logit = b + np.bincount(R, weights=w[C] * V, minlength=len(b))
        top = np.maximum.reduceat(logit, starts)[grp]
        ex = np.exp(logit - top)
        p = ex / np.add.reduceat(ex, starts)[grp]
        exg = np.where(y, ex, 0.0)
        q = exg / np.add.reduceat(exg, starts)[grp]
        grad = np.bincount(C, weights=((p - q) * gw)[R] * V, minlength=len(w)) / n + l2 * w
        m = 0.9 * m + 0.1 * grad
        s = 0.999 * s + 0.001 * grad * grad
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(s / (1 - 0.999**t)) + 1e-8)
    names = vocab
    weights = {names[i]: float(w[i]) for i in np.flatnonzero(np.abs(w) >= 1e-5) if i or unasked}
    if unasked:
        weights[NONE] = float(w[0])
    return TrainedReader(weights, taught, stats={"examples": n, "features": len(vocab), "unanswered": len(unasked),
                                                 "seconds": round(time.perf_counter() - started, 3)})


def top_reading(reader: TrainedReader | None, example: Example) -> tuple[Candidate, float] | None:
    """The candidate ``reader`` ranks first (the hand scorer without one) and its confidence, as the
    layer computes it at run time (``payloads.path_confidence``, before any map): a softmax against
    the candidates that answer otherwise, times how well its weakest step is named."""
    if not example.candidates:
        return None
    views = [candidate_view(c) for c in example.candidates]
    scores = [reader.score(v) if reader else c.hand for v, c in zip(views, example.candidates, strict=True)]
    best = max(range(len(scores)), key=lambda i: (scores[i], -len(example.candidates[i].steps)))
    top = example.candidates[best]
    rivals = sum(math.exp(max(-50.0, min(50.0, (s - scores[best]) / CONFIDENCE_TEMPERATURE)))
                 for i, (s, c) in enumerate(zip(scores, example.candidates, strict=True))
                 if i != best and (not c.answers_key or c.answers_key != top.answers_key))
    support = reader.support(views[best]) if reader else top.support
    return top, min(1.0, support / CONFIDENCE_SUPPORT) / (1.0 + rivals)


def folds(examples: Sequence[Example], k: int, seed: int = 0) -> list[list[Example]]:
    """``k`` folds grouped by topic: no topic's examples are split across folds."""
    topics = sorted({e.topic for e in examples})
    random.Random(seed).shuffle(topics)
    fold_of = {t: i % k for i, t in enumerate(topics)}
    out: list[list[Example]] = [[] for _ in range(k)]
    for e in examples:
        out[fold_of[e.topic]].append(e)
    return [f for f in out if f]


@dataclass
class HeldOut:
    """Cross-fitted scores: every example read by a reader that was not trained on it."""

    hand_hits: int = 0
    reader_hits: int = 0
    scored: int = 0
    pairs: list[tuple[float, bool]] = field(default_factory=list)  # (top probability, right)
    # the top probability of each example asked as if its entity lacked what it asks (wrong if stated)
    unanswered: list[float] = field(default_factory=list)
    trained_on: dict[str, set[str]] = field(default_factory=dict)  # example id -> ids its reader saw

    @property
    def hand_rate(self) -> float:
        return self.hand_hits / self.scored if self.scored else 0.0

    @property
    def reader_rate(self) -> float:
        return self.reader_hits / self.scored if self.scored else 0.0


def cross_fit(examples: Sequence[Example], k: int = 5, seed: int = 0, rows: FeatureRows | None = None,
              pool: Executor | None = None) -> HeldOut:
    """Train on all folds but one, read the one left out; every fold in turn. An example naming two
    entities is not read: its answer is their join, never one of its single paths, so scoring those
    paths would teach the chain map that chains are mostly wrong (the join has a map of its own).
    With ``pool`` the folds' readers are trained in it, side by side (each the same as alone)."""
    out = HeldOut()
    parts = folds(examples, k, seed)
    rests = [[e for j, p in enumerate(parts) if j != i for e in p] for i in range(len(parts))]
    trained = [pool.submit(train, rest, rows=rows) for rest in rests] if pool is not None else None
    for i, held in enumerate(parts):
        rest = rests[i]
        reader = trained[i].result() if trained is not None else train(rest, rows=rows)
        seen = {e.id for e in rest}
        for e in held:
            if not e.candidates or not any(c.gold for c in e.candidates) or not all(
                    one_topic(c.words) for c in e.candidates):
                continue
            out.trained_on[e.id] = seen
            hand = top_reading(None, e)
            mine = top_reading(reader, e)
            assert hand is not None and mine is not None
            out.scored += 1
            out.hand_hits += hand[0].gold
            out.reader_hits += mine[0].gold
            out.pairs.append((mine[1], mine[0].gold))
            unasked = rows.unasked(e) if rows is not None else without_answer(e)
            lacking = top_reading(reader, unasked) if unasked is not None else None
            if lacking is not None:
                out.unanswered.append(lacking[1])
    return out


def fit_calibration(pairs: Sequence[tuple[float, bool]], iterations: int = 100,
                    ridge: float = 5.0, *, one_sided: bool = False) -> tuple[float, float] | None:
    """Platt scaling of the logit of the confidence on cross-fitted pairs (None: too few, or
    one-sided unless ``one_sided``).

    The logits are clipped to +-7 (a confidence of 0 or 1 says "far", not "infinitely far") and the
    Newton steps are damped, so pairs the confidence separates perfectly cannot blow the map up.
    Pairs of one outcome only say nothing about the slope: then only the shift is fitted (slope 1,
    the pull towards no shift bounding it, so 30 right of 30 say less than 300 of 300), and so is
    it when a full fit's slope comes out flat or backwards (a higher confidence must never mean
    less likely right)."""
    both = any(r for _, r in pairs) and not all(r for _, r in pairs)
    if len(pairs) < 30 or not (both or one_sided):
        return None
    x = np.array([clipped_logit(p) for p, _ in pairs])
    y = np.array([1.0 if r else 0.0 for _, r in pairs])
    a, b = _platt_newton(x, y, ridge, iterations, slope=both)
    if a <= 0.05:
        a, b = _platt_newton(x, y, ridge, iterations, slope=False)
    return float(round(a, 4)), float(round(b, 4))


def _platt_newton(x: np.ndarray, y: np.ndarray, ridge: float, iterations: int, *, slope: bool) -> tuple[float, float]:
    """Newton steps on the logistic loss of ``a * x + b``, pulled towards the identity map
    (``slope=False``: ``a`` stays 1)."""
    a, b = 1.0, 0.0
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(a * x + b, -50, 50)))
        h = p * (1 - p)
        if slope:
            g = np.array([np.sum((p - y) * x) + ridge * (a - 1.0), np.sum(p - y) + ridge * b])
            hess = np.array([[np.sum(h * x * x), np.sum(h * x)], [np.sum(h * x), np.sum(h)]]) + ridge * np.eye(2)
            step = np.clip(np.linalg.solve(hess, g), -1.0, 1.0)
        else:
            step = np.array([0.0, np.clip((np.sum(p - y) + ridge * b) / (np.sum(h) + ridge), -1.0, 1.0)])
        a, b = a - step[0], b - step[1]
        if np.abs(step).max() < 1e-6:
            break
    return a, b


# examples whose best reading must do better under a convention, and the most share of the examples
# it changes that may do worse
CONVENTION_EVIDENCE = 3
CONVENTION_WORSE_SHARE = 0.1


def convention_counts(examples: Sequence[Example]) -> dict[str, tuple[int, int]]:
    """For each other chain convention: how many examples' best reading gets closer to the gold
    answers under it, and how many get further. A KG whose question writers never count the topic
    (MetaQA's "the directors of the films X wrote" leaves out X when X directed one) shows only
    the first for ``no_topic``."""
    out: dict[str, tuple[int, int]] = {}
    for name in CHAIN_CONVENTIONS:
        if name == "default":
            continue
        better = worse = 0
        for e in examples:
            if not e.candidates:
                continue
            plain = max(c.f1 for c in e.candidates)
            under = max(c.f1_under.get(name, c.f1) for c in e.candidates)
            better += under > plain + 1e-9
            worse += under < plain - 1e-9
        out[name] = (better, worse)
    return out


def chosen_convention(counts: dict[str, tuple[int, int]]) -> str:
    """The convention the examples vouch for (the most gained, net; the simpler one at a tie), else ``default``."""
    order = list(CHAIN_CONVENTIONS)
    fitting = [(better - worse, -order.index(name), name) for name, (better, worse) in counts.items()
               if better >= CONVENTION_EVIDENCE and worse <= CONVENTION_WORSE_SHARE * (better + worse)]
    return max(fitting)[2] if fitting else "default"


def under_convention(examples: Sequence[Example], name: str) -> list[Example]:
    """The examples as a KG that counts answers so reads them: each reading scored by its answers
    under the convention, and the best of those marked right ("directed by, then written by" is
    the right reading once the director herself is left out)."""
    out = []
    for e in examples:
        if all(name not in c.f1_under for c in e.candidates):
            out.append(e)
            continue
        # a reading that answers nothing so is dropped at run time (``ANSWERS_NOTHING``)
        cands = [c.model_copy(update={"f1": c.f1_under.get(name, c.f1)}) for c in e.candidates
                 if c.f1_under.get(name, c.f1) != ANSWERS_NOTHING]
        if not cands:
            continue
        mark_best(cands)
        out.append(e.model_copy(update={"candidates": cands}))
    return out


_TRAINERS = max(1, min(6, os.cpu_count() or 1))  # readers :func:`teach` trains at once


def teach(examples: Sequence[Example], *, k: int = 5, seed: int = 0) -> tuple[TrainedReader, HeldOut]:
    """The reader trained on every example, with its cross-fitted held-out score and confidence map.
    How the KG counts a chain's answers is decided first: it changes which readings were right."""
    counts = convention_counts(examples)
    convention = chosen_convention(counts)
    if convention != "default":
        examples = under_convention(examples, convention)
    rows = FeatureRows()  # the six readers trained here see the same candidates: their features are worked out once
    # trained side by side: numpy lets go of the GIL in training's sums, so the readers use every core;
    # each is the same as trained alone, and their results are read in order
    with ThreadPoolExecutor(max_workers=_TRAINERS) as pool:
        final = pool.submit(train, examples, rows=rows)
        held = cross_fit(examples, k, seed, rows, pool) if len(examples) >= 2 * k else HeldOut()
        reader = final.result()
    reader.convention = convention
    reader.calibration = fit_calibration(held.pairs)
    joins = [(e.join.confidence, e.join.right) for e in examples if e.join is not None]
    reader.join_calibration = fit_calibration(joins, one_sided=True)
    reader.join_floor = round(min((c for c, _ in joins), default=0.0), 4)
    if held.unanswered:  # asked as if the entity lacked what they ask: how many would still be stated
        stated = sum(platt(c, reader.calibration) >= STATED_AT for c in held.unanswered)
        reader.stats["held_out_unanswered_stated"] = round(stated / len(held.unanswered), 4)
    reader.stats.update({"held_out": held.scored, "held_out_hand_hits1": round(held.hand_rate, 4),
                         "held_out_reader_hits1": round(held.reader_rate, 4),
                         "conventions": {name: list(c) for name, c in counts.items() if any(c)}})
    if joins:
        reader.stats.update({"joins": len(joins), "joins_right": round(sum(r for _, r in joins) / len(joins), 4)})
    return reader, held


def mean_strength(score: PathScore) -> float:
    named = [m.strength for m in score.matches if not m.shared]
    return sum(named) / len(named) if named else 0.0


class ReaderScorer(QuestionScorer):
    """The hand scorer of one question with the trained reader on top: the one place paths are
    scored (the layer's beam and ranking, every playbook's planner), so every playbook reads with it."""

    def __init__(self, base: QuestionScorer, reader: TrainedReader, words: list[str]) -> None:
        self.__dict__.update(base.__dict__)
        self.reader = reader
        self.words = words
        self._symbolic: dict[tuple[str, bool], tuple[float, float]] = {}
        self._one_topic = one_topic(words)

    def score(self, steps: tuple[PathStep, ...], *, literal_end: bool = False) -> PathScore:
        hand = super().score(steps, literal_end=literal_end)
        if not self._one_topic:  # a join of two named entities: the examples' single paths say nothing
            return hand
        key = (path_signature(steps), literal_end)
        sums = self._symbolic.get(key)
        if sums is None:  # the words are fixed for this question: one look-up per path, however often scored
            sums = self._symbolic[key] = self.reader.symbolic(self.words, steps, literal_end)
        view = ReadingView(self.words, steps, hand.score, hand.support, hand.unexplained, mean_strength(hand),
                           literal_end)
        hand.hand = hand.score
        hand.score = hand.score + CONFIDENCE_TEMPERATURE * (sums[0] + sums[1] + self.reader.numeric(view))
        hand.learned_from = self.reader.taught.get(key[0], [])[:3]
        if sums[0] >= VOUCH:
            hand.learned_support = self.reader.vouched_support(hand.score)
        return hand


_PARSED: dict[int, tuple[dict[str, Any], TrainedReader]] = {}


def convention_of(reader: TrainedReader | None) -> ChainConvention:
    """How ``reader``'s examples taught chains to count their answers (plain English without one)."""
    return reader.chain_convention if reader is not None else PLAIN


def chain_convention(tools: Any) -> ChainConvention:
    """The convention of the trained reader a toolbox carries."""
    return convention_of(reader_of(getattr(tools, "reader", None)))


def reader_of(data: Any) -> TrainedReader | None:
    """The trained reader a toolbox carries (its ``reader.json`` data, parsed once per loaded KG)."""
    if data is None:
        return None
    if isinstance(data, TrainedReader):
        return data
    hit = _PARSED.get(id(data))
    if hit is None or hit[0] is not data:
        hit = (data, TrainedReader.from_json(data))
        _PARSED[id(data)] = hit
    return hit[1]

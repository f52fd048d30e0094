"""Open-ended answers ("Tell me about X"): ROUGE-L against a reference, and factual precision.

ROUGE-L comes from the maintained ``rouge-score`` package (Google Research's reimplementation of
ROUGE-1.5.5), with its Porter stemmer. Factual precision is the share of the answer's sentences
whose cited triples (``[tN]``: the N-th triple of the answer's evidence) all exist in the KG and
are named by the sentence (subject and object); a sentence citing nothing counts as unsupported.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from kgteam.protocols.evidence import EvidenceTriple
from kgteam.roles.pgakv.writing import CITE, normalise_words, sentences_of


class OpenEndedScore(BaseModel):
    rouge_l: float
    factual_precision: float | None  # None: the answer states nothing (no sentence, or an abstention)
    sentences: int
    supported: int


@lru_cache(maxsize=1)
def _scorer() -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(answer: str, reference: str) -> float:
    """ROUGE-L F-measure of the answer (citations removed) against the reference."""
    return float(_scorer().score(reference, CITE.sub(" ", answer))["rougeL"].fmeasure)


async def _exists(t: EvidenceTriple, tools: Any) -> bool:
    from kgteam.eval.grading import ask_query

    try:
        result = await tools.run_sparql(ask_query(t))
    except Exception:  # noqa: BLE001 - an unsafe IRI or a store error: the triple is not verified
        return False
    return bool(result.boolean)


async def factual_precision(answer: str, triples: Sequence[EvidenceTriple], tools: Any,
                            labels: dict[str, str] | None = None) -> tuple[int, int]:
    """(supported sentences, sentences). A cited triple must exist in the KG (ASK) and the sentence
    must name its subject and object as the KG labels them (the answer's own labels are not trusted)."""
    sentences = sentences_of(answer)
    exists: dict[int, bool] = {}
    if labels is None:
        iris = sorted({t.subject for t in triples} | {t.object for t in triples if not t.object_is_literal})
        labels = await tools.labels_for(iris) if iris else {}
    supported = 0
    for s in sentences:
        cited = [int(m) for m in CITE.findall(s)]
        if not cited or any(i >= len(triples) for i in cited):
            continue
        said = normalise_words(CITE.sub(" ", s))
        ok = True
        for i in cited:
            t = triples[i]
            if i not in exists:
                exists[i] = await _exists(t, tools)
            ends = [labels.get(t.subject, t.subject), t.object if t.object_is_literal else labels.get(t.object, t.object)]
            if not exists[i] or any(normalise_words(e) not in said for e in ends):
                ok = False
                break
        supported += ok
    return supported, len(sentences)


async def score_open_ended(answer: str, triples: Sequence[EvidenceTriple], reference: str, tools: Any,
                           *, stated: bool = True) -> OpenEndedScore:
    """ROUGE-L always; factual precision only for a stated answer (an "I don't know" states no fact)."""
    supported, n = await factual_precision(answer, triples, tools) if stated else (0, 0)
    return OpenEndedScore(rouge_l=round(rouge_l(answer, reference), 4),
                          factual_precision=round(supported / n, 4) if n else None, sentences=n, supported=supported)

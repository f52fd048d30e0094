"""Answers from the fixed graph: values for precise questions, cited sentences for open-ended ones.

Only facts (verified, replaced or added real triples) are ever stated; unverified pseudo-triples
stay in the evidence's pseudo-graph for people to see. Each sentence of an open-ended answer cites
the facts it states as ``[tN]``, N being the triple's position in the answer's evidence.
"""

from __future__ import annotations

import re

from kgteam.llm.fencing import one_line
from kgteam.protocols.evidence import EvidenceTriple
from kgteam.protocols.payloads import AnswerValue, FixedTriple, PseudoGraph

_OPEN = re.compile(r"^\s*(?:please\s+)?(?:tell me(?: more)? about|describe|what do you know about|"
                   r"give (?:me )?an overview of|summari[sz]e|what is known about)\b"
                   r"|\bwhy is .+ (?:known|famous)\b", re.IGNORECASE)
_WHO_IS_NAME = re.compile(r"^\s*[Ww]ho (?:is|was) (?:[A-Z][\w'.-]*\s*)+\?*\s*$")  # "Who was Ada Lovelace?"
CITE = re.compile(r"\[t(\d+)\]")
SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)\s+(?=\S)")  # not after an initial ("William H. Macy")


def is_open_ended(question: str) -> bool:
    """"Tell me about X", "Describe X", "Why is X known?": the answer is a short text, not values."""
    return bool(_OPEN.search(question.strip()) or _WHO_IS_NAME.match(question))


def words(text: str) -> str:
    return " ".join(str(text).replace("_", " ").split())


def answer_values(graph: PseudoGraph, facts: list[FixedTriple]) -> list[AnswerValue]:
    """The answer ends of the facts that check an answer-marked pseudo-triple, in graph order."""
    out: dict[str, AnswerValue] = {}
    for f in facts:
        if f.pseudo is None or f.pseudo >= len(graph.triples):
            continue
        end = graph.triples[f.pseudo].answer_end
        t = f.triple
        if end == "object":
            key, value = t.object, (AnswerValue(label=one_line(t.object_label or t.object))
                                    if t.object_is_literal else AnswerValue(label=one_line(t.object_label or t.object),
                                                                            iri=t.object))
        elif end == "subject":
            key, value = t.subject, AnswerValue(label=one_line(t.subject_label or t.subject), iri=t.subject)
        else:
            continue
        out.setdefault(key, value)
    return list(out.values())


def cited_sentences(triples: list[EvidenceTriple], *, max_sentences: int = 6, max_objects: int = 4) -> list[str]:
    """One sentence per (subject, relation) of the facts, listing its values and citing each one."""
    groups: dict[tuple[str, str], list[int]] = {}
    for n, t in enumerate(triples):
        groups.setdefault((t.subject, t.predicate), []).append(n)
    out = []
    for ids in list(groups.values())[:max_sentences]:
        shown = ids[:max_objects]
        t = triples[shown[0]]
        objects = [words(triples[i].object_label or triples[i].object) for i in shown]
        listed = objects[0] if len(objects) == 1 else ", ".join(objects[:-1]) + " and " + objects[-1]
        cites = "".join(f"[t{i}]" for i in shown)
        out.append(one_line(f"{words(t.subject_label or t.subject)} {words(t.predicate_label or t.predicate)} "
                            f"{listed} {cites}.").replace(" .", "."))
    return out


def sentences_of(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text.strip()) if s.strip()]


def sentence_supported(sentence: str, triples: list[EvidenceTriple]) -> bool:
    """A sentence cites at least one fact, every cited fact exists in ``triples``, and the sentence
    names each cited fact's subject and object."""
    cited = [int(m) for m in CITE.findall(sentence)]
    if not cited or any(i >= len(triples) for i in cited):
        return False
    said = normalise_words(CITE.sub(" ", sentence))
    for i in cited:
        t = triples[i]
        for end in (t.subject_label or t.subject, t.object_label or t.object):
            if normalise_words(end) not in said:
                return False
    return True


def normalise_words(text: str) -> str:
    return " " + " ".join(re.findall(r"\w+", str(text).replace("_", " ").lower())) + " "

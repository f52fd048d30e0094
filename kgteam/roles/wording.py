"""Is a model's wording of a grounded answer only the answer? The check behind every phrased answer.

A model asked to phrase KG results may add claims, links or instructions (a prompt injection in
a label can ask it to). Only the answer values may carry content, so once they are removed the
rest must be glue: one plain sentence whose words come from the question, the evidence (the
relation and entity labels the answer rests on) or a closed list of English function words, with
no links, no numbers or names the question and evidence do not hold, and no negation that could
contradict the KG. When the wording fails, the answer text is rebuilt from the values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kgteam.llm.fencing import one_line
from kgteam.roles.semantic.text import STOPWORDS, stem

_URL = re.compile(r"(?:https?://|www\.)\S+|\b[\w-]+\.(?:com|org|net|io|info|example|xyz|ru)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|never|no|none|nobody|nothing|neither|nor)\b|n't\b", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_CAPWORD = re.compile(r"\b[A-Z][\w'-]*")
_SENTENCE_START = re.compile(r"(?:^\s*|[.?!:;]\s+)$")
_SENTENCE_END = re.compile(r"[.?!;]+\s+(?=\S)")
_MARKUP = re.compile(r"[<>{}`\n\r]|[\uff1c\uff1e\u00ab\u00bb]")
_WORD = re.compile(r"[^\W\d_][\w'-]*")
# Requests and commands are not glue even where the question scorer treats them as stopwords.
_NOT_GLUE = frozenset(("please", "tell", "give", "show", "find", "list", "name", "names"))
GLUE = (STOPWORDS - _NOT_GLUE) | frozenset((
    "following", "include", "includes", "included", "including", "namely", "known", "called", "named",
    "being", "respectively", "here",
    # words about the answer itself ("The answer: ...", "The results are ...")
    "answer", "answers", "result", "results"))


def _stems(texts: Iterable[str]) -> set[str]:
    return {stem(w) for t in texts for w in _WORD.findall(t.lower())}


def _without(answer: str, names: Iterable[str]) -> str:
    rest = answer
    for name in sorted({n for n in names if n.strip()}, key=len, reverse=True):
        rest = re.sub(re.escape(name), " ", rest, flags=re.IGNORECASE)
    return rest


def wording_problem(answer: str, listed: list[str], plain: str, question: str,
                    evidence: Iterable[str] = ()) -> str | None:
    """Why a model's wording of a grounded answer may not be shown, or None.

    ``listed`` are the answer values the text must carry, ``plain`` their plain list (for the
    length bound) and ``evidence`` the labels the answer rests on (relations, the entities on
    the path), whose words the sentence may use.
    """
    evidence = [e for e in evidence if e]
    rest = _without(answer, listed)
    if _URL.search(rest):
        return "the answer must not contain links"
    if _MARKUP.search(rest):
        return "the answer must be one plain sentence, without markup or line breaks"
    if len(_SENTENCE_END.findall(rest.strip())) > 0:
        return "the answer must be one sentence; it adds another"
    known_digits = set(_DIGITS.findall(question)) | {d for n in [*listed, *evidence] for d in _DIGITS.findall(n)}
    extra = [d for d in _DIGITS.findall(rest) if d not in known_digits]
    if extra:
        return f"the answer must not add numbers the results do not hold: {extra[:3]}"
    if _NEGATION.search(rest):
        return "state the results; do not negate or contradict them"
    known = _stems([question, *evidence])
    names = [m.group(0) for m in _CAPWORD.finditer(rest)
             if stem(m.group(0)) not in known and m.group(0) != "I"
             and not _SENTENCE_START.search(rest[: m.start()])]
    if names:
        return f"the answer must not name anything besides the results: {names[:3]}"
    foreign = [w for w in _WORD.findall(_without(rest, evidence).lower())
               if w not in GLUE and w.strip("'-") not in GLUE and stem(w) not in known]
    if foreign:
        return f"the answer adds words that neither the question nor the results hold: {foreign[:4]}"
    if len(answer) > 2 * len(plain) + 100:
        return "the answer is much longer than the results; keep it short"
    return None


def answer_list(labels: list[str], limit: int) -> str:
    """The plain list of answer labels, each shown as one line of data (a label is never markup):
    the text every answering role falls back to."""
    shown = [one_line(label) for label in labels[:limit]]
    more = len(labels) - len(shown)
    return ", ".join(shown) + (f" (and {more} more)" if more > 0 else "")

"""Reading documents without a model: sentences, names, and the span a question asks for.

Generic English only: sentence breaks, names written with capitals, and how close a name sits to
the question's own words. No relation names and no cue words of any dataset live here; what a
relation is called comes from the KG (see ``triple_extractor``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgteam.protocols.evidence import EvidenceDocument
from kgteam.roles.adaptive.answer_kind import is_time_name
from kgteam.roles.semantic.shape import read_shape
from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, normalise, stem, tokenize

_SENTENCE = re.compile(r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\b(?:Mr|Dr|Ms|St|Jr|Sr)\.)(?<!\bMrs\.)\s+(?=[A-Z\"'(\[])|\n+")
# a name: capitalised words, allowing initials ("D. W. Griffith") and short joiners inside ("Anne of Green Gables")
_NAME = re.compile(
    r"[A-Z][\w'’-]*\.?(?:\s+(?:(?:of|de|la|von|van|der|the|da|du|le)\s+){0,2}[A-Z][\w'’-]*\.?)*")
_JOINERS = {"of", "de", "la", "von", "van", "der", "the", "da", "du", "le"}
# a number as documents write one ("640", "1,200", "212.5"), not inside a word or a date
_NUMBER_SPAN = re.compile(r"(?<![\w.,-])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,]\d)|(?<![\w.,-])\d+(?:\.\d+)?(?![\w]|[.,]\d)")
_YEAR_SPAN = re.compile(r"(?<![\w.,-])(?:1\d{3}|20\d{2})(?![\w]|[.,]\d)")
_INITIAL = re.compile(r"^[A-Z]\.$")
MAX_SENTENCE_CHARS = 600


# a line break inside a paragraph, after a lower-case word or a comma and before no list item,
# heading or blank line: the text was wrapped there ("Maureen O'Hara, in her\nfirst American film")
_SOFT_WRAP = re.compile(r"(?:(?<=\s)|(?<=^))([a-z\u00df-\u00ff][\w'’-]*|[^\s]*,)[ \t]*\n"
                        r"(?![ \t]*(?:\n|[#>*|-]|\d+[.)]\s))[ \t]*", re.MULTILINE)


def sentences(text: str) -> list[str]:
    """Sentences (and lines) of ``text``, long ones cut, empty ones dropped; a line wrapped inside a
    sentence is read as one line, so a name and what is said of it stay in one sentence."""
    out = []
    for part in _SENTENCE.split(_SOFT_WRAP.sub(r"\1 ", text)):
        part = part.strip()
        while len(part) > MAX_SENTENCE_CHARS:
            cut = part.rfind(" ", 0, MAX_SENTENCE_CHARS)
            cut = cut if cut > 0 else MAX_SENTENCE_CHARS
            out.append(part[:cut])
            part = part[cut:].strip()
        if part:
            out.append(part)
    return out


def content_words(text: str) -> list[str]:
    """Stems of the words that carry meaning (closed-class English words and question words aside)."""
    return [stem(t.lower) for t in tokenize(text)
            if t.lower not in STOPWORDS and t.lower not in WH_WORDS and len(t.lower) > 1]


@dataclass(frozen=True)
class NameSpan:
    text: str
    start: int  # character offsets in the sentence
    end: int


def names_in(sentence: str) -> list[NameSpan]:
    """Spans written as names: runs of capitalised words. A run at the very start of a sentence
    that is a single everyday word ("The", "After") is not a name."""
    out = []
    for m in _NAME.finditer(sentence):
        words = m.group(0).split()
        if words and not _INITIAL.match(words[-1]):
            words[-1] = words[-1].rstrip(".")
        while words and words[-1].lower().rstrip(".") in _JOINERS:
            words.pop()
        at_start = not sentence[: m.start()].strip(" \"'([")
        # a capitalised closed-class word opens a name only mid-sentence ("in The Silent Harbour")
        while at_start and words and words[0].lower() in STOPWORDS | WH_WORDS:
            words.pop(0)
            at_start = False
        if not words or (len(words) == 1 and (at_start or len(words[0]) < 2)):
            continue  # one capitalised word opening a sentence is only the sentence's capital
        text = " ".join(words)
        start = sentence.find(text, m.start())
        out.append(_without_possessive(NameSpan(text, start, start + len(text))))  # "Caspar Wren's" names Caspar Wren
    return out


def value_spans(sentence: str, kind: str) -> list[NameSpan]:
    """The spans of ``sentence`` that could answer a question asking for ``kind``: numbers for a
    number, years and month or weekday names for a date, names written with capitals (a month or
    a weekday aside: those are dates) for anything else."""
    if kind == "number":
        return [NameSpan(m.group(0), m.start(), m.end()) for m in _NUMBER_SPAN.finditer(sentence)]
    if kind == "date":
        spans = [NameSpan(m.group(0), m.start(), m.end()) for m in _YEAR_SPAN.finditer(sentence)]
        return spans + [n for n in names_in(sentence) if is_time_name(n.text)]
    return [n for n in names_in(sentence) if not is_time_name(n.text)]


def question_names(question: str) -> list[str]:
    """Names the question writes (its first word aside when that is only the capital of a sentence)."""
    found = names_in(question)
    return [n.text for n in found]


def contains_name(text: str, name: str) -> bool:
    """``name`` occurs in ``text`` as whole words, ignoring case and punctuation."""
    want = normalise(name)
    return bool(want) and f" {want} " in f" {normalise(text)} "


@dataclass
class Candidate:
    """A span some document offers as the answer, with the sentences that offer it."""

    text: str
    score: float
    document: str
    sentence: str
    support: list[tuple[str, str]] = field(default_factory=list)  # (document id, sentence)


def _without_possessive(span: NameSpan) -> NameSpan:
    for mark in ("'s", "’s"):
        if span.text.endswith(mark):
            return NameSpan(span.text[: -len(mark)], span.start, span.end - len(mark))
    return span


def _closeness(sentence: str, span: NameSpan, anchors: list[tuple[int, int]]) -> float:
    """1 when the span touches one of the question's words in the sentence, falling with distance
    in words."""
    if not anchors:
        return 0.0
    gaps = []
    for a_start, a_end in anchors:
        if span.end <= a_start:
            between = sentence[span.end:a_start]
        elif a_end <= span.start:
            between = sentence[a_end:span.start]
        else:
            continue
        gaps.append(len(between.split()))
    return 1.0 / (1.0 + min(gaps)) if gaps else 0.0


def _anchors(sentence: str, words: set[str], names: list[str]) -> list[tuple[int, int]]:
    """Where the question's content words and names occur in the sentence (character spans)."""
    spots = [(t.start, t.end) for t in tokenize(sentence) if stem(t.lower) in words]
    low = sentence.lower()
    for name in names:
        i = low.find(name.lower())
        if i >= 0:
            spots.append((i, i + len(name)))
    return spots


def answer_candidates(question: str, documents: list[EvidenceDocument], *, limit: int = 5,
                      kind: str | None = None) -> list[Candidate]:
    """Spans in the documents that the question may ask for, best first: only spans of the kind
    asked (``kind``, else the shape reading's answer kind; see ``value_spans``).

    A sentence counts by how many of the question's content words and names it shares; a name in
    it scores by that share and by how close it stands to those words. Names the question itself
    writes are never answers; the same name found in several documents adds up."""
    q_names = question_names(question)
    q_words = set(content_words(question))
    q_name_words = {stem(w.lower()) for n in q_names for w in n.split()}
    focus = q_words - q_name_words  # the words that say what is asked
    kind = kind or read_shape(question).answer_kind
    q_values = {normalise(n.text) for n in value_spans(question, kind)} if kind in ("number", "date") else set()
    years_only = kind == "date" and any(t.lower in ("year", "years") for t in tokenize(question))  # a month is no year
    by_text: dict[str, Candidate] = {}
    for rank, doc in enumerate(documents):
        doc_weight = 1.0 / (1.0 + 0.15 * rank)
        title = doc.title or ""
        for sentence in sentences(doc.text):
            s_words = set(content_words(sentence))
            shared = len(q_words & s_words) + sum(contains_name(sentence, n) for n in q_names)
            if shared == 0:
                continue
            about = 1.0 if not q_names or any(contains_name(sentence, n) or contains_name(title, n)
                                             for n in q_names) else 0.5
            overlap = shared / max(1, len(q_words) + len(q_names))
            anchors = _anchors(sentence, focus, q_names)
            for span in value_spans(sentence, kind):
                if normalise(span.text) in q_values or (years_only and not span.text.isdigit()):
                    continue
                if any(contains_name(n, span.text) or contains_name(span.text, n) for n in q_names):
                    continue
                if contains_name(title, span.text) and normalise(span.text) == normalise(title):
                    continue
                near = _closeness(sentence, span, anchors)
                # standing right beside the words that say what is asked counts most; a lone
                # capitalised word (an adjective of nationality, a place) is a weaker name
                single = 0.8 if kind not in ("number", "date") and len(span.text.split()) == 1 else 1.0
                score = doc_weight * about * single * (0.3 * overlap + 0.7 * near)
                key = normalise(span.text)
                cand = by_text.get(key)
                if cand is None:
                    by_text[key] = Candidate(span.text, score, doc.id, sentence, [(doc.id, sentence)])
                else:
                    cand.support.append((doc.id, sentence))
                    if score > cand.score:
                        cand.score, cand.document, cand.sentence = score + 0.1 * cand.score, doc.id, sentence
                    else:
                        cand.score += 0.1 * score
    ranked = sorted(by_text.values(), key=lambda c: -c.score)
    return ranked[:limit]


def supported_by(value: str, documents: list[EvidenceDocument]) -> EvidenceDocument | None:
    """The first document that states ``value`` word for word, or None."""
    for doc in documents:
        if contains_name(doc.text, value) or contains_name(doc.title or "", value):
            return doc
    return None


def contested_by(question: str, values: list[str], documents: list[EvidenceDocument], *,
                 kind: str | None = None) -> list[str]:
    """Other values that the documents write where they say exactly what is asked, when they never
    write the answer there: a sentence is "on the question" when it writes every name of the
    question that its document's title does not (a question naming only the title has none). The
    answer's values are not in any such sentence, and other spans of the kind asked are: those."""
    kind = kind or read_shape(question).answer_kind
    q_names = question_names(question)
    others: list[str] = []
    for doc in documents:
        title = doc.title or ""
        specific = [n for n in q_names if not contains_name(title, n)]
        if not specific:
            continue
        for sentence in sentences(doc.text):
            if not all(contains_name(sentence, n) for n in specific):
                continue
            if any(contains_name(sentence, v) for v in values):
                return []  # the documents say the answer where they say what is asked
            others += [sp.text for sp in value_spans(sentence, kind)
                       if not any(contains_name(n, sp.text) or contains_name(sp.text, n) for n in q_names)
                       and not contains_name(title, sp.text)]
    return list(dict.fromkeys(others))

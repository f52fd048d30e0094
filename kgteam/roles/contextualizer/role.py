"""Contextualizer: turns a chat follow-up ("and where was it made?") into a standalone question.

Without history, or when the question has no reference to resolve, it passes the question
through without a model call. References are plain English: the pronouns it/its, they/them/their,
he/she/him/her/his, and "that/this/the same <noun>" for any noun ("that one", "this river"). A
pronoun that is part of a known name ("It Rains in Caldry", "They Came Home") is no reference.

Which earlier thing a reference means is decided from the conversation and the KG, with no word
list of any domain: he/she prefer a person (what an earlier "who" question answered, or what the
KG types as a person), else the last named entity; it/that prefer anything else and never take a
person while a thing is on offer; "that <noun>" prefers a candidate whose KG class labels (or
own label) share the noun's stem; a candidate that has a relation whose label shares a word with
the question scores too ("when was it founded": a founding year). A follow-up that names the
class of what it asks for ("which *river* is it on?", a KG class) must resolve to a candidate with
an edge to a thing of that class: a candidate without one is never substituted, and when no
candidate has one the role asks back (an "unknown" answer naming the candidates) instead of
rewriting. The model rewrites the question from the session history; the rewrite must name
something the history mentions and leave no reference unresolved, else a deterministic rewrite
replaces the reference with the chosen referent.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence
from kgteam.protocols.payloads import Answer, Question
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles
from kgteam.roles.semantic.mentions import is_exact_hit
from kgteam.roles.semantic.shape import read_shape
from kgteam.roles.semantic.text import singular, stem
from kgteam.tools.iri import RDF_TYPE, humanise, local_name
from kgteam.tools.toolbox import Toolbox
from kgteam.tools.types import ToolError


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PERSONAL = _words("he she him her his")
_NEUTER = _words("it its")
_PLURAL = _words("they them their")
_PRONOUN_RE = re.compile(r"\b(?:" + "|".join(sorted(_PERSONAL | _NEUTER | _PLURAL)) + r")\b", re.IGNORECASE)
# "that river", "this one", "the same town"; a bare "that"/"this" ending the question ("who made that?")
_DEMONSTRATIVE_RE = re.compile(r"\b(?:(that|this)|the\s+same)\s+([A-Za-z][\w-]*)\b", re.IGNORECASE)
_BARE_DEMONSTRATIVE_RE = re.compile(r"\b(?:that|this)(?=\s*[?.!]*\s*$)", re.IGNORECASE)
# English function words: never the noun of "that <noun>"
_FUNCTION = _words(
    "a an the of in on at by for to from with and or but is are was were be been being do does did has have "
    "had can could would should will shall may might must not no also too very so then than there here "
    "this that these those it its he she him her his they them their we our you your i me my who whom "
    "whose what which when where why how all any some each every more most other else same such as into "
    "about over under after before between through during"
)
# words after which "that" starts a noun phrase, not a relative clause ("in that town", "is that one")
_BEFORE_DEMONSTRATIVE = _words(
    "of in on at by for to from with into about like than and or but is are was were be been do does did "
    "has have had what which who whom whose where when how why made wrote won built gave took saw found "
    "got kept left led held sold bought taught began"
)
_POSSESSIVE = {"its", "their", "his"}
_CAPS = re.compile(r"\b[A-Z][\w'.-]*(?:\s+(?:[A-Z][\w'.-]*|of|the|and|de|la|von|van))*")
_SENTENCE_START = re.compile(r"(?:^\s*|[.?!:;]\s+|^\s*(?:and|so|then|ok(?:ay)?|also)[\s,]+)$", re.IGNORECASE)
_WORD = re.compile(r"[\w'-]+", re.UNICODE)
_MAX_TITLE_WORDS = 6
_WHO = _words("who whom whose")
_WH = _words("what which who whom whose when where how why")
# what a class of people is called (its label or IRI's local name) in any KG: plain English and the
# shared vocabularies (foaf:Person, schema:Person, dbo:Person, Wikidata's "human", Q5)
_PERSON_CLASS_WORDS = _words("person persons people human humans")
_PERSON_CLASS_IRIS = {"http://www.wikidata.org/entity/Q5"}
# naming/typing predicates every entity may have: they say nothing about what the question asks
_NAMING = {"label", "altlabel", "preflabel", "type", "name", "comment", "description"}
_MAX_SCORED = 5  # candidates checked against the KG (each costs a schema lookup)

RefKind = Literal["thing", "person", "any"]


class ContextualizerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    use_model: bool = True
    max_repairs: int = Field(1, ge=0, le=3)
    history_turns: int = Field(3, ge=1, le=20)


class Rewrite(BaseModel):
    question: str = Field(min_length=3, max_length=500)


def _protected_spans(question: str, protected: Iterable[str]) -> list[tuple[int, int]]:
    """Where the question holds a known name (case-sensitive, whole words): no pronoun in there refers."""
    spans = []
    for name in protected:
        if name.strip():
            spans += [(m.start(), m.end()) for m in re.finditer(r"(?<!\w)" + re.escape(name) + r"(?!\w)", question)]
    return spans


def _previous_word(question: str, pos: int) -> str | None:
    """The word right before ``pos``, or None at the start of a sentence or clause."""
    before = question[:pos]
    if _SENTENCE_START.search(before) or re.search(r"[,;:(]\s*$", before):
        return None
    words = _WORD.findall(before)
    return words[-1].lower() if words else None


def _is_demonstrative(question: str, m: re.Match[str]) -> bool:
    """"that/this/the same <noun>" points back; a relative "that" ("the towns that lie on") does not."""
    noun = m.group(2)
    if not noun.islower() or noun.lower() in _FUNCTION:
        return False  # "that Ada Brook built", "that it was", "that was"
    if m.group(1) and m.group(1).lower() == "that":
        prev = _previous_word(question, m.start())
        return prev is None or prev in _BEFORE_DEMONSTRATIVE or (len(prev) > 3 and prev.endswith("ed"))
    if not m.group(1):  # "the same town as Ostrand" compares within the question: nothing to resolve
        return not re.match(r"\s+as\b", question[m.end():], re.IGNORECASE)
    return True


def references(question: str, protected: Iterable[str] = ()) -> list[re.Match[str]]:
    """The reference words of ``question`` that point back into the conversation, in order.

    Pronouns (it, they, him, her ...) and "that/this/the same <noun>" ("that one", "this river").
    A pronoun inside a known name ("It Rains in Caldry", "They Came Home") is not one, nor is a
    capitalised pronoun mid-sentence (a title word: "who painted It Rains in Caldry").
    """
    spans = _protected_spans(question, protected)
    found = [m for m in _DEMONSTRATIVE_RE.finditer(question) if _is_demonstrative(question, m)]
    found += [m for m in _BARE_DEMONSTRATIVE_RE.finditer(question)
              if not any(d.start() <= m.start() < d.end() for d in found)]
    found += [m for m in _PRONOUN_RE.finditer(question) if not any(d.start() <= m.start() < d.end() for d in found)]
    out = []
    for m in sorted(found, key=lambda m: m.start()):
        if any(s <= m.start() and m.end() <= e for s, e in spans):
            continue
        if m.group(0)[:1].isupper() and not _SENTENCE_START.search(question[: m.start()]):
            continue
        out.append(m)
    return out


def needs_context(question: str, protected: Iterable[str] = ()) -> bool:
    return bool(references(question, protected))


def reference_kind(word: str) -> RefKind:
    """What a reference points at: a thing (it, that one, this river), a person (he, her) or either (they)."""
    w = " ".join(word.lower().split())
    if w in _PERSONAL:
        return "person"
    if w in _PLURAL:
        return "any"
    return "thing"


def reference_noun(word: str) -> str | None:
    """The noun of "that river" / "the same town" (None for pronouns and "that one")."""
    parts = word.lower().split()
    if len(parts) < 2 or parts[-1] == "one":
        return None
    return parts[-1]


def previous_topic(question: str) -> str | None:
    """The entity an earlier question was about: its longest capitalised span."""
    spans = [s.strip() for s in _CAPS.findall(question[1:] if question[:1].isupper() else question)]
    spans = [s for s in spans if s.lower() not in {"i", *_WH}]
    return max(spans, key=len) if spans else None


def _asks_who(question: str) -> bool:
    """The question's wh-word is who/whom/whose: its answers are people (or people-like agents)."""
    first = next((w for w in (t.lower() for t in _WORD.findall(question)) if w in _WH), None)
    return first in _WHO


@dataclass
class Referent:
    name: str
    iri: str | None = None
    from_answer: bool = True  # an answer value (else the previous question's topic)
    asked_who: bool = False  # an answer to a "who" question


def referent_candidates(history: list[tuple[str, Answer]]) -> list[Referent]:
    """Things a follow-up may point at, most recent first: last answer's values, then its topic."""
    out: dict[str, Referent] = {}
    for q, a in reversed(history):
        who = _asks_who(q)
        for v in a.values[:3]:
            if v.label:
                out.setdefault(v.label, Referent(v.label, v.iri, True, who))
        topic = previous_topic(q)
        if topic:
            out.setdefault(topic, Referent(topic, None, False))
    return list(out.values())


def referents(history: list[tuple[str, Answer]]) -> list[str]:
    """Names a follow-up may point at, most likely first: last answer's values, then its topic."""
    return [r.name for r in referent_candidates(history)]


def _possessive(question: str, m: re.Match[str]) -> bool:
    word = m.group(0).lower()
    if word in _POSSESSIVE:
        return True
    if word != "her":
        return False
    nxt = _WORD.match(question[m.end():].lstrip())
    return nxt is not None and nxt.group(0).lower() not in _FUNCTION  # "her birthplace", not "to her"


def deterministic_rewrite(question: str, history: list[tuple[str, Answer]], *, target: str | None = None,
                          protected: Iterable[str] = ()) -> str:
    """Replace the first reference with ``target`` (default: the most recent candidate)."""
    names = referents(history)
    target = target or (names[0] if names else None)
    refs = references(question, protected)
    if not target or not refs:
        return question
    m = refs[0]
    text = question[: m.start()] + (f"{target}'s" if _possessive(question, m) else target) + question[m.end():]
    return re.sub(r"^\s*(?:and|so|then|ok(?:ay)?|also)\b[\s,]*", "", text, flags=re.IGNORECASE).strip()


async def title_spans(question: str, tools: Toolbox, protected: Iterable[str] = ()) -> list[str]:
    """Known entity labels in ``question`` that contain one of its reference words.

    Every span of 2..6 words around a reference word is checked against the label index, so
    "it rains in caldry" (any case, even sentence-initial) is a title, not a pronoun.
    """
    words = [(m.start(), m.end()) for m in _WORD.finditer(question)]
    found: list[str] = []
    for ref in references(question, protected):
        idx = next((i for i, (s, e) in enumerate(words) if s <= ref.start() < e), None)
        if idx is None:
            continue
        hit = None
        for n in range(min(_MAX_TITLE_WORDS, len(words)), 1, -1):
            for i in range(max(0, idx - n + 1), min(idx, len(words) - n) + 1):
                text = question[words[i][0] : words[i + n - 1][1]]
                try:
                    hits = await tools["search_entities"](text, k=5)
                except (ToolError, ValueError):
                    continue
                if any(is_exact_hit(h, text) for h in hits):
                    hit = text
                    break
            if hit:
                break
        if hit:
            found.append(hit)
    return found


async def _resolve_iri(ctx: RoleContext, ref: Referent) -> str | None:
    if ref.iri:
        return ref.iri
    try:
        hits = await ctx.tools["search_entities"](ref.name, k=3)
    except (ToolError, ValueError):
        return None
    exact = [h for h in hits if is_exact_hit(h, ref.name)]
    return exact[0].iri if exact else None


def _same_stem(a: str, b: str) -> bool:
    a, b = stem(a), stem(b)
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))


def _content_words(text: str) -> list[str]:
    return [w for w in (t.lower() for t in _WORD.findall(humanise(text, split_camel=True) or text))
            if w not in _FUNCTION and len(w) > 2]


async def _type_labels(ctx: RoleContext, types: list[str], cache: dict[str, str]) -> list[str]:
    """Labels of the KG classes ``types`` (the class's own label, else its humanised local name)."""
    out = []
    for t in types[:8]:
        if t not in cache:
            label = None
            with contextlib.suppress(ToolError, ValueError):
                label = (await ctx.tools["entity_schema"](t)).label
            cache[t] = label or humanise(local_name(t), split_camel=True) or t
        out.append(cache[t])
    return out


async def asked_class(ctx: RoleContext, question: str, ref_word: str) -> str | None:
    """The KG class the follow-up names as what it asks for ("which *river* is it on?"), if the KG
    has a class of that name (something is typed with it); None otherwise."""
    words = read_shape(question).kind_words
    if not words:
        return None
    head = words.split()[-1]
    noun = reference_noun(ref_word)
    if noun and _same_stem(noun, head):
        return None  # "which river is that river": the noun names the referent, not the answer
    for form in dict.fromkeys([words, singular(words), head, singular(head)]):
        try:
            hits = await ctx.tools["search_entities"](form, k=5)
        except (ToolError, ValueError):
            return None
        for hit in hits:
            if not is_exact_hit(hit, form):
                continue
            try:
                schema = await ctx.tools["entity_schema"](hit.iri)
            except (ToolError, ValueError):
                continue
            if any(s.predicate == RDF_TYPE for s in schema.incoming):
                return hit.iri
    return None


def _is_person_class(iri: str, label: str) -> bool:
    words = {w.lower() for w in _WORD.findall(f"{label} {humanise(local_name(iri), split_camel=True) or ''}")}
    return iri in _PERSON_CLASS_IRIS or bool(words & _PERSON_CLASS_WORDS)


@dataclass
class Choice:
    """The referent chosen for a reference, or why none fits."""

    name: str | None
    decisive: bool = False  # a unique best with more than the recency default
    asked_class: str | None = None  # the KG class the follow-up asks for ("which river ...")
    unfit: list[str] = field(default_factory=list)  # candidates checked that have no edge to that class
    people: list[str] = field(default_factory=list)  # candidates known to be people: never "it"


async def choose_referent(ctx: RoleContext, question: str, ref_word: str,
                          candidates: list[Referent]) -> tuple[str | None, bool]:
    """The candidate the reference most plausibly means and whether it clearly won (see :func:`choose`)."""
    choice = await choose(ctx, question, ref_word, candidates)
    return choice.name, choice.decisive


async def choose(ctx: RoleContext, question: str, ref_word: str, candidates: list[Referent]) -> Choice:
    """The candidate the reference most plausibly means, from the conversation and the KG.

    A candidate is a person when it answered a "who" question or the KG types it with a class of
    people (``_is_person_class``). Scores: he/she/him/her/his prefer a person answer (2), else a
    named topic (1); it/its/that prefer anything but a person (1), and a person loses 3 (a person
    is "he", "she" or "they", so "which team owns it?" after "Which engineer works on Rigel?" is
    about Rigel, not the engineer); "that <noun>" scores 3 for a
    candidate whose KG class labels or own label share the noun's stem; a candidate with a
    relation whose label shares a content word with the question scores 1 ("when was it founded":
    a founding year). When the follow-up names a KG class as what it asks for ("which river is it
    on?"), only a candidate with an edge to a thing of that class fits (4); if the KG knows some
    candidates and none of them fits, there is no referent (``name`` None): a wrong substitute
    would make a confident answer to a question nobody asked. Ties keep the recency order.
    """
    if not candidates:
        return Choice(None)
    kind = reference_kind(ref_word)
    noun = reference_noun(ref_word)
    klass = await asked_class(ctx, question, ref_word)
    skip = set(_content_words(ref_word))
    qwords = [w for w in _content_words(question) if w not in skip and w not in _WH]
    type_cache: dict[str, str] = {}
    best, best_score, scores = candidates[0].name, -1.0, []
    fitting: list[str] = []
    unfit: list[str] = []
    people: list[str] = []
    for ref in candidates[:_MAX_SCORED]:
        score = 0.0
        iri = await _resolve_iri(ctx, ref)
        schema = None
        if iri is not None:
            try:
                schema = await ctx.tools["entity_schema"](iri)
            except (ToolError, ValueError):
                schema = None
        classes = await _type_labels(ctx, schema.types, type_cache) if schema is not None else []
        person = (ref.from_answer and ref.asked_who) or (
            schema is not None and any(_is_person_class(t, label) for t, label in zip(schema.types, classes, strict=False)))
        if person:
            people.append(ref.name)
        if kind == "person":
            score += 2.0 if ref.from_answer and person else 0.0 if ref.from_answer else 1.0
        elif kind == "thing":
            score += -3.0 if person else 1.0
        if iri is not None and schema is not None:
            if noun:
                names = [*classes, schema.label or ref.name]
                if any(_same_stem(noun, w) for n in names for w in _content_words(n)):
                    score += 3.0
            stats = [s for s in [*schema.outgoing, *schema.incoming]
                     if local_name(s.predicate).lower() not in _NAMING]
            if any(_same_stem(q, w) for s in stats for w in _content_words(s.label) for q in qwords):
                score += 1.0
            if klass is not None:
                if any(klass in s.value_types for s in stats):
                    score += 4.0
                    fitting.append(ref.name)
                else:
                    unfit.append(ref.name)
        scores.append(score)
        if score > best_score:
            best, best_score = ref.name, score
    if klass is not None and unfit and not fitting:
        return Choice(None, asked_class=klass, unfit=unfit, people=people)
    return Choice(best, best_score >= 2.0 and sorted(scores)[-2:-1] != [best_score], klass, unfit, people)


def ask_back(question: str, ref_word: str, choice: Choice, class_label: str) -> Answer:
    """No earlier thing fits what the follow-up asks for: say so and ask which one was meant."""
    names = ", ".join(choice.unfit)
    return Answer(status="unknown", text=(
        f"I don't know what {ref_word!r} refers to in {question!r}: nothing earlier in this conversation "
        f"({names}) is linked to a {class_label} in the knowledge graph. Which one do you mean? "
        f"Please ask again with its name."))


class Contextualizer(Role[ContextualizerSettings]):
    name: ClassVar[str] = "contextualizer"
    tools: ClassVar[tuple[str, ...]] = ("search_entities", "entity_schema")
    prompts: ClassVar[tuple[str, ...]] = ("contextualize",)

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Question | Answer]:
        original = q.original_text or q.text
        history = ctx.history[-self.settings.history_turns :]
        candidates = referent_candidates(history)
        protected = [r.name for r in candidates]
        if history and needs_context(q.text, protected):
            # exact labels in the question ("It Rains in Caldry") are titles, not references
            protected += await title_spans(q.text, ctx.tools, protected)
        if not history or not needs_context(q.text, protected):
            ctx.trace.record("decision", role=self.instance_name, decision="contextualize", source="trivial",
                             reason="no history" if not history else "already standalone")
            return [Question(text=q.text, original_text=original)]
        names = [r.name for r in candidates]
        ref_word = references(q.text, protected)[0].group(0)
        choice = await choose(ctx, q.text, ref_word, candidates)
        target, decisive = choice.name, choice.decisive
        ctx.trace.record("referent", role=self.instance_name, reference=ref_word, target=target, decisive=decisive,
                         asked_class=choice.asked_class, unfit=choice.unfit)
        if target is None and choice.asked_class is not None:
            ctx.trace.record("decision", role=self.instance_name, decision="contextualize", source="deterministic",
                             reason="no earlier answer or topic has an edge to the class the follow-up asks for")
            label = (await _type_labels(ctx, [choice.asked_class], {}))[0]
            return [ask_back(q.text, ref_word, choice, label)]
        fallback_text = deterministic_rewrite(q.text, history, target=target, protected=protected)
        if not self.settings.use_model:
            return [Question(text=fallback_text, original_text=original)]

        def validate(out: Rewrite) -> str | None:
            text = out.question.lower()
            if names and not any(n.lower() in text for n in names):
                return f"the rewrite must name what the follow-up refers to (one of {names[:4]})"
            if decisive and target and target.lower() not in text and any(n.lower() in text for n in names if n != target):
                return f"the follow-up refers to {target!r}, not to another earlier name"
            if reference_kind(ref_word) == "thing" and any(p.lower() in text for p in choice.people if p != target):
                return f"{ref_word!r} is not a person: it refers to {target!r}"
            if needs_context(out.question, protected):
                return "the rewrite still contains a pronoun such as 'it' or 'they'"
            return None

        lines = []
        for hq, ha in history:
            lines.append(f"Q: {hq}\nA: {ha.text}")
        res = await produce(ctx, role=self.instance_name, decision="contextualize", prompt=self.prompt("contextualize"),
                            output=Rewrite, values={"history": fence("\n".join(lines), tag="history"),
                                                    "question": fence(q.text, tag="question")},
                            validate=validate, fallback=lambda: Rewrite(question=fallback_text),
                            max_repairs=self.settings.max_repairs)
        return [Question(text=res.value.question, original_text=original)]

"""Contextualizer: turns a chat follow-up ("and who directed it?") into a standalone question.

Without history, or when the question has no reference to resolve, it passes the question
through without a model call. A pronoun that is part of a known title ("It Happened One Night",
"They Live") is no reference. The referent is chosen by kind and checked against the KG ("it"
after "who directed Kismet" is Kismet, not its director). The model rewrites the question from
the session history; the rewrite must name something the history mentions and leave no reference
unresolved, else a deterministic rewrite replaces the reference with the chosen referent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from kgteam.prompts import fence
from kgteam.protocols.payloads import Answer, Question
from kgteam.roles.base import Role, RoleContext
from kgteam.roles.choice import produce
from kgteam.roles.contract import handles
from kgteam.roles.lexical import cue_hits, relation_cues, tokens
from kgteam.roles.triad.parsing import is_exact_hit
from kgteam.tools.iri import local_name
from kgteam.tools.toolbox import Toolbox
from kgteam.tools.types import ToolError

_WORK_REFS = [r"that (?:film|movie|one)", r"this (?:film|movie|one)", r"the same (?:film|movie)", r"it", r"its"]
_PERSON_REFS = [r"that (?:person|actor|actress|director|writer)", r"this person", r"him", r"her", r"his", r"he",
                r"she"]
_PLURAL_REFS = [r"they", r"them", r"their"]
_REF_RE = re.compile(r"\b(?:" + "|".join(_WORK_REFS + _PERSON_REFS + _PLURAL_REFS) + r")\b", re.IGNORECASE)
_WORK_RE = re.compile(r"(?:" + "|".join(_WORK_REFS) + r")", re.IGNORECASE)
_PERSON_RE = re.compile(r"(?:" + "|".join(_PERSON_REFS) + r")", re.IGNORECASE)
_POSSESSIVE = {"its", "their", "his", "her"}
_BRACKET = re.compile(r"\[([^\[\]]+)\]")
_CAPS = re.compile(r"\b[A-Z][\w'.-]*(?:\s+(?:[A-Z][\w'.-]*|of|the|and|de|la|von|van))*")
_SENTENCE_START = re.compile(r"(?:^\s*|[.?!:;]\s+|^\s*(?:and|so|then|ok(?:ay)?|also)[\s,]+)$", re.IGNORECASE)
_WORD = re.compile(r"[\w'-]+", re.UNICODE)
_MAX_TITLE_WORDS = 6
_PERSON_TYPES = ("person", "human", "people", "actor", "director", "writer", "agent")
# naming/typing predicates every entity may have: they say nothing about its kind
_NAMING = {"label", "altlabel", "preflabel", "type", "name", "comment", "description"}
_MAX_SCORED = 5  # candidates checked against the KG (each costs a schema lookup)

RefKind = Literal["work", "person", "any"]


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


def references(question: str, protected: Iterable[str] = ()) -> list[re.Match[str]]:
    """The reference words of ``question`` that point back into the conversation.

    A pronoun inside a known name ("It Happened One Night", "They Live") is not one, nor is a
    capitalised pronoun mid-sentence (a title word: "who directed It Happened One Night").
    """
    spans = _protected_spans(question, protected)
    out = []
    for m in _REF_RE.finditer(question):
        if any(s <= m.start() and m.end() <= e for s, e in spans):
            continue
        if m.group(0)[:1].isupper() and not _SENTENCE_START.search(question[: m.start()]):
            continue
        out.append(m)
    return out


def needs_context(question: str, protected: Iterable[str] = ()) -> bool:
    return bool(references(question, protected))


def reference_kind(word: str) -> RefKind:
    """What a reference points at: a work (it, that film), a person (he, her) or either (they)."""
    if _WORK_RE.fullmatch(word):
        return "work"
    if _PERSON_RE.fullmatch(word):
        return "person"
    return "any"


def previous_topic(question: str) -> str | None:
    """The entity an earlier question was about: a [bracketed] span, else its longest capitalised span."""
    m = _BRACKET.search(question)
    if m:
        return m.group(1)
    spans = [s.strip() for s in _CAPS.findall(question[1:] if question[:1].isupper() else question)]
    spans = [s for s in spans if s.lower() not in {"i", "what", "who", "which", "when", "where", "how"}]
    return max(spans, key=len) if spans else None


@dataclass
class Referent:
    name: str
    iri: str | None = None
    from_answer: bool = True  # an answer value (else the previous question's topic)


def referent_candidates(history: list[tuple[str, Answer]]) -> list[Referent]:
    """Things a follow-up may point at, most recent first: last answer's values, then its topic."""
    out: dict[str, Referent] = {}
    for q, a in reversed(history):
        for v in a.values[:3]:
            if v.label:
                out.setdefault(v.label, Referent(v.label, v.iri, True))
        topic = previous_topic(q)
        if topic:
            out.setdefault(topic, Referent(topic, None, False))
    return list(out.values())


def referents(history: list[tuple[str, Answer]]) -> list[str]:
    """Names a follow-up may point at, most likely first: last answer's values, then its topic."""
    return [r.name for r in referent_candidates(history)]


def deterministic_rewrite(question: str, history: list[tuple[str, Answer]], *, target: str | None = None,
                          protected: Iterable[str] = ()) -> str:
    """Replace the first reference with ``target`` (default: the most recent candidate)."""
    names = referents(history)
    target = target or (names[0] if names else None)
    refs = references(question, protected)
    if not target or not refs:
        return question
    m = refs[0]
    word = m.group(0).lower()
    text = question[: m.start()] + (f"{target}'s" if word in _POSSESSIVE else target) + question[m.end():]
    return re.sub(r"^\s*(?:and|so|then|ok(?:ay)?|also)\b[\s,]*", "", text, flags=re.IGNORECASE).strip()


async def title_spans(question: str, tools: Toolbox, protected: Iterable[str] = ()) -> list[str]:
    """Known entity labels in ``question`` that contain one of its reference words.

    Every span of 2..6 words around a reference word is checked with the generalist's exact-label
    test, so "it happened one night" (any case, even sentence-initial) is a title, not a pronoun.
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


async def choose_referent(ctx: RoleContext, question: str, ref_word: str,
                          candidates: list[Referent]) -> tuple[str | None, bool]:
    """The candidate the reference most plausibly means, checked against the KG.

    A candidate scores for being the right kind (a work for "it", a person for "he"; a KG entity
    without outgoing edges or with a person-like type counts as a person) and for actually having
    a relation the question's wording asks about ("when was it released": a release year).
    Ties keep the recency order. Returns the name and whether it clearly beat every other candidate.
    """
    if not candidates:
        return None, False
    kind = reference_kind(ref_word)
    qt = [t for t in tokens(question) if t != ref_word.lower()]
    best, best_score, scores = candidates[0].name, -1.0, []
    for ref in candidates[:_MAX_SCORED]:
        score = 0.0
        iri = await _resolve_iri(ctx, ref)
        if iri is not None:
            try:
                schema = await ctx.tools["entity_schema"](iri)
            except (ToolError, ValueError):
                schema = None
            if schema is not None:
                outgoing = [p for p in schema.outgoing if local_name(p.predicate).lower() not in _NAMING]
                person = not outgoing or any(w in t.lower() for t in schema.types for w in _PERSON_TYPES)
                if (kind == "work" and not person) or (kind == "person" and person):
                    score += 2.0
                stats = [p for p in [*schema.outgoing, *schema.incoming] if local_name(p.predicate).lower() not in _NAMING]
                if any(cue_hits(qt, relation_cues([s.label])) for s in stats):
                    score += 1.0
        elif kind == "work" and not ref.from_answer:
            score += 0.5  # an unlinked topic of the last question is likelier a work than its answer values
        scores.append(score)
        if score > best_score:
            best, best_score = ref.name, score
    # decisive only on KG evidence (kind or relation), and only when no other candidate ties
    return best, best_score >= 1.0 and sorted(scores)[-2:-1] != [best_score]


class Contextualizer(Role[ContextualizerSettings]):
    name: ClassVar[str] = "contextualizer"
    tools: ClassVar[tuple[str, ...]] = ("search_entities", "entity_schema")
    prompts: ClassVar[tuple[str, ...]] = ("contextualize",)

    @handles
    async def on_question(self, q: Question, ctx: RoleContext) -> list[Question]:
        original = q.original_text or q.text
        history = ctx.history[-self.settings.history_turns :]
        candidates = referent_candidates(history)
        protected = [r.name for r in candidates]
        if history and needs_context(q.text, protected):
            # exact labels in the question ("It Happened One Night") are titles, not references
            protected += await title_spans(q.text, ctx.tools, protected)
        if not history or not needs_context(q.text, protected):
            ctx.trace.record("decision", role=self.instance_name, decision="contextualize", source="trivial",
                             reason="no history" if not history else "already standalone")
            return [Question(text=q.text, original_text=original)]
        names = [r.name for r in candidates]
        ref_word = references(q.text, protected)[0].group(0)
        target, decisive = await choose_referent(ctx, q.text, ref_word, candidates)
        ctx.trace.record("referent", role=self.instance_name, reference=ref_word, target=target, decisive=decisive)
        fallback_text = deterministic_rewrite(q.text, history, target=target, protected=protected)
        if not self.settings.use_model:
            return [Question(text=fallback_text, original_text=original)]

        def validate(out: Rewrite) -> str | None:
            text = out.question.lower()
            if names and not any(n.lower() in text for n in names):
                return f"the rewrite must name what the follow-up refers to (one of {names[:4]})"
            if decisive and target and target.lower() not in text and any(n.lower() in text for n in names if n != target):
                return f"the follow-up refers to {target!r}, not to another earlier name"
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

"""Topic mentions: the longest spans of the question that the KG's label index knows exactly,
then, for what is left, names the index knows up to a typo or two ("Kazuo Ishigoro")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rapidfuzz.distance import Levenshtein

from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, Token, normalise, singular, tokenize
from kgteam.tools.types import LabelHit, ToolError

if TYPE_CHECKING:
    from kgteam.tools.toolbox import Toolbox

_LEADING_OK = {"the", "a", "an"}
_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
# A value shared by many subjects of a relation with few values acts as a category ("goalkeepers"
# -> the position Goalkeeper); these bounds say "few values" and "many subjects per value".
CATEGORY_MAX_VALUES = 200
CATEGORY_SUBJECTS_PER_VALUE = 4
CATEGORY_MIN_MEMBERS = 3
# Closed-class English morphology of adjectives of place ("Italian", "Swedish", "Chinese", "Icelandic")
# and the endings of the names they come from ("Ital-y", "Swed-en", "Chin-a", "Iceland").
_PLACE_ADJECTIVE_SUFFIXES = ("ian", "ean", "ese", "ish", "ic", "an", "i", "n")
_PLACE_NAME_ENDINGS = ("", "y", "a", "ia", "o", "e", "en", "land")


@dataclass
class Mention:
    text: str
    start: int  # token span in the question (see :func:`text.tokenize`)
    end: int
    hits: list[LabelHit] = field(default_factory=list)
    fuzzy: list[str] = field(default_factory=list)  # IRIs whose name is this span up to a typo (no exact one)
    category: bool = False  # a lower-case noun naming a value many subjects share ("goalkeepers", "drama")

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)

    def exact_iris(self) -> list[str]:
        """IRIs whose label or alias is this mention exactly (search order kept, no repeats); for a
        misspelt mention, the IRIs whose name it is up to a typo."""
        out: list[str] = []
        for h in self.hits:
            if is_exact_hit(h, self.text) and h.iri not in out:
                out.append(h.iri)
        return out or list(self.fuzzy)


def is_exact_hit(hit: LabelHit, span_text: str) -> bool:
    """The label index knows ``span_text`` exactly (as a label or an alias)."""
    want = normalise(span_text)
    return hit.exact or normalise(hit.matched) == want or normalise(hit.label) == want


def near_hits(hits: list[LabelHit], span_text: str, *, max_edits: int = 2) -> list[str]:
    """IRIs whose label or alias is ``span_text`` up to ``max_edits`` character edits (at most one
    per five characters, so short words do not turn into other words)."""
    want = normalise(span_text)
    budget = min(max_edits, len(want) // 5)
    out: list[str] = []
    for h in hits:
        for name in (h.matched, h.label):
            got = normalise(name)
            if budget and got != want and Levenshtein.distance(want, got, score_cutoff=budget) <= budget:
                if h.iri not in out:
                    out.append(h.iri)
                break
    return out


def _short_name(token: Token, position: int) -> bool:
    """One- or two-letter words count as names only when capitalised mid-sentence ("M", "Up")."""
    return position > 0 and token.text[:1].isupper() and token.text not in ("I", "A")


async def spot_mentions(question: str, tools: Toolbox, *, max_ngram: int = 10, k: int = 5) -> list[Mention]:
    """Longest exactly-known spans, best first (longer, then capitalised, then longer text).

    A span may not start or end with a function word unless that word is capitalised mid-sentence
    (a title such as "Stand by Me"), nor be a lone possessive marker.
    """
    tokens = tokenize(question)
    covered = [False] * len(tokens)
    found: list[Mention] = []
    almost: list[Mention] = []  # spans that are a known name up to a typo
    lower = [t.lower for t in tokens]
    # the writer capitalises names: some word past the first is capitalised ("I" aside)
    capitals_elsewhere = any(t.text[:1].isupper() and t.lower != "i" for t in tokens[1:])
    for n in range(min(max_ngram, len(tokens)), 0, -1):
        for i in range(0, len(tokens) - n + 1):
            if any(covered[i : i + n]):
                continue
            first, last = lower[i], lower[i + n - 1]
            first_ok = first in _LEADING_OK or (i > 0 and tokens[i].text[:1].isupper())
            last_ok = i + n - 1 > 0 and tokens[i + n - 1].text[:1].isupper()
            if (first in STOPWORDS or first in WH_WORDS or first.startswith("'")) and not first_ok:
                continue
            if (last in STOPWORDS or last in WH_WORDS or last.startswith("'")) and not last_ok:
                continue
            if n == 1 and len(first) < 3 and not _short_name(tokens[i], i) and not first.isdigit():
                continue
            text = question[tokens[i].start : tokens[i + n - 1].end]
            try:
                if not await _may_name(text, tools, k):
                    continue  # neither a name the KG knows nor one up to a typo: nothing to find
                hits = await instance_hits(await tools["search_entities"](text, k=k), tools)
            except ToolError:
                continue
            if any(is_exact_hit(h, text) for h in hits):
                if capitals_elsewhere and _written_as_words(text, i == 0, hits):
                    continue  # "The man who directed Heat": words, where the KG's name is The Man
                found.append(Mention(text, i, i + n, hits))
                for j in range(i, i + n):
                    covered[j] = True
            elif n > 1 or tokens[i].text[:1].isupper() or "_" in tokens[i].text:
                near = near_hits(hits, text)
                if near:
                    almost.append(Mention(text, i, i + n, hits, fuzzy=near))
    found.sort(key=lambda m: (-(m.end - m.start), 0 if m.text[:1].isupper() else 1, -len(m.text)))
    # misspelt names, longest first, where no exact mention is: after every exact one
    almost.sort(key=lambda m: (-(m.end - m.start), -len(m.text)))
    for m in almost:
        if not any(covered[m.start : m.end]):
            found.append(m)
            for j in range(m.start, m.end):
                covered[j] = True
    for i, token in enumerate(tokens):  # "a French-language film", "the Oscar-winning actor": the name in a compound
        head, _, rest = token.text.partition("-")
        # a name of two capitalised parts ("Mary-Kate") is one name, and a question's first word
        # is capitalised whatever it is
        if covered[i] or i == 0 or len(head) < 3 or not head[:1].isupper() or not rest[:1].islower():
            continue
        try:
            hits = await instance_hits(await tools["search_entities"](head, k=k), tools) \
                if await _may_name(head, tools, k) else []
        except ToolError:
            continue
        if any(is_exact_hit(h, head) for h in hits):
            found.append(Mention(head, i, i + 1, hits))
            covered[i] = True
    for i, token in enumerate(tokens):  # "the Swiss capital", "a German city": the place, before the language
        if not _attributive_capital(tokens, lower, i):
            continue
        if covered[i] and not any(m.start == i and m.end == i + 1 for m in found):
            continue  # inside a longer name ("Eartha Kitt"): no adjective of its own
        places = await place_of_adjective(token.text, tools, k=k)
        if not places:
            continue
        at = next((m for m in found if m.start == i and m.end == i + 1), None)
        if at is not None:
            at.hits = places + [h for h in at.hits if h.iri not in {p.iri for p in places}]
        elif not covered[i]:
            found.append(Mention(token.text, i, i + 1, places))
            covered[i] = True
    for m in found:  # "which drama": a common noun naming a shared value is a constraint, not the answer's kind
        if m.text.islower() and not m.fuzzy:
            for iri in m.exact_iris()[:3]:  # the first shared value settles it: no further queries
                if await is_category_value(iri, tools):
                    m.category = True
                    break
    for i, token in enumerate(tokens):  # "which goalkeepers": a plural naming a category value
        if covered[i] or lower[i] in STOPWORDS or lower[i] in WH_WORDS or not token.text.islower():
            continue
        one = singular(lower[i])
        if one == lower[i] or len(one) < 3:
            continue
        try:
            hits = await instance_hits(await tools["search_entities"](one, k=k), tools)
        except ToolError:
            continue
        exact = [h for h in hits if is_exact_hit(h, one)]
        values = [h for h in exact if await is_category_value(h.iri, tools)]
        if values:
            found.append(Mention(token.text, i, i + 1, values, category=True))
            covered[i] = True
    return found


async def instance_hits(hits: list[LabelHit], tools: Toolbox) -> list[LabelHit]:
    """The hits that name instances: a schema node the KG carries (a Wikibase property entity named
    "capital", a disambiguation page) names no topic, and a redirect page stands for its target
    ("Edwin Aldrin" -> the page it redirects to). Read from the KG's profile when the toolbox has one."""
    profile = getattr(tools, "profile", None)
    if profile is None or not hits:
        return hits
    iris = [h.iri for h in hits]
    try:
        schema = await profile.schema_nodes(iris)
        targets = await profile.redirect_targets(sorted(schema)) if schema else {}
    except ToolError:
        return hits
    out: list[LabelHit] = []
    seen: set[str] = set()
    for h in hits:
        if h.iri in schema and h.iri not in targets:
            continue
        iri = targets.get(h.iri, h.iri)
        if iri in seen:
            continue
        seen.add(iri)
        out.append(h if iri == h.iri else h.model_copy(update={"iri": iri}))
    return out


async def _may_name(text: str, tools: Toolbox, k: int) -> bool:
    """Whether some label is ``text`` exactly or up to a typo or two, asked of the names alone.

    Most spans of a question name nothing, and a full (word, 3-gram, fuzzy) label search costs more
    the more entities a KG has; a names-only search reads just the label dictionary. A toolbox whose
    ``search_entities`` has no ``names_only`` (a plugin's) is asked the full search, as before."""
    search = tools["search_entities"]
    if "names_only" not in search.arguments.model_fields:
        return True
    return bool(await search(text, k=k, names_only=True))


def _written_as_words(text: str, at_start: bool, hits: list[LabelHit]) -> bool:
    """The span is in lower case (its question-initial capital aside) where every name the KG
    knows it by is capitalised: in a question that capitalises names, everyday words."""
    def body(t: str) -> str:
        return t[1:] if at_start else t

    if any(c.isupper() for c in body(text)):
        return False
    names = [n for h in hits if is_exact_hit(h, text) for n in (h.label, h.matched)
             if n and normalise(n) == normalise(text)]
    return bool(names) and all(any(c.isupper() for c in body(n)) for n in names)


def _attributive_capital(tokens: list[Token], lower: list[str], i: int) -> bool:
    """A capitalised word (not the question's first) right before a lower-case noun: "a *German* city"."""
    word = tokens[i].text
    if i == 0 or not word[:1].isupper() or not word.isalpha() or i + 1 >= len(tokens):
        return False
    nxt = tokens[i + 1].text
    return nxt.isalpha() and nxt.islower() and lower[i + 1] not in STOPWORDS and lower[i + 1] not in WH_WORDS


def place_names_for(adjective: str) -> set[str]:
    """The names an adjective of place may come from by English morphology ("German" -> "germany",
    "Swedish" -> "sweden", "Lunmarkish" -> "lunmark"); no list of places."""
    a = normalise(adjective)
    out = {a + "y"}
    for suffix in _PLACE_ADJECTIVE_SUFFIXES:
        if a.endswith(suffix) and len(a) - len(suffix) >= 3:
            out.update(a[: -len(suffix)] + ending for ending in _PLACE_NAME_ENDINGS)
    out.discard(a)
    return out


async def place_of_adjective(adjective: str, tools: Toolbox, *, k: int = 5) -> list[LabelHit]:
    """KG entities an adjective of place names: a label or alias that the adjective derives from,
    or an alias that the adjective opens while the entity's own label does not ("Swiss" -> the
    entity labelled "Switzerland" with the alias "Swiss Confederation")."""
    forms = place_names_for(adjective)
    a = normalise(adjective)
    stems = {a, *(a[: -len(s)] for s in _PLACE_ADJECTIVE_SUFFIXES if a.endswith(s) and len(a) - len(s) >= 3)}
    out: list[LabelHit] = []
    for query in sorted(stems, key=len, reverse=True):
        try:
            hits = await tools["search_entities"](query, k=max(k, 10))
        except ToolError:
            return out
        for h in hits:
            names = {normalise(h.matched), normalise(h.label)}
            derived = bool(names & forms)
            opened = normalise(h.matched).startswith(a + " ") and not normalise(h.label).startswith(a)
            if (derived or opened) and h.iri not in {x.iri for x in out}:
                out.append(LabelHit(iri=h.iri, label=h.label, matched=adjective, score=h.score, exact=True))
    return out


async def is_category_value(iri: str, tools: Toolbox) -> bool:
    """Whether ``iri`` is a value that many subjects share through a relation with few values
    (a position, a genre, a rank) rather than a thing of its own: only then may a plural common
    noun ("goalkeepers", "dramas") stand for it. Read from the KG's own counts, bounded by LIMITs."""
    if "<" in iri or ">" in iri or " " in iri:
        return False
    try:
        res = await tools["run_sparql"](f"SELECT DISTINCT ?p WHERE {{ ?s ?p <{iri}> }} LIMIT 20")
    except ToolError:
        return False
    for row in res.rows:
        p = row["p"].value if "p" in row else ""
        if not p or "<" in p or ">" in p or p == _RDF_TYPE:  # a class is read as a kind elsewhere
            continue
        try:
            members = await _bounded_count(tools, f"SELECT DISTINCT ?s WHERE {{ ?s <{p}> <{iri}> }}",
                                           CATEGORY_MIN_MEMBERS)
            if members < CATEGORY_MIN_MEMBERS:
                continue
            values = await _bounded_count(tools, f"SELECT DISTINCT ?o WHERE {{ ?s <{p}> ?o }}", CATEGORY_MAX_VALUES + 1)
            if values > CATEGORY_MAX_VALUES:
                continue
            subjects = await _bounded_count(tools, f"SELECT DISTINCT ?s WHERE {{ ?s <{p}> ?o }}",
                                            values * CATEGORY_SUBJECTS_PER_VALUE)
        except ToolError:
            continue
        if subjects >= values * CATEGORY_SUBJECTS_PER_VALUE:
            return True
    return False


async def _bounded_count(tools: Toolbox, select: str, bound: int) -> int:
    """How many rows ``select`` has, counting no further than ``bound``."""
    res = await tools["run_sparql"](f"SELECT (COUNT(*) AS ?n) WHERE {{ {select} LIMIT {bound} }}")
    if not res.rows or "n" not in res.rows[0]:
        return 0
    return int(res.rows[0]["n"].value)


def mention_in(question: str, text: str, iris: list[str]) -> Mention:
    """A mention known by its text and already-linked IRIs, placed in the question when it occurs there."""
    words = [t.lower for t in tokenize(text)]
    tokens = [t.lower for t in tokenize(question)]
    start = end = len(tokens)
    for i in range(len(tokens) - len(words) + 1):
        if words and tokens[i : i + len(words)] == words:
            start, end = i, i + len(words)
            break
    hits = [LabelHit(iri=iri, label=text, matched=text, score=1.0, exact=True) for iri in iris]
    return Mention(text, start, end, hits)

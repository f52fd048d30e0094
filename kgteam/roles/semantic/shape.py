"""Model-free shape reading: what form of query a question asks for, read from its words alone.

A yes/no question, a count, a superlative ("the highest", "the most films"), a comparison with a
literal ("after 2010", "more than 5"), a negation, "or", "both ... and", and the kind of answer
("when" -> a date, "how high" -> a number). Only closed-class English is used: question words,
auxiliaries, quantifiers, negators, coordinators, prepositions of time, comparison by morphology
(-est, -er than, most/least X) and a short list of irregular or gradable forms. Nothing here names
a relation or a domain noun of any KG; the KG's own literal relations can be passed in
(``literals``) to tell "the population of X" (a number) from "the mayor of X" (an entity).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from kgteam.protocols.query_graph import AnswerKindName, Shape
from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, Token, normalise, stem, tokenize


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# a question starting with one of these (and not an imperative) is a yes/no question
AUXILIARIES = _words("is are was were am be do does did has have had can could will would should shall "
                     "may might must isn't aren't wasn't weren't don't doesn't didn't hasn't haven't "
                     "hadn't can't couldn't won't wouldn't shouldn't")
# imperatives that ask for a list ("Give me ...", "Name the ...")
IMPERATIVES = _words("give list name show tell find enumerate provide return identify mention")
# words between an imperative and its kind noun ("Give me all the ...")
_IMPERATIVE_FILLER = _words("me us all the a an of every each some any please")
NEGATORS = _words("not never no without none nobody nothing neither nor cannot")
# "the number of X", "the count of X", "count the X": a count asked with a noun
_COUNT_NOUNS = _words("number count")
# gradable words whose superlative or comparative is read as ordering towards the low end
_LOW_END = _words("low small short little few young early near close cheap thin narrow shallow "
                  "light slow weak poor bad least less fewer worst worse minimum min")
# irregular comparatives / superlatives -> their base
_IRREGULAR_SUPERLATIVE = {"best": "good", "worst": "bad", "most": "much", "least": "little",
                          "farthest": "far", "furthest": "far", "eldest": "old", "latest": "late",
                          "maximum": "much", "minimum": "little"}
_IRREGULAR_COMPARATIVE = {"better": "good", "worse": "bad", "more": "much", "less": "little",
                          "fewer": "few", "farther": "far", "further": "far", "elder": "old"}
# words in -est / -er that are not superlatives / comparatives of an adjective
_NOT_SUPERLATIVE = _words("west midwest northwest southwest forest interest guest quest request contest "
                          "protest test nest rest chest crest priest harvest conquest manifest honest "
                          "modest suggest invest arrest digest attest detest pest vest zest lest earnest "
                          "tempest inquest behest bequest unrest celeste everest budapest bucharest "
                          "contest latest")
# ordinals before a superlative ("the second highest") or standing for one ("the first album")
ORDINALS = _words("first second third fourth fifth sixth seventh eighth ninth tenth last")
_ORDINAL_SUFFIX = re.compile(r"^\d+(st|nd|rd|th)$")
_DETERMINERS = _words("the its his her their our my your whose 's")
# "how X" where X is gradable asks for a measure ("how high", "how old"); "how often" counts events
_HOW_NOT_MEASURE = _words("is are was were do does did has have had can could will would should to come "
                          "about")
# nouns that themselves name a time ("in which year", "what date")
TIME_NOUNS = _words("year years date dates day days month months century decade time birthday")
# "how many years ..." measures a duration; "in how many years ..." counts them
_TIME_UNITS = _words("years months weeks days hours minutes seconds decades centuries")
_PREPOSITIONS = _words("in on at for during within from to with by of")
# nouns that themselves name an amount ("what is the number / total / average of")
AMOUNT_NOUNS = _words("number amount total sum average percentage proportion ratio")
_SPELLED_NUMBERS = _words("one two three four five six seven eight nine ten eleven twelve twenty thirty "
                          "forty fifty hundred thousand million billion trillion dozen once twice thrice")
_SCALE = _words("hundred thousand million billion trillion percent")
# comparison by preposition, when a number follows: "before 2010", "over 5 million"
_PREPOSITION_OPS: dict[str, Literal["<", "<=", ">", ">="]] = {
    "before": "<", "after": ">", "since": ">=", "until": "<=", "till": "<=", "over": ">",
    "above": ">", "under": "<", "below": "<", "exceeding": ">", "beyond": ">",
}
# a clause that may come before the main one: "If ..., is ...?"
_SUBORDINATORS = _words("if when although though because since as given assuming suppose")
_AMOUNT_PREPOSITIONS = _words("over under above below")
# words that start a verb's object or complement ("borders *the* ...", "flows *into* ...")
_VERB_OBJECT_START = _words("the a an into through in on at from to with by for across along")
# quantity superlatives: "the most films", "the fewest goals" order by how many
_QUANTITY = _words("most least fewest")
_NUMBER = re.compile(r"\$?\d[\d,.]*\d|\$?\d")
_VERB_LIKE = re.compile(r".{3,}(ed|ing)$")

Form = Literal["select", "ask"]
Order = Literal["max", "min"]
Op = Literal["<", "<=", ">", ">="]


@dataclass(frozen=True)
class ShapeReading:
    """One question's shape, with the words that carry it (``cue_positions`` index
    ``text.tokenize(question)``, so relation matching can leave them out).

    ``order`` is on the scale the words name: "oldest" is ``max`` (age); over a date relation the
    caller flips it (the oldest has the earliest birth date). "Who is older, A or B?" is a
    superlative over the two names, ``order="max"``, ``order_words="older"``."""

    form: Form
    shape: Shape
    answer_kind: AnswerKindName
    kind_words: str | None = None
    order: Order | None = None
    order_words: str | None = None
    comparison: Op | None = None
    number: str | None = None
    negated: bool = False
    conjunction: Literal["and", "or"] | None = None
    cue_positions: frozenset[int] = frozenset()


def _alternative(low: list[str], start: int) -> bool:
    """"Is X A or B?", "Does A or B have more ...?": an alternative question asks for one of the
    alternatives, not yes/no ("either A or B" and "or not" keep it a yes/no question)."""
    if "or" not in low[start:] or "either" in low:
        return False
    i = low.index("or", start)
    return low[i + 1 : i + 2] != ["not"]


def _names_a_group(tok: Token) -> bool:
    """A singular noun right after a number ("under 18 club", "under twenty one team") makes the
    number part of a name; a plural ("over 500 employees") or a unit keeps it an amount."""
    w = tok.lower
    return w.isalpha() and w not in STOPWORDS and w not in _SPELLED_NUMBERS and not w.endswith("s")


def _plural(word: str) -> bool:
    """An -s word that is not an -ss / -us / -is / -ous word ("class", "campus", "populous")."""
    return word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3


def _is_number(tok: Token) -> bool:
    w = tok.lower
    return w[:1].isdigit() or w in _SPELLED_NUMBERS


def _number_at(question: str, tokens: list[Token], i: int) -> tuple[str, int] | None:
    """The number written from token ``i`` on ("1,000", "5", "2.5 million", "two"), and the index
    after it; skips a leading "$"/"the"/"a"."""
    while i < len(tokens) and tokens[i].lower in ("the", "a", "an", "than", "year"):
        i += 1
    if i >= len(tokens) or not _is_number(tokens[i]):
        return None
    tok = tokens[i]
    start = tok.start - 1 if tok.start > 0 and question[tok.start - 1] == "$" else tok.start
    m = _NUMBER.match(question, start)
    end = m.end() if m else tok.end
    j = i
    while j < len(tokens) and tokens[j].start < end:
        j += 1
    j = max(j, i + 1)
    if j < len(tokens) and tokens[j].lower in _SCALE:
        end = tokens[j].end
        j += 1
    return question[start:end], j


def _superlative_base(word: str) -> str | None:
    """The adjective a superlative is made of ("highest" -> "high", "most" -> "much"), else None."""
    if word in _IRREGULAR_SUPERLATIVE:
        return _IRREGULAR_SUPERLATIVE[word]
    if word in _NOT_SUPERLATIVE or len(word) < 6 or not word.endswith("est") or not word.isalpha():
        return word if word == "latest" else None
    base = word[:-3]
    if base.endswith("i"):  # heaviest
        return base[:-1] + "y"
    return _undouble(base)


def _undouble(base: str) -> str:
    """"bigg" -> "big", "thinn" -> "thin"; "small", "tall" keep their double letter."""
    if len(base) > 2 and base[-1] == base[-2] and base[-1] in "bdgmnpt":
        return base[:-1]
    return base


def _comparative_base(word: str) -> str | None:
    if word in _IRREGULAR_COMPARATIVE:
        return _IRREGULAR_COMPARATIVE[word]
    if len(word) < 4 or not word.endswith("er") or not word.isalpha():
        return None
    base = word[:-2]
    if base.endswith("i"):
        return base[:-1] + "y"
    return _undouble(base)


def _direction(base: str) -> Order:
    return "min" if base in _LOW_END or base + "e" in _LOW_END else "max"


def _noun_run(tokens: list[Token], i: int, limit: int = 4) -> tuple[str | None, list[int]]:
    """The words from ``i`` that name a kind ("basketball players"), up to a function word, a
    verb-like word or a name that starts after a common noun."""
    out: list[int] = []
    j = i
    while j < len(tokens) and len(out) < limit:
        tok = tokens[j]
        w = tok.lower
        if w in STOPWORDS or w in AUXILIARIES or w in NEGATORS or w.startswith("'") or _is_number(tok):
            break
        if out and _VERB_LIKE.match(w):
            break
        if out and tok.text[:1].isupper() and not tokens[out[-1]].text[:1].isupper():
            break
        out.append(j)
        # a plural followed by another content word: the second is usually the verb ("rivers flow")
        if _plural(w) and j + 1 < len(tokens):
            nxt = tokens[j + 1].lower
            if nxt not in STOPWORDS and nxt not in AUXILIARIES and not tokens[j + 1].text[:1].isupper():
                j += 1
                break
        j += 1
    if len(out) >= 2 and _plural(tokens[out[-1]].lower) and j < len(tokens):
        nxt = tokens[j]
        # "which country borders Hungary", "which river flows into": an -s word after a singular,
        # before a name, an article or a preposition, is a verb
        if not _plural(tokens[out[-2]].lower) and (nxt.text[:1].isupper() or nxt.lower in _VERB_OBJECT_START):
            out.pop()
    if not out:
        return None, []
    return " ".join(tokens[k].lower for k in out), out


@dataclass
class _Read:
    cues: set[int]
    kind_words: str | None = None
    kind_positions: tuple[int, ...] = ()


def read_shape(question: str, literals: Mapping[str, AnswerKindName] | None = None) -> ShapeReading:
    """Read the shape of ``question`` (see module doc).

    ``literals`` optionally maps the KG's literal relation labels ("population", "birth date") to
    the kind of value they hold; a question naming one asks for that literal, not an entity."""
    tokens = tokenize(question)
    low = [t.lower for t in tokens]
    n = len(tokens)
    cues: set[int] = set()
    read = _Read(cues)

    # ---- form: yes/no or select -------------------------------------------------------------
    form: Form = "select"
    start = 0
    while start < n and low[start] in ("and", "so", "but", "then", "well", "ok", "okay", "please"):
        start += 1
    if start < n and low[start] in _SUBORDINATORS and "," in question:
        # "If someone died in 1969, is there ...": the main clause comes after the comma
        comma = question.index(",")
        after = next((i for i, t in enumerate(tokens) if t.start > comma), n)
        if after < n and low[after] in AUXILIARIES:
            start = after
    if start < n and low[start] in AUXILIARIES and not _alternative(low, start):
        form = "ask"
        cues.add(start)
        if low[start : start + 4] == ["is", "it", "true", "that"]:
            cues.update(range(start, start + 4))

    # ---- count -------------------------------------------------------------------------------
    count = False
    answer_kind: AnswerKindName = "boolean" if form == "ask" else "entity"
    measure_kind: AnswerKindName | None = None
    first_wh = next((i for i, w in enumerate(low) if w in WH_WORDS), None)
    for i, w in enumerate(low):
        if w != "how" or i + 1 >= n:
            continue
        nxt = low[i + 1]
        if nxt == "many" and i + 2 < n and low[i + 2] in _TIME_UNITS and (i == 0 or low[i - 1] not in _PREPOSITIONS):
            measure_kind = "number"  # "how many years did X live": a duration ("how long"), not a count
            cues.update((i, i + 1))
        elif nxt == "many" and low[i + 2 : i + 4] in (["people", "live"], ["people", "lived"]):
            measure_kind = "number"  # "how many people live in X" asks for a population, not a list
            cues.update((i, i + 1))
        elif nxt == "many":
            count = True
            cues.update((i, i + 1))
            read.kind_words, pos = _noun_run(tokens, i + 2)
            read.kind_positions = tuple(pos)
            # "how many of X's brothers" / "how many of the ..."
            if read.kind_words is None and i + 2 < n and low[i + 2] == "of":
                read.kind_words, pos = _noun_run(tokens, i + 3 + (low[i + 3] in _DETERMINERS if i + 3 < n else 0))
                read.kind_positions = tuple(pos)
        elif nxt == "often":
            count = True
            cues.update((i, i + 1))
        elif nxt == "much":
            measure_kind = "number"
            cues.update((i, i + 1))
        elif nxt not in _HOW_NOT_MEASURE and nxt not in STOPWORDS and i == first_wh:
            measure_kind = "number"  # how high / old / long / heavy ...
            cues.update((i, i + 1))
            read.kind_words = None
    if start < n and low[start] == "count":
        count = True
        cues.add(start)
    for i, w in enumerate(low):
        # "the number of X", "the total number of X" asked for ("what is the number of", "give the number of")
        if w in _COUNT_NOUNS and i + 1 < n and low[i + 1] == "of" and i > 0 and \
                low[i - 1] in ("the", "total", "a") and not count and form == "select":
            before = [x for x in low[:i] if x not in ("the", "total", "a")]
            if not before or before[-1] in ("is", "was", "are", "me", "give", "tell", "count", "list", "show",
                                             "find", "what"):
                count = True
                cues.update(k for k in range(max(0, i - 2), i + 2) if low[k] in ("the", "total", "a", w, "of"))
                if read.kind_words is None:
                    k = i + 2
                    while k < n and low[k] in _DETERMINERS | {"a", "an", "all"}:
                        k += 1
                    read.kind_words, pos = _noun_run(tokens, k)
                    read.kind_positions = tuple(pos)

    # ---- superlative -------------------------------------------------------------------------
    order: Order | None = None
    order_words: str | None = None
    superlative = False
    for i, w in enumerate(low):
        tok = tokens[i]
        if i > 0 and tok.text[:1].isupper() and (w.endswith("est") or tokens[i - 1].text[:1].isupper()
                                                 or (i + 1 < n and tokens[i + 1].text[:1].isupper())):
            continue  # a capitalised word in a name ("Budapest", "The Very Best of", "First Driver")
        base: str | None = None
        if w == "top" or w.startswith("top-"):
            # "the top 10 X", "the top-10 X"
            if (w.startswith("top-") and w[4:].isdigit()) or (i + 1 < n and _is_number(tokens[i + 1])):
                superlative, order, order_words = True, "max", None
                cues.update((i, i + 1) if not w.startswith("top-") else (i,))
            continue
        if w in ("most", "least"):
            prev = low[i - 1] if i > 0 else ""
            if prev == "at" or (i + 1 < n and low[i + 1] == "of"):
                continue
            base = _IRREGULAR_SUPERLATIVE[w]
        else:
            base = _superlative_base(w)
        if base is None:
            continue
        superlative = True
        cues.add(i)
        order = _direction(base)
        if i > 0 and low[i - 1] in ORDINALS | {"the"}:
            cues.add(i - 1)
        nxt_words, nxt_pos = _noun_run(tokens, i + 1, limit=3)
        if w in _QUANTITY and nxt_words is not None:
            head = tokens[nxt_pos[0]].lower
            if w != "fewest" and _superlative_base(head) is None and not _plural(head):
                # "most populous": the adjective carries the attribute
                order_words = head
                rest, rest_pos = _noun_run(tokens, nxt_pos[0] + 1)
                if rest and read.kind_words is None:
                    read.kind_words, read.kind_positions = rest, tuple(rest_pos)
            else:
                order_words = nxt_words  # "the most films": ordered by how many
        elif nxt_words is not None and i >= 2 and low[i - 2] in ("has", "have", "had", "with", "by"):
            order_words = nxt_words  # "has the largest capacity"
        else:
            order_words = w  # "the highest mountain": the adjective names the attribute
            if nxt_words is not None and read.kind_words is None:
                read.kind_words, read.kind_positions = nxt_words, tuple(nxt_pos)
        break
    if not superlative:
        # "the first album", "their last film", "which ... was published first?": an ordinal
        # standing for a superlative on time
        for i, w in enumerate(low):
            if w not in ("first", "last") or i == 0:
                continue
            clause_end = question[tokens[i].end :].lstrip()[:1] in ("", "?", ".", "!")
            before_noun = (low[i - 1] in _DETERMINERS and i + 1 < n and not _is_number(tokens[i + 1])
                           and low[i + 1] not in STOPWORDS and low[i + 1] != "name")
            if before_noun or (clause_end and first_wh is not None and form == "select"):
                superlative = True
                order = "min" if w == "first" else "max"
                order_words = w
                cues.update((i - 1, i) if before_noun else (i,))
                if before_noun and read.kind_words is None:
                    words, pos = _noun_run(tokens, i + 1)
                    read.kind_words, read.kind_positions = words, tuple(pos)
                break

    # ---- comparison --------------------------------------------------------------------------
    comparison: Op | None = None
    number: str | None = None
    two_way = False  # "A or B": which of two
    for i, w in enumerate(low):
        if w == "than" and i > 0 and low[i - 1] not in ("other", "rather"):
            # "-er than" / "more X than" / "more than N"
            k = i - 1
            j = max(0, i - 4)
            cand = None
            for m in range(k, j - 1, -1):
                b = _comparative_base(low[m])
                if b is not None and (m == k or low[m] in _IRREGULAR_COMPARATIVE):
                    cand = m
                    break
            if cand is None:
                continue
            b = _comparative_base(low[cand]) or ""
            negated_cmp = cand > 0 and low[cand - 1] == "no"
            op: Op = "<" if _direction(b) == "min" else ">"
            if negated_cmp:
                op = ">=" if op == "<" else "<="
                cues.add(cand - 1)
            comparison = op
            cues.update({cand, i})
            got = _number_at(question, tokens, i + 1)
            if got:
                number = got[0]
            if order_words is None:
                order_words = low[cand] if cand == k else " ".join(low[cand + 1 : i]) or low[cand]
            break
        if w in ("least", "most") and i > 0 and low[i - 1] == "at":
            got = _number_at(question, tokens, i + 1)
            if got:
                comparison = ">=" if w == "least" else "<="
                number = got[0]
                cues.update((i - 1, i))
                break
        if w in _PREPOSITION_OPS or (w == "prior" and i + 1 < n and low[i + 1] == "to"):
            at = i + 2 if w == "prior" else i + 1
            got = _number_at(question, tokens, at)
            if got and w in _AMOUNT_PREPOSITIONS and got[1] < n and _names_a_group(tokens[got[1]]):
                continue  # "an under 18 club": the number names a kind, compares nothing
            if got:
                comparison = "<" if w == "prior" else _PREPOSITION_OPS[w]
                number = got[0]
                cues.update(range(i, at))
                break
        if w == "between":
            got = _number_at(question, tokens, i + 1)
            if got and got[1] < n and low[got[1]] == "and" and _number_at(question, tokens, got[1] + 1):
                comparison = ">="
                number = got[0]
                cues.update((i, got[1]))
                break
    # a comparative put as "which of two": "Who is older, A or B?" -> the larger of the two
    if comparison is not None and number is None and "than" not in low and "or" in low:
        two_way = True
    elif comparison is None and "or" in low and form == "select":
        for i, w in enumerate(low):
            b = "early" if w == "first" else "late" if w == "last" else _comparative_base(w)
            if b is None or tokens[i].text[:1].isupper():
                continue
            ends_clause = question[tokens[i].end :].lstrip()[:1] in ("", ",", ":", ";", "?", ".", "!")
            if ends_clause or (w in ("more", "less", "fewer") and i + 1 < n and low[i + 1] != "than"):
                two_way = True
                order = _direction(b)
                order_words = w if ends_clause else " ".join(low[i : i + 2])
                cues.add(i)
                break
    if two_way:
        superlative = True
        order = order or ("min" if comparison in ("<", "<=") else "max")
        comparison = None

    # ---- negation, coordination --------------------------------------------------------------
    negated = False
    for i, w in enumerate(low):
        if (w in NEGATORS or w.endswith("n't")) and i not in cues:
            if w == "no" and i + 1 < n and low[i + 1] in ("more", "less", "fewer", "later", "earlier"):
                continue
            if w.endswith("n't") and i == start and form == "ask":
                continue  # "Isn't X ...?" asks the same as "Is X ...?"
            negated = True
            cues.add(i)
    conjunction: Literal["and", "or"] | None = None
    intersection = False
    if "or" in low:
        conjunction = "or"
        cues.update(i for i, w in enumerate(low) if w in ("or", "either"))
    elif "and" in low:
        ands = [i for i, w in enumerate(low) if w == "and" and i not in cues]
        if ands:
            conjunction = "and"
            both = [i for i, w in enumerate(low) if w == "both" and i < ands[-1]]
            also = any(low[i + 1 : i + 2] in (["also"], ["which"], ["who"], ["that"]) for i in ands)
            well = any(low[i : i + 3] == ["as", "well", "as"] for i in range(n))
            if both or also or well:
                intersection = True
                cues.update(both + ands)
    elif any(low[i : i + 3] == ["as", "well", "as"] for i in range(n)):
        conjunction = "and"
        intersection = True

    # ---- answer kind and the kind noun -------------------------------------------------------
    if form == "select":
        if count:
            answer_kind = "number"
        elif measure_kind is not None:
            answer_kind = measure_kind
        else:
            answer_kind = _wh_kind(tokens, low, first_wh, read)
    if read.kind_words is None and form == "select":
        _kind_after_cue(tokens, low, start, first_wh, read)
    if literals and count and read.kind_words and _counted_literal(read.kind_words, literals):
        # "how many employees does X have" where the KG stores a number of employees
        count, answer_kind = False, "number"
    if literals and form == "select" and not count and answer_kind == "entity":
        found = _literal_named(tokens, literals, cues)
        if found is not None:
            answer_kind = found

    # ---- one label, by precedence ------------------------------------------------------------
    shape: Shape
    if form == "ask":
        shape = "ask"
    elif count:
        shape = "count"
    elif superlative:
        shape = "superlative"
    elif comparison is not None:
        shape = "comparative"
    elif negated:
        shape = "negation"
    elif conjunction == "or":
        shape = "union"
    elif intersection:
        shape = "intersection"
    elif answer_kind in ("number", "date", "string"):
        shape = "literal"
    else:
        shape = "chain"
    cues.difference_update(read.kind_positions)
    return ShapeReading(
        form=form, shape=shape, answer_kind=answer_kind, kind_words=read.kind_words,
        order=order if superlative or two_way else None,
        order_words=order_words if (superlative or comparison is not None) else None,
        comparison=comparison, number=number, negated=negated, conjunction=conjunction,
        cue_positions=frozenset(cues))


def _wh_kind(tokens: list[Token], low: list[str], first_wh: int | None, read: _Read) -> AnswerKindName:
    """The answer kind a wh-question asks for: "when" / "what year" -> date, "what is the number
    of" -> number, else an entity."""
    if first_wh is None:
        return "entity"
    w = low[first_wh]
    if w == "when":
        read.cues.add(first_wh)
        return "date"
    if w in ("what", "which"):
        nxt = first_wh + 1
        if nxt < len(low) and low[nxt] in TIME_NOUNS and low[nxt] != "time":
            read.cues.update((first_wh, nxt))
            return "date"
        # "what is the (birth) date of", "what is the total number of"
        j = nxt
        while j < len(low) and low[j] in ("is", "was", "are", "were", "the", "a", "an"):
            j += 1
        head = j
        while head < len(low) and low[head] not in STOPWORDS and head - j < 3:
            head += 1
        phrase = low[j:head]
        if phrase and phrase[-1] in TIME_NOUNS - {"time", "day", "days"}:
            return "date"
        if phrase and phrase[0] in AMOUNT_NOUNS:
            return "number"
    return "entity"


def _kind_after_cue(tokens: list[Token], low: list[str], start: int, first_wh: int | None, read: _Read) -> None:
    """The class noun after "which" / "what" ("which *country*") or an imperative ("name the *films*")."""
    if first_wh is not None and low[first_wh] in ("which", "what") and first_wh + 1 < len(low):
        nxt = first_wh + 1
        if low[nxt] == "of":  # "which of her novels"
            nxt += 1
            while nxt < len(low) and low[nxt] in _DETERMINERS | {"these", "those", "all"}:
                nxt += 1
            if nxt >= len(low):
                return
        if low[nxt] not in STOPWORDS and low[nxt] not in AUXILIARIES:
            words, pos = _noun_run(tokens, nxt)
            if words and not (len(pos) == 1 and low[pos[0]] in TIME_NOUNS):
                read.kind_words, read.kind_positions = words, tuple(pos)
            return
    if start < len(low) and low[start] in IMPERATIVES:
        j = start + 1
        while j < len(low) and low[j] in _IMPERATIVE_FILLER:
            j += 1
        words, pos = _noun_run(tokens, j)
        if words:
            read.kind_words, read.kind_positions = words, tuple(pos)


def _counted_literal(kind_words: str, literals: Mapping[str, AnswerKindName]) -> bool:
    """Does the KG hold the counted thing as a number ("number of employees" for "how many
    employees")?"""
    counted = [stem(w) for w in kind_words.split()]
    for label, kind in literals.items():
        words = [stem(w) for w in normalise(label).split() if w not in STOPWORDS and w not in AMOUNT_NOUNS]
        if kind == "number" and words == counted:
            return True
    return False


def _literal_named(tokens: list[Token], literals: Mapping[str, AnswerKindName],
                   cues: set[int]) -> AnswerKindName | None:
    """The kind of the KG literal relation the question names ("the date of founding"), the
    label with most words first; function words on either side are ignored."""
    content = [(i, stem(t.lower)) for i, t in enumerate(tokens) if t.lower not in STOPWORDS and i not in cues]
    stems = [w for _, w in content]
    best: tuple[int, AnswerKindName] | None = None
    for label, kind in literals.items():
        words = [stem(w) for w in normalise(label).split() if w not in STOPWORDS]
        if not words or (best is not None and len(words) <= best[0]):
            continue
        if any(stems[i : i + len(words)] == words for i in range(len(stems) - len(words) + 1)):
            best = (len(words), kind)
    return best[1] if best else None

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
from kgteam.roles.semantic.text import STOPWORDS, WH_WORDS, Token, normalise, singular, stem, tokenize


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
_LOW_END = _words("low small short little few young early near close cheap thin narrow shallow sparse "
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
TIME_NOUNS = _words("year years date dates day days month months century decade time birthday birthdays")
_DATE_NOUNS = TIME_NOUNS - {"time", "day", "days"}
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
# words a question may open with before its main clause ("So, is ...", "Please list ...")
_DISCOURSE = _words("and so but then well ok okay please")
# what may come right before "the number of X" when the number is what is asked for
_ASKING_FOR = _words("is was are me give tell count list show find what")
# a clause that may come before the main one: "If ..., is ...?"
_SUBORDINATORS = _words("if when although though because since as given assuming suppose")
_AMOUNT_PREPOSITIONS = _words("over under above below")
_BE = _words("is are was were be been being")
# words that start a verb's object or complement ("borders *the* ...", "flows *into* ...")
_VERB_OBJECT_START = _words("the a an into through in on at from to with by for across along")
# quantity superlatives: "the most films", "the fewest goals" order by how many
_QUANTITY = _words("most least fewest")
_NUMBER = re.compile(r"\$?\d[\d,.]*\d|\$?\d")
_SCALE_SUFFIXES = frozenset({"k", "bn"})
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
    superlative_word: str | None = None  # "the *highest* elevation": the adjective, when the noun orders
    comparison: Op | None = None
    number: str | None = None
    compared_noun: str | None = None  # what a comparison is about: "wear a *number* above 20"
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


def _in_name(tokens: list[Token], i: int) -> bool:
    """A capitalised word inside a sentence that ends in -est or stands beside another capitalised
    word is part of a name, not a superlative."""
    tok = tokens[i]
    if i == 0 or not tok.text[:1].isupper():
        return False
    return (tok.lower.endswith("est") or tokens[i - 1].text[:1].isupper()
            or (i + 1 < len(tokens) and tokens[i + 1].text[:1].isupper()))


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
    if tok.end > end and question[end : tok.end].lower() in _SCALE_SUFFIXES:
        end = tok.end  # "100k", "3bn" (not "30m": metres as often as millions)
    j = i
    while j < len(tokens) and tokens[j].start < end:
        j += 1
    j = max(j, i + 1)
    while j < len(tokens) and tokens[j].lower in _SPELLED_NUMBERS and tokens[i].lower in _SPELLED_NUMBERS \
            and tokens[j].lower not in _SCALE:  # "twenty one"
        end = tokens[j].end
        j += 1
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


superlative_base = _superlative_base  # what other readers ask of a word: is it a superlative, of what


def _undouble(base: str) -> str:
    """"bigg" -> "big", "thinn" -> "thin"; "small", "tall" keep their double letter."""
    if len(base) > 2 and base[-1] == base[-2] and base[-1] in "bdgmnpt":
        return base[:-1]
    return base


def comparative_base(word: str) -> str | None:
    """The adjective a comparative is made from ("older" -> old), or None."""
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


class _Reader:
    """One question's reading, built step by step; each step adds the positions of its words to
    ``cues``."""

    def __init__(self, question: str) -> None:
        self.question = question
        self.tokens = tokenize(question)
        self.low = [t.lower for t in self.tokens]
        self.n = len(self.tokens)
        self.cues: set[int] = set()
        self.kind_words: str | None = None
        self.kind_positions: tuple[int, ...] = ()
        self.form: Form = "select"
        self.start = 0  # where the main clause starts
        self.first_wh = next((i for i, w in enumerate(self.low) if w in WH_WORDS), None)
        self.count = False
        self.measure: AnswerKindName | None = None
        self.superlative = False
        self.order: Order | None = None
        self.order_words: str | None = None
        self.superlative_word: str | None = None
        self.compared_noun: str | None = None
        self.comparison: Op | None = None
        self.number: str | None = None
        self.two_way = False
        self.negated = False
        self.conjunction: Literal["and", "or"] | None = None
        self.intersection = False

    def _kind_from(self, i: int, limit: int = 4) -> None:
        self.kind_words, pos = _noun_run(self.tokens, i, limit)
        self.kind_positions = tuple(pos)

    def _clause_end_after(self, i: int, marks: str) -> bool:
        return self.question[self.tokens[i].end :].lstrip()[:1] in ("", *marks)

    def read_form(self) -> None:
        """Yes/no when the main clause starts with an auxiliary, unless it offers alternatives."""
        low, n = self.low, self.n
        while self.start < n and low[self.start] in _DISCOURSE:
            self.start += 1
        if self.start < n and low[self.start] in _SUBORDINATORS and "," in self.question:
            # "If someone died in 1969, is there ...": the main clause comes after the comma
            comma = self.question.index(",")
            after = next((i for i, t in enumerate(self.tokens) if t.start > comma), n)
            if after < n and low[after] in AUXILIARIES:
                self.start = after
        start = self.start
        # "can you name ...", "could you tell me ...", "would you list ...": a polite imperative
        if start + 2 < n and low[start] in AUXILIARIES and low[start + 1] == "you" and low[start + 2] in IMPERATIVES:
            self.start = start + 2
            self.cues.update(range(start, start + 2))
            return
        if start < n and low[start] in AUXILIARIES and not _alternative(low, start):
            self.form = "ask"
            self.cues.add(start)
            if low[start : start + 4] == ["is", "it", "true", "that"]:
                self.cues.update(range(start, start + 4))

    def read_count(self) -> None:
        """"how many N", "how often", "count the N", "the (total) number of N"; "how much" and
        "how high / old / ..." ask for a measure instead."""
        low, n, cues = self.low, self.n, self.cues
        for i, w in enumerate(low):
            if w != "how" or i + 1 >= n:
                continue
            nxt = low[i + 1]
            if nxt == "many" and i + 2 < n and low[i + 2] in _TIME_UNITS and (i == 0 or low[i - 1] not in _PREPOSITIONS):
                self.measure = "number"  # "how many years did X live": a duration ("how long"), not a count
                cues.update((i, i + 1))
            elif nxt == "many" and low[i + 2 : i + 4] in (["people", "live"], ["people", "lived"]):
                self.measure = "number"  # "how many people live in X" asks for a population, not a list
                cues.update((i, i + 1))
            elif nxt == "many":
                self.count = True
                cues.update((i, i + 1))
                self._kind_from(i + 2)
                # "how many of X's brothers" / "how many of the ..."
                if self.kind_words is None and i + 2 < n and low[i + 2] == "of":
                    self._kind_from(i + 3 + (low[i + 3] in _DETERMINERS if i + 3 < n else 0))
            elif nxt == "often":
                self.count = True
                cues.update((i, i + 1))
            elif nxt == "much":
                self.measure = "number"
                cues.update((i, i + 1))
            elif nxt not in _HOW_NOT_MEASURE and nxt not in STOPWORDS and i == self.first_wh:
                self.measure = "number"  # how high / old / long / heavy ...
                cues.update((i, i + 1))
                self.kind_words = None
        if self.start < n and low[self.start] == "count":
            self.count = True
            cues.add(self.start)
        for i, w in enumerate(low):
            # "what is the number of X", "give me the total number of X", "a count of X"
            if w in _COUNT_NOUNS and i + 1 < n and low[i + 1] == "of" and i > 0 and \
                    low[i - 1] in ("the", "total", "a") and not self.count and self.form == "select":
                before = [x for x in low[:i] if x not in ("the", "total", "a")]
                if not before or before[-1] in _ASKING_FOR:
                    self.count = True
                    cues.update(k for k in range(max(0, i - 2), i + 2) if low[k] in ("the", "total", "a", w, "of"))
                    if self.kind_words is None:
                        k = i + 2
                        while k < n and low[k] in _DETERMINERS | {"a", "an", "all"}:
                            k += 1
                        self._kind_from(k)

    def read_superlative(self) -> None:
        """-est words, "most / least X", "the top N"; else "the first N" / "... first?"."""
        low, n, tokens = self.low, self.n, self.tokens
        for i, w in enumerate(low):
            if _in_name(tokens, i):
                continue  # "Budapest", "The Very Best of", "First Driver"
            if w == "top" or w.startswith("top-"):
                # "the top 10 X", "the top-10 X"
                if (w.startswith("top-") and w[4:].isdigit()) or (i + 1 < n and _is_number(tokens[i + 1])):
                    self.superlative, self.order, self.order_words = True, "max", None
                    self.cues.update((i, i + 1) if not w.startswith("top-") else (i,))
                continue
            if w in ("most", "least"):
                if (i > 0 and low[i - 1] == "at") or (i + 1 < n and low[i + 1] == "of"):
                    continue
                base: str | None = _IRREGULAR_SUPERLATIVE[w]
            else:
                base = _superlative_base(w)
            if base is None:
                continue
            self.superlative = True
            self.superlative_word = w
            self.cues.add(i)
            self.order = _direction(base)
            if i > 0 and low[i - 1] in ORDINALS | {"the"}:
                self.cues.add(i - 1)
            self._order_words(i, w)
            return
        if not self.superlative:
            self._ordinal_superlative()

    def _order_words(self, i: int, w: str) -> None:
        nxt_words, nxt_pos = _noun_run(self.tokens, i + 1, limit=3)
        if w in _QUANTITY and nxt_words is not None:
            head = self.low[nxt_pos[0]]
            if w != "fewest" and _superlative_base(head) is None and not _plural(head):
                # "most populous": the adjective carries the attribute
                self.order_words = head
                rest, rest_pos = _noun_run(self.tokens, nxt_pos[0] + 1)
                if rest and self.kind_words is None:
                    self.kind_words, self.kind_positions = rest, tuple(rest_pos)
            else:
                self.order_words = nxt_words  # "the most films": ordered by how many
        elif nxt_words is not None and i >= 2 and self.low[i - 2] in ("has", "have", "had", "with", "by"):
            self.order_words = nxt_words  # "has the largest capacity"
        else:
            self.order_words = w  # "the highest mountain": the adjective names the attribute
            if nxt_words is not None and self.kind_words is None:
                self.kind_words, self.kind_positions = nxt_words, tuple(nxt_pos)

    def _ordinal_superlative(self) -> None:
        """"the first album", "their last film", "which ... was published first?": an ordinal
        standing for a superlative on time."""
        low, n = self.low, self.n
        for i, w in enumerate(low):
            if w not in ("first", "last") or i == 0 or _in_name(self.tokens, i):
                continue
            before_noun = (low[i - 1] in _DETERMINERS and i + 1 < n and not _is_number(self.tokens[i + 1])
                           and low[i + 1] not in STOPWORDS and low[i + 1] != "name")
            if before_noun or (self._clause_end_after(i, "?.!") and self.first_wh is not None
                               and self.form == "select"):
                self.superlative = True
                self.order = "min" if w == "first" else "max"
                self.order_words = w
                self.cues.update((i - 1, i) if before_noun else (i,))
                if before_noun and self.kind_words is None:
                    self._kind_from(i + 1)
                return

    def read_comparison(self) -> None:
        """"-er than", "more / fewer X than", "at least / at most N", "before / after / since /
        over / under N", "prior to N", "between N and M"."""
        low, n, question, tokens = self.low, self.n, self.question, self.tokens
        for i, w in enumerate(low):
            if w == "or" and 0 < i < n - 1 and comparative_base(low[i + 1]) is not None \
                    and (i + 2 == n or low[i + 2] not in ("than",)):
                got = _number_at(question, tokens, i - 1)
                if got and got[1] == i:  # "30 or older", "2005 or later": the number itself counts
                    self.comparison = "<=" if _direction(comparative_base(low[i + 1]) or "") == "min" else ">="
                    self.number = got[0]
                    self.order_words = self.order_words or low[i + 1]
                    self.cues.update((i, i + 1))
                    return
            if w == "than" and i > 0 and low[i - 1] not in ("other", "rather"):
                cand = next((m for m in range(i - 1, max(0, i - 4) - 1, -1) if comparative_base(low[m]) is not None
                             and (m == i - 1 or low[m] in _IRREGULAR_COMPARATIVE)), None)
                if cand is None:
                    continue
                op: Op = "<" if _direction(comparative_base(low[cand]) or "") == "min" else ">"
                if cand > 0 and low[cand - 1] == "no":  # "no more than"
                    op = ">=" if op == "<" else "<="
                    self.cues.add(cand - 1)
                self.comparison = op
                self.cues.update({cand, i})
                got = _number_at(question, tokens, i + 1)
                self.number = got[0] if got else None
                if self.order_words is None:
                    self.order_words = low[cand] if cand == i - 1 else " ".join(low[cand + 1 : i])
                    if cand == i - 1 and cand > 1 and low[cand - 1] not in STOPWORDS and low[cand - 1] not in WH_WORDS \
                            and tokens[cand - 1].text.isalpha() and tokens[cand - 1].text.islower() \
                            and cand - 1 not in self.cues and singular(low[cand - 1]) == low[cand - 1]:
                        self.order_words = f"{low[cand - 1]} {low[cand]}"  # "a *number lower* than 5"
                        self.compared_noun = low[cand - 1]
                return
            if w in ("least", "most") and i > 0 and low[i - 1] == "at":
                got = _number_at(question, tokens, i + 1)
                if got:
                    self.comparison, self.number = (">=" if w == "least" else "<="), got[0]
                    self.cues.update((i - 1, i))
                    return
            if w in _PREPOSITION_OPS or (w == "prior" and i + 1 < n and low[i + 1] == "to"):
                at = i + 2 if w == "prior" else i + 1
                got = _number_at(question, tokens, at)
                if got and w in _AMOUNT_PREPOSITIONS and got[1] < n and _names_a_group(tokens[got[1]]):
                    continue  # "an under 18 club": the number names a kind, compares nothing
                if got:
                    self.comparison = "<" if w == "prior" else _PREPOSITION_OPS[w]
                    self.number = got[0]
                    self.cues.update(range(i, at))
                    if self.order_words is None:
                        j = i - 1
                        while j > 0 and low[j] in ("a", "an", "the"):
                            j -= 1
                        # "wear a *number* above 20"; a passive "were *founded* before 1500" (an
                        # active "did X *direct* before 1980" names the set, not what orders it)
                        about = w in _AMOUNT_PREPOSITIONS or (j > 1 and low[j - 1] in _BE)
                        if about and low[j] not in STOPWORDS and low[j] not in WH_WORDS \
                                and tokens[j].text.isalpha() and tokens[j].text.islower():
                            self.order_words = self.compared_noun = low[j]
                    return
            if w == "between":
                got = _number_at(question, tokens, i + 1)
                if got and got[1] < n and low[got[1]] == "and" and _number_at(question, tokens, got[1] + 1):
                    self.comparison, self.number = ">=", got[0]
                    self.cues.update((i, got[1]))
                    return

    def read_two_way(self) -> None:
        """A comparative put as "which of two" ("Who is older, A or B?") is the better of the two:
        a superlative over the named alternatives."""
        low, n = self.low, self.n
        if "or" not in low:
            return
        if self.comparison is not None:
            if self.number is None and "than" not in low:
                self.two_way = True
        elif self.form == "select":
            for i, w in enumerate(low):
                b = "early" if w == "first" else "late" if w == "last" else comparative_base(w)
                if b is None or self.tokens[i].text[:1].isupper():
                    continue
                ends_clause = self._clause_end_after(i, ",:;?.!")
                if ends_clause or (w in ("more", "less", "fewer") and i + 1 < n and low[i + 1] != "than"):
                    self.two_way = True
                    self.order = _direction(b)
                    self.order_words = w if ends_clause else " ".join(low[i : i + 2])
                    self.cues.add(i)
                    break
        if self.two_way:
            self.superlative = True
            self.order = self.order or ("min" if self.comparison in ("<", "<=") else "max")
            self.comparison = None

    def read_negation(self) -> None:
        low = self.low
        for i, w in enumerate(low):
            if (w in NEGATORS or w.endswith("n't")) and i not in self.cues:
                if w == "no" and i + 1 < self.n and low[i + 1] in ("more", "less", "fewer", "later", "earlier"):
                    continue
                if w.endswith("n't") and i == self.start and self.form == "ask":
                    continue  # "Isn't X ...?" asks the same as "Is X ...?"
                self.negated = True
                self.cues.add(i)

    def read_coordination(self) -> None:
        """"or" / "either ... or"; "both ... and", "and also / which / who / that", "as well as".
        A bare "and" may sit inside a name ("War and Peace"): it is recorded, not read as a join."""
        low, n = self.low, self.n
        as_well_as = any(low[i : i + 3] == ["as", "well", "as"] for i in range(n))
        if "or" in low:
            self.conjunction = "or"
            self.cues.update(i for i, w in enumerate(low) if w in ("or", "either"))
        elif "and" in low:
            ands = [i for i, w in enumerate(low) if w == "and" and i not in self.cues]
            if ands:
                self.conjunction = "and"
                both = [i for i, w in enumerate(low) if w == "both" and i < ands[-1]]
                joined = any(low[i + 1 : i + 2] in (["also"], ["which"], ["who"], ["that"]) for i in ands)
                if both or joined or as_well_as:
                    self.intersection = True
                    self.cues.update(both + ands)
        elif as_well_as:
            self.conjunction = "and"
            self.intersection = True

    def answer_kind(self, literals: Mapping[str, AnswerKindName] | None) -> AnswerKindName:
        if self.form == "ask":
            return "boolean"
        kind: AnswerKindName
        if self.count:
            kind = "number"
        elif self.measure is not None:
            kind = self.measure
        else:
            kind = _wh_kind(self)
        if self.kind_words is None:
            _kind_after_cue(self)
            if kind == "entity" and self.kind_words and self.kind_words.split()[-1] in _DATE_NOUNS:
                kind = "date"  # "give me the birthdays of ..."
        if literals and self.count and self.kind_words and _counted_literal(self.kind_words, literals):
            # "how many employees does X have" where the KG stores a number of employees
            self.count, kind = False, "number"
        if literals and not self.count and kind == "entity":
            kind = _literal_named(self.tokens, literals, self.cues) or kind
        return kind

    def shape(self, answer_kind: AnswerKindName) -> Shape:
        """One label, by precedence: ask > count > superlative > comparative > negation > union >
        intersection > literal > chain."""
        if self.form == "ask":
            return "ask"
        if self.count:
            return "count"
        if self.superlative:
            return "superlative"
        if self.comparison is not None:
            return "comparative"
        if self.negated:
            return "negation"
        if self.conjunction == "or":
            return "union"
        if self.intersection:
            return "intersection"
        return "literal" if answer_kind in ("number", "date", "string") else "chain"


def read_shape(question: str, literals: Mapping[str, AnswerKindName] | None = None) -> ShapeReading:
    """Read the shape of ``question`` (see module doc).

    ``literals`` optionally maps the KG's literal relation labels ("population", "birth date") to
    the kind of value they hold; a question naming one asks for that literal, not an entity, and
    "how many N" asks for the stored number when the KG holds a "number of N"."""
    r = _Reader(question)
    r.read_form()
    r.read_count()
    r.read_superlative()
    r.read_comparison()
    r.read_two_way()
    r.read_negation()
    r.read_coordination()
    kind = r.answer_kind(literals)
    shape = r.shape(kind)
    return ShapeReading(
        form=r.form, shape=shape, answer_kind=kind, kind_words=r.kind_words,
        order=r.order if r.superlative else None,
        order_words=r.order_words if (r.superlative or r.comparison is not None) else None,
        superlative_word=r.superlative_word if r.superlative else None,
        comparison=r.comparison, number=r.number, negated=r.negated, conjunction=r.conjunction,
        compared_noun=r.compared_noun if r.comparison is not None else None,
        cue_positions=frozenset(r.cues - set(r.kind_positions)))


def _wh_kind(read: _Reader) -> AnswerKindName:
    """The answer kind a wh-question asks for: "when" / "what year" -> date, "what is the number
    of" -> number, else an entity."""
    low, first_wh = read.low, read.first_wh
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
        if phrase and phrase[-1] in _DATE_NOUNS:
            return "date"
        if phrase and phrase[0] in AMOUNT_NOUNS:
            return "number"
    return "entity"


def _kind_after_cue(read: _Reader) -> None:
    """The class noun after "which" / "what" ("which *country*") or an imperative ("name the *films*")."""
    tokens, low, start, first_wh = read.tokens, read.low, read.start, read.first_wh
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

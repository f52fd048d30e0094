"""Label normalisation, tokenisation and reranking shared by every label backend.

Keeping these in one module is what makes the embedded (tantivy) and the Elasticsearch
backends agree: both index the same normalised strings and rerank candidates with the same
scorer, so only candidate *gathering* differs between them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

# Letters that NFKD does not decompose into base letter + combining mark.
_EXTRA_FOLDS = str.maketrans(
    {
        "ø": "o",
        "ł": "l",
        "đ": "d",
        "ð": "d",
        "þ": "th",
        "æ": "ae",
        "œ": "oe",
        "ı": "i",
        "ħ": "h",
        "ŧ": "t",
    }
)
_APOSTROPHES = re.compile(r"['\u2019\u2018`\u00b4]")
_NON_WORD = re.compile(r"[\W_]+")
# What _NON_WORD matches, for ASCII text: every character but a letter or a digit, as a space.
_ASCII_NON_WORD = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})

GRAM_SIZE = 3
GRAM_PAD = "_"  # stands for a space inside a gram; the normalised text never contains "_"


def normalize_label(text: str) -> str:
    """Fold case and accents, turn underscores/punctuation into single spaces.

    ``"Peter_Franzén!"`` and ``"peter  franzen"`` both become ``"peter franzen"``; apostrophes
    are dropped rather than split on, so ``"Ocean's"`` matches ``"Oceans"``. Only a text made
    of nothing but symbols keeps them (``"$"`` stays ``"$"``); whitespace/underscores -> ``""``.
    """
    if not text:
        return ""
    if text.isascii():  # NFKD leaves ASCII as it is, and the extra folds are all of non-ASCII letters
        folded = text.lower().replace("&", " and ")
        if "'" in folded or "`" in folded:
            folded = folded.replace("'", "").replace("`", "")
        # one table lookup a character instead of the regular expression (a load normalises millions)
        words = " ".join(folded.translate(_ASCII_NON_WORD).split())
    else:
        decomposed = unicodedata.normalize("NFKD", text)
        folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold().translate(_EXTRA_FOLDS)
        folded = folded.replace("&", " and ")
        folded = _APOSTROPHES.sub("", folded)
        words = _NON_WORD.sub(" ", folded).strip()
    if words:
        return words
    # A name made only of symbols ("$", "?!") keeps its symbols, else it could never be found.
    return " ".join(folded.replace("_", " ").split())


def name_edits(norm: str) -> int:
    """Character edits a whole name may differ by and still count as the same name misspelt: none
    below 4 characters, 1 below 9, else 2 (what :meth:`TantivyLabelIndex.search_names` allows)."""
    if len(norm) < 4:
        return 0
    return 1 if len(norm) < 9 else 2


def label_words(norm: str) -> list[str]:
    """Word tokens of an already-normalised label (distinct, in order)."""
    return list(dict.fromkeys(norm.split()))


def label_grams(norm: str, n: int = GRAM_SIZE) -> list[str]:
    """Character n-grams of an already-normalised label, with word-boundary padding.

    Spaces become ``_`` so every gram survives a whitespace tokenizer as one token; the
    padding gives short words (``"up"`` -> ``_up``, ``up_``) grams of their own.
    """
    if not norm:
        return []
    padded = GRAM_PAD + norm.replace(" ", GRAM_PAD) + GRAM_PAD
    if len(padded) <= n:
        return [padded]
    return list(dict.fromkeys([padded[i : i + n] for i in range(len(padded) - n + 1)]))


def match_score(query_norm: str, cand_norm: str) -> float:
    """Similarity in [0, 100] of two normalised strings; 100 only for equal strings.

    Whole-string edit similarity dominates (mentions are usually full names, possibly with
    typos): indel ratio plus OSA (so a swapped pair of letters counts as one typo, not two),
    each also taken on sorted words (slightly discounted) so "hanks tom" finds "tom hanks";
    token-set and WRatio add credit for partial mentions.
    """
    if query_norm == cand_norm:
        return 100.0
    ratio = fuzz.ratio(query_norm, cand_norm)
    osa = 100.0 * OSA.normalized_similarity(query_norm, cand_norm)
    if " " in query_norm or " " in cand_norm:
        q_sorted = " ".join(sorted(query_norm.split()))
        c_sorted = " ".join(sorted(cand_norm.split()))
        if q_sorted != query_norm or c_sorted != cand_norm:
            ratio = max(ratio, 0.95 * fuzz.ratio(q_sorted, c_sorted))
            osa = max(osa, 95.0 * OSA.normalized_similarity(q_sorted, c_sorted))
    token_set = fuzz.token_set_ratio(query_norm, cand_norm)
    weighted = fuzz.WRatio(query_norm, cand_norm)
    # Cap below 100 so a non-identical candidate never ties with an exact one.
    return min(99.9, 0.3 * ratio + 0.3 * osa + 0.2 * token_set + 0.2 * weighted)


@dataclass(frozen=True)
class Candidate:
    """One (IRI, label) pair a backend gathered before reranking."""

    iri: str
    label: str  # primary label of the IRI
    matched: str  # the label or alias text this candidate came from
    norm: str | None = None  # normalize_label(matched), when the backend stored it


@dataclass(frozen=True)
class Ranked:
    iri: str
    label: str
    matched: str
    score: float
    exact: bool


def rerank(query: str, candidates: Iterable[Candidate], k: int) -> list[Ranked]:
    """Score candidates against ``query``, keep the best label per IRI, order deterministically.

    Order: exact normalised matches first, then score, then a case-sensitive exact match,
    then the shorter primary label, then the IRI — so equal inputs always give equal output.
    """
    q = normalize_label(query)
    if not q or k <= 0:
        return []
    raw_query = query.strip()
    best: dict[str, tuple[tuple, Ranked]] = {}
    cache: dict[str, float] = {}
    for cand in candidates:
        norm = cand.norm if cand.norm is not None else normalize_label(cand.matched)
        if not norm:
            continue
        score = cache.get(norm)
        if score is None:
            score = cache[norm] = match_score(q, norm)
        exact = norm == q
        key = (not exact, -score, cand.matched != raw_query, len(cand.label), cand.iri, cand.matched)
        prev = best.get(cand.iri)
        if prev is None or key < prev[0]:
            best[cand.iri] = (key, Ranked(cand.iri, cand.label, cand.matched, round(score, 3), exact))
    ordered = sorted(best.values(), key=lambda item: item[0])
    return [ranked for _, ranked in ordered[:k]]

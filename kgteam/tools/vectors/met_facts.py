"""The facts a name-triple load meets, kept as term ids, so its triple vectors need no second pass.

Reading a 4M-fact store back (``quads_for_pattern`` turns every term into a Python object) took a
thread about 36 s a million facts, more than composing and indexing their vectors together. A
MetaQA/TSV load already holds every term as it writes the store, and an IRI's name is final when
it is first met, so :class:`MetFacts` records three integers a fact and a name an IRI on the way.
Duplicate input lines are dropped at the end, as the store drops them. RDF input, and
``kgteam index`` on an existing KG, still read the store (:func:`~kgteam.tools.vectors.verbalise.fact_triples`).
"""

from __future__ import annotations

from array import array

import numpy as np

from kgteam.tools.iri import readable_name
from kgteam.tools.vectors.verbalise import NAME_PREDICATES, TermTable


class MetFacts:
    """Term ids of the facts of a load, in the order met; terms are N-Triples IRIs, ``<...>``."""

    def __init__(self, limit: int | None = None) -> None:
        self.ids: dict[str, int] = {}  # "<iri>" -> term id
        self.rows = array("i")  # subject, predicate, object ids, a fact after another
        self.names: dict[str, str] = {}  # IRI -> its name, as read_labels() would give it
        self.limit = limit  # facts (lines) past which they are not wanted; None: no limit

    def over_limit(self) -> bool:
        """True once more lines were met than ``limit`` facts (the caller then drops this)."""
        return self.limit is not None and len(self.rows) > 3 * self.limit

    def term(self, term: str) -> int:
        """The id of an N-Triples IRI term, given the first time it is met."""
        got = self.ids.get(term)
        if got is None:
            got = self.ids[term] = len(self.ids)
        return got

    def usable(self, skipped: set[str]) -> bool:
        """False when a met predicate is a naming one (``skipped``): its triples are names, which
        only the store scan tells apart from facts."""
        return not any(self.ids.get(f"<{iri}>") is not None for iri in skipped | NAME_PREDICATES)

    def predicates(self) -> list[str]:
        """The predicates the facts use, sorted (what ``fact_predicates`` reads from the store)."""
        used = np.unique(np.frombuffer(self.rows, dtype=np.int32)[1::3])
        values = list(self.ids)
        return sorted(values[i][1:-1] for i in used.tolist())

    def table(self) -> TermTable:
        """The term table of the vector index: every term an IRI, named as the store names it."""
        values = [term[1:-1] for term in self.ids]
        names = self.names
        return TermTable(values=values, kinds=["u"] * len(values), datatypes=[""] * len(values),
                         labels=[names.get(v) or readable_name(v) for v in values])

    def fact_ids(self) -> np.ndarray:
        """The (n, 3) int32 ids of the distinct facts, sorted."""
        rows = np.frombuffer(self.rows, dtype=np.int32).reshape(-1, 3)
        if not len(rows):
            return rows.copy()
        bits = max(1, len(self.ids) - 1).bit_length()
        if 3 * bits > 63:
            return np.unique(rows, axis=0)
        # three ids packed in one int64: a plain sort, ~10x faster than unique over rows
        keys = np.unique((rows[:, 0].astype(np.int64) << (2 * bits)) | (rows[:, 1].astype(np.int64) << bits)
                         | rows[:, 2].astype(np.int64))
        mask = (1 << bits) - 1
        return np.stack([keys >> (2 * bits), (keys >> bits) & mask, keys & mask], axis=1).astype(np.int32)

    def release(self) -> None:
        """Empties the name tables (shared with the caller's ``labels``) and the rows once the term
        table and :meth:`fact_ids` are made."""
        self.ids.clear()
        self.names.clear()
        self.rows = array("i")

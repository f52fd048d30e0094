"""Which vectors ``kgteam load`` builds: ``--vectors auto|triples|relations|none``.

Only PG&AKV's verifier and R3's fact selector call ``similar_triples``; dense relation search
(``search_relations``) is used by the adaptive and R3 teams, and the model-free default team
uses neither. Relation vectors are a few thousand rows (seconds), so ``auto`` always builds
them; the triple index costs about as much as the rest of the load together, so ``auto`` builds
it only while it stays an exact index (small KGs), and a team that needs it on a bigger KG is
told to run ``kgteam index NAME``.
"""

from __future__ import annotations

from typing import Literal

from kgteam.tools.vectors.index import EXACT_MAX_ROWS

VectorsMode = Literal["auto", "triples", "relations", "none"]
VECTORS_MODES: tuple[VectorsMode, ...] = ("auto", "triples", "relations", "none")
AUTO_TRIPLES_MAX_FACTS = EXACT_MAX_ROWS  # auto: a triple index only when it is exact (no ANN build)


def wants_triples(mode: VectorsMode, facts: int) -> bool:
    """Whether a load in ``mode`` builds the triple index of a KG of ``facts`` facts."""
    return mode == "triples" or (mode == "auto" and facts <= AUTO_TRIPLES_MAX_FACTS)

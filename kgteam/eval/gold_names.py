"""Gold answers named as the KG names them, so an answer in the KG's words is graded right.

A gold answer given only by IRI (a gold query's result, a dataset listing IRIs) gets its name
from the KG through ``labels_for``: the one definition of names (:mod:`kgteam.tools.naming`)
that the team's answers use too. Gold answers that carry a label keep it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kgteam.eval.datasets import GoldAnswer

if TYPE_CHECKING:
    from kgteam.tools.kg_tools import KGTools


async def named_golds(golds: Sequence[GoldAnswer], tools: KGTools | None) -> list[GoldAnswer]:
    """``golds`` with every IRI-only item labelled by the KG's name for it (unchanged without tools)."""
    unnamed = sorted({g.iri for g in golds if g.label is None and g.iri})
    if tools is None or not unnamed:
        return list(golds)
    names = await tools.labels_for(unnamed)
    return [g.model_copy(update={"label": names[g.iri]}) if g.label is None and g.iri in names else g
            for g in golds]

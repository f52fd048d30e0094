"""Documents → KG: the documents say which KG entity a name they alone know stands near, the KG
answers the rest of the question from there."""

from __future__ import annotations

import pytest

from kgteam.protocols.evidence import EvidenceDocument
from kgteam.roles.adaptive.bridge import kg_from_documents
from kgteam.roles.semantic import SemanticLayer
from kgteam.roles.semantic.similarity import team_similarity

DOCS = [
    EvidenceDocument(id="t", title="The Gilded Lantern", text=(
        "The Gilded Lantern is a theatre in Corlis, on the bank of the river below the old market. "
        "The theatre opened in 1874.")),
    EvidenceDocument(id="h", title="Kessel Hut", text="Kessel Hut is a mountain refuge below Mount Orrin."),
]


@pytest.fixture(scope="module")
def isles(isles_home):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools

    tools = KGTools.from_kg(open_kg("isles", home=isles_home))
    box = tools.toolbox()
    yield box, SemanticLayer(box, team_similarity(box))
    tools.close()


@pytest.mark.parametrize("question,unknown,entity,answer", [
    ("In which region is the theatre called the Gilded Lantern?", "Gilded Lantern", "Corlis", "Havenmoor"),
    # the kind asked ("which river") picks the path whose values are rivers
    ("Which river flows through the town where the Gilded Lantern stands?", "Gilded Lantern", "Corlis", "Ammel"),
    ("How high is the mountain above Kessel Hut?", "Kessel Hut", "Mount Orrin", "2417"),
])
async def test_a_kg_entity_the_documents_name_leads_back_into_the_kg(question, unknown, entity, answer, isles):
    tools, layer = isles
    got = await kg_from_documents(question, [unknown], DOCS, tools, layer)
    assert got is not None and got.entity == entity
    assert [v.label for v in got.values] == [answer]
    assert any(answer in (t.object_label or "") for t in got.triples)  # the answer stands on its triples


async def test_no_kg_entity_near_the_name_no_answer(isles):
    tools, layer = isles
    lone = [EvidenceDocument(id="x", title="Greyneck Light", text="Greyneck Light was first lit in 1856.")]
    assert await kg_from_documents("In which region is Greyneck Light?", ["Greyneck Light"], lone, tools, layer) is None

"""Groundedness is checked against the KG: cited triples must exist and the answer must be named
by the KG (an IRI, a literal object or the KG's own label), never by labels the team supplied."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgteam.eval.grading import check_groundedness
from kgteam.eval.metrics import Predicted
from kgteam.protocols.evidence import EvidenceTriple
from kgteam.tools.kg import open_kg
from kgteam.tools.kg_tools import RDFS_LABEL, KGTools

METAQA_R = "http://example.org/metaqa/r/"
ORCHARD = Path(__file__).resolve().parents[1] / "data" / "orchard.ttl"  # 20 triples: runs in a plain checkout


@pytest.fixture(scope="module")
def orchard_home(tmp_path_factory):
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("grounded_orchard")
    build_kg([ORCHARD], "orchard", home=home, progress=False, embed=False)
    return home


@pytest.fixture(params=["orchard", "evalmeta"])
def tools(request, orchard_home):
    """The tiny KG of tests/data always; the MetaQA sample too where the shared data is."""
    if request.param == "orchard":
        kg = open_kg("orchard", home=orchard_home)
    else:
        request.getfixturevalue("eval_kg_home")
        kg = open_kg("evalmeta")
    tools = KGTools(kg.store, kg.labels)
    yield tools
    tools.close()


async def _real_triple(tools: KGTools) -> tuple[EvidenceTriple, str]:
    res = await tools.run_sparql(
        f"SELECT ?s ?p ?o ?sl ?ol WHERE {{ ?s ?p ?o . FILTER(?p != <{RDFS_LABEL}> && !STRSTARTS(STR(?p), "
        f"'http://www.w3.org/')) ?s <{RDFS_LABEL}> ?sl . ?o <{RDFS_LABEL}> ?ol }} ORDER BY ?s ?p ?o LIMIT 1")
    row = res.rows[0]
    t = EvidenceTriple(subject=row["s"].value, predicate=row["p"].value, object=row["o"].value,
                       subject_label=row["sl"].value, object_label=row["ol"].value)
    return t, row["ol"].value


async def test_real_triple_with_the_kg_label_is_grounded(tools):
    t, label = await _real_triple(tools)
    check = await check_groundedness([t], [Predicted(label=label)], tools)
    assert check.existing == 1 and check.contains_answer and check.grounded
    by_iri = await check_groundedness([t.model_copy(update={"object_label": None})],
                                      [Predicted(label="whatever", iri=t.object)], tools)
    assert by_iri.grounded


async def test_forged_label_on_a_real_triple_is_not_grounded(tools):
    t, _ = await _real_triple(tools)
    forged = t.model_copy(update={"object_label": "Made Up Answer"})
    check = await check_groundedness([forged], [Predicted(label="Made Up Answer")], tools)
    assert check.existing == 1  # the triple itself is real
    assert not check.contains_answer and not check.grounded
    forged_subject = t.model_copy(update={"subject_label": "Made Up Answer"})
    assert not (await check_groundedness([forged_subject], [Predicted(label="Made Up Answer")], tools)).grounded


async def test_missing_triple_is_not_grounded(tools):
    t, label = await _real_triple(tools)
    fake = t.model_copy(update={"predicate": METAQA_R + "no_such_relation"})
    check = await check_groundedness([fake], [Predicted(label=label)], tools)
    assert check.existing == 0 and not check.grounded


async def test_one_made_up_triple_among_real_ones_is_not_grounded(tools):
    """Every cited triple must exist: one real triple naming the answer does not vouch for a made-up one."""
    t, label = await _real_triple(tools)
    fake = t.model_copy(update={"predicate": METAQA_R + "no_such_relation", "object": t.subject})
    check = await check_groundedness([t, fake], [Predicted(label=label)], tools)
    assert check.cited == 2 and check.existing == 1 and check.contains_answer
    assert not check.grounded

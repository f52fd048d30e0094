"""The triple extractor on a small real KG (Oxigraph, tests/roles' small MetaQA-format KB): a
proposal's ends are KG entities or marked new, its direction is the one the KG holds the relation
in, and a document's title (a file name, say) is no subject unless the text writes it."""

from __future__ import annotations

from roles_helpers import env, make_ctx

from kgteam.llm.no_model import NoModel
from kgteam.protocols.evidence import EvidenceDocument
from kgteam.protocols.payloads import GradedDocuments
from kgteam.roles.adaptive.triple_extractor import TripleExtractor, TripleExtractorSettings


async def _proposals(small_tools, *docs: EvidenceDocument):
    graded = GradedDocuments(question="who acted in these films?", kept=list(docs))
    message = env(graded)
    ctx = make_ctx(NoModel(), small_tools, [message])
    out = await TripleExtractor(TripleExtractorSettings(use_model=False)).handle(message, ctx)
    return out[0].proposals if isinstance(out, list) else out.proposals


async def test_a_title_the_text_never_writes_is_no_subject(small_tools):
    doc = EvidenceDocument(id="corpus:notes:munich.txt#0", title="munich",
                           text="Ray Winstone starred in the thriller. Critics praised Ray Winstone's work.")
    found = await _proposals(small_tools, doc)
    assert not any("munich" in (p.subject_label + p.object_label).lower() for p in found), [p.line() for p in found]


async def test_a_title_the_text_writes_is_read_as_named(small_tools):
    doc = EvidenceDocument(id="d1", title="River Queen",
                           text="River Queen is a drama. Cast: Samantha Morton, Kiefer Sutherland.")
    found = await _proposals(small_tools, doc)
    assert any(p.subject_label == "River Queen" and p.object_label == "Samantha Morton" for p in found), \
        [p.line() for p in found]


async def test_both_ends_are_kg_entities_or_marked_new_and_the_kg_direction_holds(small_tools):
    doc = EvidenceDocument(id="d2", title="Notes", text=(
        "In the play, Vincent Ward starred actors Kiefer Sutherland and Lee Tamahori. "
        "The cast of River Queen includes Samantha Morton."))
    found = await _proposals(small_tools, doc)
    assert found, "no proposal at all"
    lines = [p.line() for p in found]
    for p in found:
        assert p.subject or p.subject_new, p.line()
        assert p.object or p.object_new, p.line()
        assert (p.subject is None) == p.subject_new and (p.object is None) == p.object_new
        assert ("(new)" in p.line()) == (p.subject_new or p.object_new)
    # the KG has films as subjects of starred_actors and people as objects: two people are never
    # linked by it, and a person is never its subject
    people = {"Vincent Ward", "Kiefer Sutherland", "Lee Tamahori", "Samantha Morton"}
    starred = [p for p in found if p.predicate.endswith("/starred_actors")]
    assert not any(p.subject_label in people and p.object_label in people for p in starred), lines
    assert not any(p.subject_label in people and p.subject for p in starred), lines
    assert any(p.subject_label == "River Queen" and p.object_label == "Samantha Morton" and p.object_new
               for p in starred), lines


async def test_a_new_name_is_proposed_only_where_the_kg_could_place_it(small_tools):
    """"The River Queen of 2005 was directed by Vincent Ward for Acme Pictures": the director is the
    known Vincent Ward; neither the studio nor "River Queen" read inside the title is a director or
    a film (the README's RKO example, issue 40)."""
    doc = EvidenceDocument(id="d3", title="The River Queen", text=(
        "The River Queen of 2005 was directed by Vincent Ward for Acme Pictures."))
    lines = [p.line() for p in await _proposals(small_tools, doc)]
    assert not any("Acme" in line for line in lines), lines
    assert not any("(new)" in line and "River Queen" in line for line in lines), lines

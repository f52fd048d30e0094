"""R3 over two KGs: a viewer's profile in one KG (what the viewer watches, avoids, enjoys) decides
a "would I like X?" about a film of the other, joined by name. Two tiny KGs built here."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from kgteam.llm.no_model import NoModel
from kgteam.protocols.payloads import Answer
from kgteam.roles.base import ListTrace
from kgteam.team_builder import playbook_runner

# Films: "horror" is a lower-case tag beside the genre "Horror"; "1950s" is a tag too; "Kim" is a film.
FILMS = """
@prefix f: <http://example.org/films/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
f:inLanguage rdfs:label "in language" .
f:hasGenre rdfs:label "has genre" .
f:releaseYear rdfs:label "release year" .
f:starring rdfs:label "starred actors" .
f:hasTags rdfs:label "has tags" .
f:quiet rdfs:label "Quiet River" ; f:inLanguage f:ja ; f:hasGenre f:drama ; f:releaseYear "1954" ; f:starring f:aki .
f:loud rdfs:label "Loud Town" ; f:inLanguage f:en ; f:hasGenre f:drama ; f:releaseYear "1958" .
f:scream rdfs:label "Night Scream" ; f:inLanguage f:ja ; f:hasGenre f:horror ; f:releaseYear "1955" ;
    f:hasTags f:horrorTag .
f:bloom rdfs:label "Late Bloom" ; f:inLanguage f:ja ; f:hasGenre f:drama ; f:releaseYear "1975" ; f:hasTags f:tag50s .
f:kim rdfs:label "Kim" ; f:inLanguage f:en ; f:hasGenre f:drama ; f:releaseYear "1950" ; f:starring f:bo .
f:ja rdfs:label "Japanese" .
f:en rdfs:label "English" .
f:drama rdfs:label "Drama" .
f:horror rdfs:label "Horror" .
f:horrorTag rdfs:label "horror" .
f:tag50s rdfs:label "1950s" .
f:aki rdfs:label "Aki Mori" .
f:bo rdfs:label "Bo Lind" .
"""
# Viewers: their own predicates; a decade is a span of years, not a name films have.
PROFILES = """
@prefix p: <http://example.org/prefs/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
p:watchesOnly rdfs:label "watches only films in" .
p:enjoys rdfs:label "enjoys films from" .
p:avoids rdfs:label "avoids genre" .
p:startsIn rdfs:label "starts in" .
p:endsIn rdfs:label "ends in" .
p:ja rdfs:label "Japanese" .
p:horror rdfs:label "Horror" .
p:d50 rdfs:label "1950s" ; p:startsIn "1950"^^xsd:gYear ; p:endsIn "1959"^^xsd:gYear .
p:sam rdfs:label "Sam" ; p:watchesOnly p:ja ; p:enjoys p:d50 ; p:avoids p:horror .
p:kim rdfs:label "Kim" ; p:enjoys p:d50 .
"""


@pytest.fixture(scope="module")
def joined(tmp_path_factory: pytest.TempPathFactory):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.kg_union import KGUnion
    from kgteam.tools.loading import build_kg

    home: Path = tmp_path_factory.mktemp("r3_profiles")
    for name, text in (("prefs", PROFILES), ("films", FILMS)):
        (home / f"{name}.ttl").write_text(text, encoding="utf-8")
        build_kg([home / f"{name}.ttl"], name, home=home, progress=False)
    with contextlib.ExitStack() as stack:
        parts = {n: KGTools.from_kg(stack.enter_context(open_kg(n, home=home)), embedder=None)
                 for n in ("prefs", "films")}
        union = KGUnion(parts)
        stack.callback(union.close)
        yield union


async def _ask(question: str, tools) -> tuple[Answer, list]:
    runner = playbook_runner("r3", NoModel(), tools.toolbox(), trace=ListTrace())
    seen = [env async for env in runner.stream(question, session_id="t")]
    assert isinstance(seen[-1].payload, Answer)
    return seen[-1].payload, seen


@pytest.mark.parametrize("film,expected", [
    ("Quiet River", "True"),    # Japanese, 1954, a drama
    ("Loud Town", "False"),     # English: not a language Sam watches
    ("Night Scream", "False"),  # a horror film: the genre Sam avoids ("avoids" says not)
    ("Late Bloom", "False"),    # 1975 is outside the 1950s' years, though the film has the tag "1950s"
])
async def test_a_viewers_profile_in_one_kg_decides_a_film_of_the_other(film, expected, joined):
    answer, seen = await _ask(f"I am Sam: going by my preferences, would I like {film}?", joined)
    assert answer.values and answer.values[0].label == expected, answer.text
    axiom = next(e.payload for e in seen if e.kind == "axiom")
    assert axiom.form == "prefer" and {k.holder_label for k in axiom.constraints} == {"Sam"}
    if expected == "True":  # the verdict cites the viewer's facts and the film's
        subjects = {t.subject_label for t in answer.evidence.triples}
        assert {"Sam", film} <= subjects


async def test_a_viewer_named_like_a_film_keeps_only_the_profile_conditions(joined):
    # "Kim" the viewer is joined with "Kim" the film: its actors are a film's facts, not a condition
    answer, seen = await _ask("I am Kim: going by my preferences, would I like Quiet River?", joined)
    assert answer.values and answer.values[0].label == "True", answer.text
    axiom = next(e.payload for e in seen if e.kind == "axiom")
    assert [(k.via_label, k.op) for k in axiom.constraints] == [("enjoys films from", "within")]


async def test_a_stated_preference_still_reads_the_joined_genre(joined):
    answer, _ = await _ask("I never watch horror films: would I watch Night Scream?", joined)
    assert answer.values and answer.values[0].label == "False", answer.text

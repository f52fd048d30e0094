"""The semantic layer on a small Turtle KG whose predicates match no benchmark's vocabulary.

Lexical similarity only (no embedder), so each test shows which generic rule decides: other
names from ``skos:altLabel``, kind words, walking a relation back, the topic as an answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kgteam.protocols.payloads import RankedPath, path_confidence
from kgteam.roles.semantic import SemanticLayer, spot_mentions
from kgteam.roles.semantic.paths import PathStep, RelationPath, path_query

TTL = Path(__file__).resolve().parents[1] / "data" / "orchard.ttl"
E = "http://example.org/orchard/"


@pytest.fixture(scope="module")
def orchard(tmp_path_factory: pytest.TempPathFactory):
    from kgteam.tools.kg import open_kg
    from kgteam.tools.kg_tools import KGTools
    from kgteam.tools.loading import build_kg

    home = tmp_path_factory.mktemp("orchard-home")
    build_kg([TTL], "orchard", home=home, progress=False, embed=False)
    tools = KGTools.from_kg(open_kg("orchard", home=home))
    yield tools
    tools.close()


async def test_other_names_of_a_relation_come_from_the_kg(orchard):
    """"gardener" is only an altLabel of ``tendedBy``: the KG, not code, says what it means."""
    ranking = await SemanticLayer(orchard.toolbox()).rank("who is the gardener of Young Oak")
    best = ranking.best
    assert [s.predicate for s in best.steps] == [E + "tendedBy"]
    assert best.steps[0].words == "gardener"
    assert [a["value"] for a in best.answers] == [E + "Bo"]


async def test_who_is_not_answered_by_a_bare_value(orchard):
    """"who" asks for an entity: a path ending at a number loses to the same words asked with "what"."""
    layer = SemanticLayer(orchard.toolbox())

    async def planted_score(question: str) -> float:
        mention = (await spot_mentions(question, orchard.toolbox()))[0]
        scored = await layer.candidate_paths(question, mention)
        return next(s.score for p, s in scored if [x.predicate for x in p.steps] == [E + "plantedIn"])

    assert await planted_score("who planted Old Elm") < await planted_score("what planted Old Elm") - 0.4


async def test_a_relation_walked_back_needs_a_word_for_it(orchard):
    """"other trees grown in the field of X": grown in, there and back, without X itself."""
    layer = SemanticLayer(orchard.toolbox())
    ranking = await layer.rank("which trees are grown in the same field as Tall Ash")
    best = ranking.best
    assert [(s.predicate, s.direction) for s in best.steps] == [(E + "grownIn", "out"), (E + "grownIn", "in")]
    assert [a["value"] for a in best.answers] == [E + "Oak"]


async def test_a_kind_word_names_a_relation_only_by_spelling_it(orchard):
    """"which *field*" is the answer's kind; it does not add a hop for a relation it merely resembles."""
    ranking = await SemanticLayer(orchard.toolbox()).rank("which field is Young Oak grown in")
    assert [s.predicate for s in ranking.best.steps] == [E + "grownIn"]


def test_the_topic_is_an_answer_unless_a_relation_is_walked_back():
    child_of_parent = RelationPath(E + "Ash", (PathStep(E + "seedOf", "out", "seedling of"),
                                               PathStep(E + "seedOf", "in", "seedling of")))
    assert f"FILTER(?x2 != <{E}Ash>)" in path_query(child_of_parent)
    chain = RelationPath(E + "Ash", (PathStep(E + "seedOf", "out", "seedling of"),
                                     PathStep(E + "tendedBy", "out", "tended by")))
    assert "FILTER" not in path_query(chain)


def test_confidence_is_shared_with_rivals_that_answer_differently():
    def path(key: str, score: float, answers: list[str], support: float = 1.0) -> RankedPath:
        return RankedPath(entity=key, mention="m", steps=[], score=score, support=support,
                          answers=[{"type": "uri", "value": a} for a in answers])

    best = path("a", 1.0, ["x"])
    assert path_confidence(best, [best, path("b", 0.9, ["x"])]) == 1.0  # agrees: not a rival
    close = path_confidence(best, [best, path("c", 0.95, ["y"])])
    far = path_confidence(best, [best, path("c", 0.2, ["y"])])
    assert 0.5 < close < far <= 1.0
    unnamed = path("d", 1.0, ["x"], support=0.0)  # a step no word names
    assert path_confidence(unnamed, [unnamed]) == 0.0


async def test_a_misspelt_name_is_still_found(orchard):
    """One or two wrong letters in a name ("Young Oek") link it; an exact name is preferred."""
    layer = SemanticLayer(orchard.toolbox())
    ranking = await layer.rank("who is the gardener of Young Oek")
    assert ranking.best.entity == E + "Oak" and [a["value"] for a in ranking.best.answers] == [E + "Bo"]
    mentions = await spot_mentions("who is the gardener of Young Oek", orchard.toolbox())
    assert mentions[0].fuzzy == [E + "Oak"]
    exact = await spot_mentions("who is the gardener of Young Oak", orchard.toolbox())
    assert exact[0].fuzzy == [] and exact[0].exact_iris() == [E + "Oak"]


def test_short_words_are_not_misspelt_names():
    from kgteam.roles.semantic.mentions import near_hits
    from kgteam.tools.types import LabelHit

    hits = [LabelHit(iri=E + "Ash", label="Ash", matched="Ash", score=1.0),
            LabelHit(iri=E + "Elm", label="Old Elm", matched="Old Elm", score=1.0)]
    assert near_hits(hits, "Asp") == []  # 3 letters: no edit allowed
    assert near_hits(hits, "Old Elk") == [E + "Elm"]  # 7 letters: one edit
    assert near_hits(hits, "Odd Elk") == []  # two edits in 7 letters: too many


def test_a_kind_word_names_the_end_a_relation_points_at_not_the_end_it_comes_from():
    from kgteam.roles.semantic.paths import PathStep
    from kgteam.roles.semantic.scoring import QuestionScorer, _singulars
    from kgteam.roles.semantic.text import Unit

    assert {"movie", "company", "box"} <= _singulars("movies") | _singulars("companies") | _singulars("boxes")
    assert "plays" not in _singulars("players")  # the agent noun is not the verb's plural

    def names_end(word: str, label: str, direction: str) -> bool:
        unit = Unit(text=word, positions=(1,), order=(0, 0))
        scorer = QuestionScorer([], [unit], [label], [[1.0]], sameness=False, type_positions={1}, kind_heads={1})
        return scorer._names_end(0, PathStep(predicate=f"http://e/{label}", direction=direction, label=label))

    assert names_end("country", "is in country", "out")  # "which country is X in": what it points at
    assert names_end("players", "plays for country", "in")  # "how many players does X have": who plays
    assert not names_end("clubs", "plays in club", "in")  # walked back it ends at players, not clubs
    assert not names_end("movies", "appears in movie", "in")  # the label's own noun, plural
    assert not names_end("directors", "directed by", "in")  # a passive label's agent is the other end
    assert not names_end("players", "plays for country", "out")  # the one who plays is where it starts
    assert names_end("writers", "written by", "out")  # a passive label points at its agent
    assert names_end("actors", "starred actors", "out")  # the label's own noun


def test_a_plural_ends_the_kind_words_after_a_wh_word():
    from kgteam.roles.semantic.layer import type_positions
    from kgteam.roles.semantic.text import tokenize

    def kinds(q: str) -> list[str]:
        toks = tokenize(q)
        return [toks[i].text for i in sorted(type_positions(toks))]

    assert kinds("Which goalkeepers play for Mexico?") == ["goalkeepers"]  # "play" is the verb
    assert kinds("Which river port lies on the Ostra?") == ["river", "port"]


def test_the_kind_noun_is_the_word_after_the_wh_word_or_a_compound_before_an_auxiliary():
    from kgteam.roles.semantic.layer import kind_heads
    from kgteam.roles.semantic.text import tokenize

    def heads(q: str) -> list[str]:
        toks = tokenize(q)
        return [toks[i].text for i in sorted(kind_heads(toks))]

    assert heads("Which country is Club America in?") == ["country"]
    assert heads("which football club does Brad Guzan play for?") == ["football", "club"]
    assert heads("Which forwards play for Mexico?") == ["forwards"]  # "play" is the verb
    assert heads("How many players does Brazil have?") == ["players"]


async def test_everyday_words_are_no_name_where_the_question_capitalises_names(demo_tools):
    """"The man who directed Heat": the KG's film is *The Man*, but this writer capitalises names
    (Heat), so "The man" is words. An all-lower-case question keeps every reading."""
    spans = [m.text for m in await spot_mentions("The man who directed Heat also directed Collateral",
                                                 demo_tools.toolbox())]
    assert "The man" not in spans and {"Heat", "Collateral"} <= set(spans)
    assert "the man" in [m.text for m in await spot_mentions("who directed the man", demo_tools.toolbox())]
    assert "The Man" in [m.text for m in await spot_mentions("Who directed The Man", demo_tools.toolbox())]

"""Deterministic relation ranking: the order of a 2-hop chain comes from where the cues sit."""

from __future__ import annotations

import pytest

from kgteam.roles.triad.relscore import QuestionView, hop1_score, pair_score

D, S, W, L, G, Y = (["http://x/r/directed_by"], ["http://x/r/starred_actors"], ["http://x/r/written_by"],
                    ["http://x/r/in_language"], ["http://x/r/has_genre"], ["http://x/r/release_year"])


@pytest.mark.parametrize(("question", "mention", "right", "wrong"), [
    ("the films directed by [David Grieco] starred which actors", "David Grieco", (D, S), (S, D)),
    ("the movies starred by [Sheree North] were directed by who", "Sheree North", (S, D), (D, S)),
    ("what are the main languages in [Chloe Moretz] acted films", "Chloe Moretz", (S, L), (L, S)),
    ("who are the directors of the films written by [Joseph Quillan]", "Joseph Quillan", (W, D), (D, W)),
    ("who starred movies for the writer [Ron J. Friedman]", "Ron J. Friedman", (W, S), (S, W)),
    ("when did the movies acted by [Yvette Mimieux] release", "Yvette Mimieux", (S, Y), (Y, S)),
])
def test_chain_order(question, mention, right, wrong):
    q = QuestionView.build(question, mention)
    assert pair_score(q, *right, same_relation=False) > pair_score(q, *wrong, same_relation=False)


@pytest.mark.parametrize(("question", "mention", "rel"), [
    ("which films share the same director of [Postal]", "Postal", D),
    ("who co-starred with [Khandi Alexander]", "Khandi Alexander", S),
    ("the screenwriter [Andrew J. Fenady] co-wrote movies with who", "Andrew J. Fenady", W),
])
def test_same_relation_there_and_back_beats_other_chains(question, mention, rel):
    q = QuestionView.build(question, mention)
    there_and_back = pair_score(q, rel, rel, same_relation=True)
    for other in (D, S, W, G, Y, L):
        if other != rel:
            assert there_and_back > pair_score(q, rel, other, same_relation=False)


def test_hop1_cue_and_fallback_similarity():
    q = QuestionView.build("what kind of film is [The Fastest Gun Alive]", "The Fastest Gun Alive")
    assert hop1_score(q, G) > max(hop1_score(q, r) for r in (D, S, W, L, Y))

"""``search_entities(names_only=True)``: names up to a typo from the label dictionary alone, the same
over a label index without that fast path, and spot_mentions using it to skip the full search of
spans that name nothing (same mentions, fewer full searches)."""

from __future__ import annotations

import pytest

from kgteam.roles.semantic.mentions import spot_mentions
from kgteam.tools.kg_tools import KGTools
from kgteam.tools.toolbox import Tool, Toolbox, ToolCall

E = "http://example.org/kg/e/"


class WordsOnlyIndex:
    """A label index with ``search`` alone (as a union or a plugin index may be)."""

    def __init__(self, inner) -> None:
        self.search = inner.search
        self.label_of = inner.label_of

    def close(self) -> None:
        return None


@pytest.mark.parametrize(("text", "gold"), [("Blade Runner", E + "Blade_Runner"), ("Harison Ford", E + "Harrison_Ford"),
                                            ("sir ridley scott", E + "Ridley_Scott")])
async def test_names_only_finds_names_up_to_a_typo(embedded_tools: KGTools, text, gold):
    fallback = KGTools(embedded_tools.store, WordsOnlyIndex(embedded_tools.labels))
    fast = await embedded_tools.search_entities(text, k=5, names_only=True)
    slow = await fallback.search_entities(text, k=5, names_only=True)
    assert fast[0].iri == gold and [h.iri for h in fast] == [h.iri for h in slow]


async def test_names_only_leaves_out_word_matches(embedded_tools: KGTools):
    text = "films of Ridley Scott"
    assert E + "Ridley_Scott" in [h.iri for h in await embedded_tools.search_entities(text, k=10)]
    fallback = KGTools(embedded_tools.store, WordsOnlyIndex(embedded_tools.labels))
    assert await embedded_tools.search_entities(text, k=10, names_only=True) == []
    assert await fallback.search_entities(text, k=10, names_only=True) == []


def _without_names_only(box: Toolbox) -> Toolbox:
    """The same search, offered without the ``names_only`` argument (a plugin's signature)."""
    search = box["search_entities"]

    async def plain(text: str, k: int = 10):
        return await search(text, k=k)

    return Toolbox({**{n: box[n] for n in box}, "search_entities": Tool.from_callable("search_entities", plain)})


@pytest.mark.parametrize("question", ["who directed Blade Runner and starred Harrison Ford",
                                      "what films did Ridley Scot direct", "which science fiction films are there"])
async def test_spot_mentions_same_with_fewer_full_searches(embedded_tools: KGTools, question):
    seen: list[ToolCall] = []
    box = embedded_tools.toolbox().with_hook(seen.append)
    fast = await spot_mentions(question, box)
    full_fast = sum(c.tool == "search_entities" and not c.arguments.get("names_only") for c in seen)
    seen.clear()
    slow = await spot_mentions(question, _without_names_only(box))
    full_slow = sum(c.tool == "search_entities" for c in seen)
    assert [(m.text, m.span, m.exact_iris()) for m in fast] == [(m.text, m.span, m.exact_iris()) for m in slow]
    assert [[h.iri for h in m.hits] for m in fast] == [[h.iri for h in m.hits] for m in slow]
    assert fast and full_fast < full_slow

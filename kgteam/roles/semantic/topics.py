"""Topic entities: the spans of a question that name KG entities, the start of every playbook's paths.

Every playbook finds them the same way (KERAG's planner, R3's anchors, the adaptive router's
signals), so they live with the semantic layer rather than inside one playbook.
"""

from __future__ import annotations

from typing import Any

from kgteam.protocols.payloads import TopicMention
from kgteam.roles.semantic.mentions import Mention, is_exact_hit, mention_in, spot_mentions
from kgteam.tools.types import LabelHit


def name_like(text: str) -> bool:
    """Written as a name (a capital, a digit or an underscore), not as an everyday word."""
    return any(c.isupper() or c.isdigit() or c == "_" for c in text)


async def find_topics(question: str, tools: Any, *, max_mentions: int = 3, exact_only: bool = False
                      ) -> list[TopicMention]:
    """Spans of the question the label index knows (exactly, or up to a typo), with their IRIs.

    The best span is a firm topic, and so is any other written as a name. ``exact_only`` leaves out
    names known only up to a typo (no evidence that the KG knows what the question names). An everyday word that
    happens to be some entity's label ("vellum", a material; "maker", a class) is a loose
    topic: it may be joined as an entity, but it still names relations for the other topics' paths.
    """
    found = [m for m in await spot_mentions(question, tools) if m.exact_iris()
             and (not exact_only or any(is_exact_hit(h, m.text) for h in m.hits))][:max_mentions]
    return [TopicMention(text=m.text, start=m.start, end=m.end, iris=m.exact_iris(),
                         firm=i == 0 or name_like(m.text) or m.category, category=m.category)
            for i, m in enumerate(found)]


def as_mention(topic: TopicMention) -> Mention:
    hits = [LabelHit(iri=iri, label=topic.text, matched=topic.text, score=1.0, exact=True) for iri in topic.iris]
    return Mention(topic.text, topic.start, topic.end, hits, category=topic.category)


def topic_from_text(question: str, text: str, iris: list[str]) -> TopicMention | None:
    """Place a mention (proposed by a model, linked elsewhere) in the question's tokens, or None."""
    placed = mention_in(question, text, iris)
    if placed.start == placed.end:
        return None
    return TopicMention(text=text, start=placed.start, end=placed.end, iris=iris, firm=name_like(text))


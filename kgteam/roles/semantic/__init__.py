"""KG-agnostic question understanding shared by every playbook.

The layer links the question's topic mention to KG entities, walks candidate relation paths of
1..3 hops from them (schema first, then instances), and scores each path against the words of
the question that are left once the mention is removed. Nothing here knows a dataset: relation
meaning comes from the KG's own labels (and an embedder's sense of words), so the same scorer
serves any KG: a catalogue, a sports league or a user's own graph.
"""

from kgteam.roles.semantic.layer import SemanticLayer, SemanticSettings
from kgteam.roles.semantic.mentions import Mention, spot_mentions

__all__ = ["Mention", "SemanticLayer", "SemanticSettings", "spot_mentions"]

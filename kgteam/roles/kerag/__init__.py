"""KERAG: plan retrieval at the schema level hop by hop, filter, retrieve broadly, summarise.

``PLAYBOOK`` is the playbook file registered under the ``kgteam.playbooks`` entry point.
"""

from importlib import resources

from kgteam.roles.kerag.planner import Planner
from kgteam.roles.kerag.retriever import Retriever
from kgteam.roles.kerag.schema_filter import SchemaFilter
from kgteam.roles.kerag.summarizer import Summarizer

PLAYBOOK = resources.files(__package__).joinpath("playbook.yaml")

__all__ = ["PLAYBOOK", "Planner", "Retriever", "SchemaFilter", "Summarizer"]

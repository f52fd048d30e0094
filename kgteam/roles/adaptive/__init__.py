"""Adaptive RAG: route each question to the KG, to documents, or to both, and grade what comes back.

``PLAYBOOK`` is the playbook file registered under the ``kgteam.playbooks`` entry point.
"""

from importlib import resources

from kgteam.roles.adaptive.answer_grader import AnswerGrader
from kgteam.roles.adaptive.document_grader import DocumentGrader
from kgteam.roles.adaptive.generator import Generator
from kgteam.roles.adaptive.hallucination_grader import HallucinationGrader
from kgteam.roles.adaptive.query_rewriter import QueryRewriter
from kgteam.roles.adaptive.router import Router
from kgteam.roles.adaptive.triple_extractor import TripleExtractor

PLAYBOOK = resources.files(__package__).joinpath("playbook.yaml")

__all__ = ["PLAYBOOK", "AnswerGrader", "DocumentGrader", "Generator", "HallucinationGrader", "QueryRewriter",
           "Router", "TripleExtractor"]

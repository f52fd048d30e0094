"""PG&AKV: pseudo-graph as code, atomic verification against every KG source, fixed graph, answer.

``PLAYBOOK`` is the playbook file registered under the ``kgteam.playbooks`` entry point.
"""

from importlib import resources

from kgteam.roles.pgakv.answer_writer import AnswerWriter
from kgteam.roles.pgakv.fixer import GraphFixer
from kgteam.roles.pgakv.generator import PseudoGraphGenerator
from kgteam.roles.pgakv.verifier import AtomicVerifier

PLAYBOOK = resources.files(__package__).joinpath("playbook.yaml")

__all__ = ["PLAYBOOK", "AnswerWriter", "AtomicVerifier", "GraphFixer", "PseudoGraphGenerator"]

"""R3: commonsense rules grounded on KG facts, searched as a tree bounded by depth and breadth.

``PLAYBOOK`` is the playbook file registered under the ``kgteam.playbooks`` entry point.
"""

from importlib import resources

from kgteam.roles.r3.anchor_extractor import AnchorExtractor
from kgteam.roles.r3.axiom_surfacer import AxiomSurfacer
from kgteam.roles.r3.fact_selector import FactSelector
from kgteam.roles.r3.grounded_answerer import GroundedAnswerer
from kgteam.roles.r3.missing_info import MissingInfoRole
from kgteam.roles.r3.verdict_join import VerdictJoin

PLAYBOOK = resources.files(__package__).joinpath("playbook.yaml")

__all__ = ["PLAYBOOK", "AnchorExtractor", "AxiomSurfacer", "FactSelector", "GroundedAnswerer", "MissingInfoRole",
           "VerdictJoin"]

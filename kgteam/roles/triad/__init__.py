"""Triad: generalist (parse), decision maker (link and build), advisor (answer or retry).

``PLAYBOOK`` is the playbook file registered under the ``kgteam.playbooks`` entry point.
"""

from importlib import resources

from kgteam.roles.triad.advisor import Advisor
from kgteam.roles.triad.decision_maker import DecisionMaker
from kgteam.roles.triad.generalist import Generalist

PLAYBOOK = resources.files(__package__).joinpath("playbook.yaml")

__all__ = ["PLAYBOOK", "Advisor", "DecisionMaker", "Generalist"]

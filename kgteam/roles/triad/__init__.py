"""Triad: generalist (parse), decision maker (link and build), advisor (answer or retry)."""

from kgteam.roles.triad.advisor import Advisor
from kgteam.roles.triad.decision_maker import DecisionMaker
from kgteam.roles.triad.generalist import Generalist

__all__ = ["Advisor", "DecisionMaker", "Generalist"]

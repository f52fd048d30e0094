"""Runtime: conversation bus, supervisor, team, sessions, traces — the only AutoGen importer.

Import the submodules you need (``kgteam.agents.team``, ``.sessions``, ``.trace``, ``.routing``);
nothing is imported here so ``import kgteam.agents.routing`` stays free of AutoGen.
"""

"""``python -m kgteam``: the same as the ``kgteam`` command (what an MCP client can start)."""

from kgteam.cli.app import main

main()

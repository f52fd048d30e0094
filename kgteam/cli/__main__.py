"""``python -m kgteam.cli``: the same as the ``kgteam`` command."""

from kgteam.cli.app import main

main()

"""One error hierarchy: every error kgteam raises on purpose is a :class:`KgteamError`.

A caller (the CLI, the HTTP server, a notebook) can catch ``KgteamError`` and show its message
to a person; anything else is a bug and keeps its traceback for the logs. Each layer defines its
own subclasses next to the code that raises them (``ToolError`` in tools, ``ModelError`` in llm,
``TeamConfigError`` in config ...), all rooted here, because ``protocols`` is the one layer every
other layer may import.
"""

from __future__ import annotations


class KgteamError(Exception):
    """Base of every deliberate kgteam error; the message is written for a person to read."""


class ContractError(KgteamError, TypeError):
    """Code broke a typed contract: a role's handler signature, an undeclared read, a tool grant."""

"""kgteam: knowledge-graph question answering with a team of LLM roles.

``from kgteam import Team`` is the Python API (see ``kgteam.api`` and docs/python.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Session", "Team", "__version__"]

if TYPE_CHECKING:
    from kgteam.api import Session, Team


def __getattr__(name: str) -> Any:  # lazy: `import kgteam` stays cheap for the CLI
    if name in ("Team", "Session"):
        from kgteam import api

        return getattr(api, name)
    raise AttributeError(f"module 'kgteam' has no attribute {name!r}")

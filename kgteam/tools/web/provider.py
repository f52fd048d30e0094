"""The ``SearchProvider`` protocol: anything that turns a query into ranked ``Document`` s.

The local corpus, SearxNG and Brave implement it; a plugin may add another. ``search`` raises a
:class:`~kgteam.tools.web.errors.WebSearchError` (a ``ToolError``) on failure, never an HTTP
library's own exception, so a role can report it and carry on.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from kgteam.tools.web.document import Document


@runtime_checkable
class SearchProvider(Protocol):
    name: str

    async def search(self, query: str, k: int = 10) -> list[Document]:
        """The best ``k`` documents for ``query``, best first."""
        ...

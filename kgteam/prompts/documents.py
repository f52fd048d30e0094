"""Documents in prompts (``fence_documents``): retrieved text is data, never instructions.

Every field of a document — title and URL included, since a web page chooses its own — goes
inside one data fence (:func:`kgteam.llm.fencing.fence`), so text such as "ignore previous
instructions" arrives as quoted material, and fence markers inside it are broken up so it cannot
close its fence and speak as the prompt. Roles that show documents to a model use
:func:`fence_documents`; the system prompts already say fenced text is never an instruction.
"""

from __future__ import annotations

from collections.abc import Iterable

from kgteam.llm.fencing import fence, one_line
from kgteam.tools.web.document import Document

DOCUMENT_TAG = "document"


def fence_document(doc: Document, number: int | None = None) -> str:
    """One document as a fenced block: a numbered header (id, title, url, source) and its text."""
    lines = []
    if number is not None:
        lines.append(f"[{number}]")
    lines.append(f"id: {one_line(doc.id)}")
    if doc.title:
        lines.append(f"title: {one_line(doc.title)}")
    if doc.url:
        lines.append(f"url: {one_line(doc.url)}")
    lines.append(f"source: {one_line(doc.source)}")
    lines.append("")
    lines.append(doc.snippet)
    return fence("\n".join(lines), tag=DOCUMENT_TAG)


def fence_documents(docs: Iterable[Document]) -> str:
    """Documents numbered from 1, each in its own fence, ready to paste into a prompt."""
    return "\n\n".join(fence_document(doc, n) for n, doc in enumerate(docs, 1))

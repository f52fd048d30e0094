"""Result caps in bytes as well as rows: a row count says nothing about size.

One row can carry a 100 MB string built by ``CONCAT``, and one ``GROUP_CONCAT`` row a whole KG, so
every backend also stops adding rows once the values it returns pass a byte budget. A result cut
that way says so (``truncated_by="bytes"``), as a row-capped one does (``"rows"``); a single row
larger than the whole budget is an error, since no prefix of it is a useful answer.
"""

from __future__ import annotations

from kgteam.tools.types import RDFTerm, SparqlResult, ToolError

__all__ = ["MAX_RESULT_BYTES", "ByteBudget", "cap_result"]

MAX_RESULT_BYTES = 2 * 1024 * 1024  # ~20x a large honest answer (10,000 rows of short labels is ~1 MB)


def term_bytes(term: RDFTerm) -> int:
    """UTF-8 size of what a term carries (value, datatype, language)."""
    return len(term.value.encode("utf-8", "surrogatepass")) + len(term.datatype or "") + len(term.lang or "")


class ByteBudget:
    """Admits rows while their values fit in ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.used = 0

    def admit(self, row: dict[str, RDFTerm]) -> bool:
        """Whether ``row`` fits (and count it); False once the budget is spent."""
        size = sum(term_bytes(t) for t in row.values())
        if self.used == 0 and size > self.max_bytes:
            raise ToolError(f"one result row holds {size} bytes, over the {self.max_bytes}-byte result cap: "
                            "select shorter values (e.g. SUBSTR, STRLEN) or fewer columns")
        if self.used + size > self.max_bytes:
            return False
        self.used += size
        return True


def cap_result(result: SparqlResult, max_bytes: int) -> SparqlResult:
    """``result`` cut at ``max_bytes`` of values (for backends that return whole answers)."""
    budget = ByteBudget(max_bytes)
    for i, row in enumerate(result.rows):
        if not budget.admit(row):
            return result.model_copy(update={"rows": result.rows[:i], "truncated": True, "truncated_by": "bytes"})
    return result

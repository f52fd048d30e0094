"""The branch tree of one run: which alternative line of work each message belongs to.

Branch 0 is the trunk. A step that emits alternatives (kinds its role lists in ``branches``)
opens one child branch per kept alternative. A branch's *family* is every branch under the same
top-level fork (the first fork below the trunk on its way up): a join waits for a family, so a
branch that later forks again (R3: a new axiom once a branch is deep enough) still counts as a
sibling of the others. Pruning a branch prunes what grows from it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from kgteam.protocols.payloads import PrunedBranch, PruneReason

TRUNK = 0


@dataclass
class BranchInfo:
    id: int
    parent: int | None
    fork_step: str  # the step that opened it ("" for the trunk)
    kind: str  # the alternative's payload kind
    pruned: PrunedBranch | None = None


class BranchBook:
    def __init__(self) -> None:
        self.info: dict[int, BranchInfo] = {TRUNK: BranchInfo(TRUNK, None, "", "")}
        self.opened: Counter[str] = Counter()  # branches opened per alternative kind (max_breadth)
        self.retries: Counter[int] = Counter()  # retry signals per branch (max_retries)
        self._next = 1

    def open(self, parent: int, fork_step: str, kind: str) -> int:
        branch = self._next
        self._next += 1
        self.info[branch] = BranchInfo(branch, parent, fork_step, kind)
        self.opened[kind] += 1
        return branch

    def chain(self, branch: int) -> list[int]:
        """``branch`` and its enclosing branches up to the trunk."""
        out = []
        current: int | None = branch
        while current is not None and current in self.info:
            out.append(current)
            current = self.info[current].parent
        return out

    def family(self, branch: int) -> str:
        """Key of the top-level fork ``branch`` grows from ("" for the trunk itself)."""
        chain = self.chain(branch)
        if len(chain) < 2:
            return ""
        return self.info[chain[-2]].fork_step

    def members(self, family: str) -> list[int]:
        return [b for b in self.info if b != TRUNK and self.family(b) == family]

    def is_pruned(self, branch: int) -> bool:
        return any(self.info[b].pruned is not None for b in self.chain(branch))

    def prune(self, branch: int, reason: PruneReason, *, depth: int = 0, detail: str = "") -> PrunedBranch | None:
        """Mark ``branch`` pruned (first reason wins); returns the record, or None if it already was."""
        info = self.info.get(branch)
        if info is None or info.pruned is not None:
            return None
        info.pruned = PrunedBranch(branch=branch, reason=reason, depth=depth, detail=detail)
        return info.pruned

    def pruned(self) -> list[PrunedBranch]:
        return [i.pruned for i in self.info.values() if i.pruned is not None]

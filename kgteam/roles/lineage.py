"""What a role may see of a run: the lineage of the message it handles, through typed lookups.

The runtime builds the lineage from ``parents`` links: the message, its ancestors, and what was
produced together with each of them (same step) on the same or an enclosing branch. A sibling
branch's messages are never in it, so two branches cannot read each other's work. Lookups are by
payload type and must be declared: a role reads only the kinds it consumes or lists in
``Role.reads`` — reading anything else is a :class:`ContractError`, so a role's inputs are
visible in its class and checked against the playbook when a team is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from kgteam.protocols.envelope import Envelope
from kgteam.protocols.errors import ContractError
from kgteam.protocols.payloads import Payload, PrunedBranch

P = TypeVar("P", bound=Payload)


class UndeclaredRead(ContractError):
    """A role looked up a payload kind it did not declare in ``consumes``/``reads``."""


@dataclass(frozen=True)
class Lineage:
    """The messages a role may read, oldest first; the handled message (if any) is last among them."""

    envelopes: tuple[Envelope, ...] = ()
    allowed: frozenset[type[Payload]] | None = None  # None: anything (tests, finalize of the whole run)
    owner: str = ""
    message_step: str = ""  # the handled message's step: its co-products share it

    @classmethod
    def of(cls, envelopes: Iterable[Envelope], *, allowed: Iterable[type[Payload]] | None = None,
           owner: str = "", message: Envelope | None = None) -> Lineage:
        return cls(tuple(envelopes), None if allowed is None else frozenset(allowed), owner,
                   message.step if message is not None else "")

    def _check(self, cls: type[Payload]) -> None:
        if self.allowed is not None and not any(issubclass(cls, a) or issubclass(a, cls) for a in self.allowed):
            names = ", ".join(sorted(a.__name__ for a in self.allowed)) or "(nothing)"
            raise UndeclaredRead(f"role {self.owner!r} reads {cls.__name__} but declares only {names}; "
                                 f"add it to the role's 'reads'")

    def ancestors(self, cls: type[P]) -> list[P]:
        """Every ``cls`` payload in the lineage, oldest first."""
        self._check(cls)
        return [e.payload for e in self.envelopes if isinstance(e.payload, cls)]  # type: ignore[misc]

    def ancestor(self, cls: type[P]) -> P | None:
        """The nearest (latest) ``cls`` payload, or None."""
        self._check(cls)
        for env in reversed(self.envelopes):
            if isinstance(env.payload, cls):
                return env.payload  # type: ignore[return-value]
        return None

    def coproducts(self, cls: type[P]) -> list[P]:
        """``cls`` payloads produced in the same step as the handled message (e.g. its candidate sets)."""
        self._check(cls)
        if not self.message_step:
            return []
        return [e.payload for e in self.envelopes  # type: ignore[misc]
                if e.step == self.message_step and isinstance(e.payload, cls)]

    def count(self, cls: type[Payload]) -> int:
        return len(self.ancestors(cls))

    def __len__(self) -> int:
        return len(self.envelopes)


@dataclass(frozen=True)
class BranchView:
    """One branch as ``finalize`` and joins see it: its last message's lineage and why it ended."""

    branch: int
    lineage: Lineage
    pruned: PrunedBranch | None = None
    done: bool = False  # it produced the kind a join waited for / reached an answer


@dataclass(frozen=True)
class RunView:
    """Every branch of a run, for a role's ``finalize`` after a budget stopped the run."""

    branches: Sequence[BranchView] = field(default_factory=tuple)

    def latest(self, cls: type[P]) -> list[P]:
        """The latest ``cls`` payload of each branch that has one, branch order."""
        out = []
        for b in self.branches:
            found = b.lineage.ancestor(cls)
            if found is not None:
                out.append(found)
        return out

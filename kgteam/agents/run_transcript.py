"""Every message of one run, indexed so a role's lineage can be cut out of it quickly."""

from __future__ import annotations

from collections import defaultdict

from kgteam.agents.branches import BranchBook
from kgteam.protocols.envelope import Envelope


class RunTranscript:
    def __init__(self, branches: BranchBook) -> None:
        self.envelopes: list[Envelope] = []
        self._by_id: dict[str, Envelope] = {}
        self._pos: dict[str, int] = {}
        self._by_step: dict[str, list[Envelope]] = defaultdict(list)
        self._branches = branches

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.envelopes)

    def __len__(self) -> int:
        return len(self.envelopes)

    def __getitem__(self, index: int) -> Envelope:
        return self.envelopes[index]

    def append(self, envelope: Envelope) -> None:
        if envelope.id in self._by_id:
            return
        self._pos[envelope.id] = len(self.envelopes)
        self.envelopes.append(envelope)
        self._by_id[envelope.id] = envelope
        if envelope.step:
            self._by_step[envelope.step].append(envelope)

    def get(self, envelope_id: str) -> Envelope | None:
        return self._by_id.get(envelope_id)

    def lineage(self, envelope: Envelope) -> list[Envelope]:
        """``envelope``, its ancestors along ``parents``, and each one's co-products (same step) on
        the same or an enclosing branch — never a sibling branch's messages. Transcript order."""
        found: dict[str, Envelope] = {}
        stack = [envelope]
        while stack:
            env = stack.pop()
            if env.id in found:
                continue
            found[env.id] = env
            if env.step:
                visible = set(self._branches.chain(env.branch))
                for co in self._by_step.get(env.step, ()):
                    if co.id not in found and co.branch in visible:
                        found[co.id] = co
            for pid in env.parents:
                parent = self._by_id.get(pid)
                if parent is not None and parent.id not in found:
                    stack.append(parent)
        return sorted(found.values(), key=lambda e: self._pos.get(e.id, len(self.envelopes)))

    def last_on_branch(self, branch: int) -> Envelope | None:
        """The branch's latest message from a role or the user (the supervisor's notes aside)."""
        for env in reversed(self.envelopes):
            if env.branch == branch and env.sender != "supervisor":
                return env
        return None

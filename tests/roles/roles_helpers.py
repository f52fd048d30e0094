"""Helpers for the role tests: contexts, envelopes, scripted choices that read the offered options."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from kgteam.llm.base import ChatMessage
from kgteam.protocols.budgets import Budgets, BudgetUsage
from kgteam.protocols.envelope import Envelope, new_id
from kgteam.protocols.payloads import Payload
from kgteam.roles.base import BudgetView, ListTrace, RoleContext
from kgteam.roles.lineage import Lineage
from kgteam.tools.kg_tools import KGTools

E = "http://example.org/metaqa/e/"
R = "http://example.org/metaqa/r/"

SMALL_KB = """\
Tracker|directed_by|Ian Sharp
Tracker|starred_actors|Temuera Morrison
Tracker|starred_actors|Ray Winstone
Tracker|written_by|Nathan Cole
Tracker|release_year|2010
Tracker|has_genre|Drama
Once Were Warriors|directed_by|Lee Tamahori
Once Were Warriors|starred_actors|Temuera Morrison
Once Were Warriors|written_by|Riwia Brown
Once Were Warriors|release_year|1994
Once Were Warriors|has_genre|Drama
River Queen|directed_by|Vincent Ward
River Queen|starred_actors|Temuera Morrison
River Queen|starred_actors|Kiefer Sutherland
River Queen|release_year|2005
River Queen|in_language|English
Lone Film|directed_by|Solo Director
Lone Film|release_year|1999
"""


def make_ctx(model: Any, tools: KGTools, transcript: list[Envelope] | None = None, *,
             history: list | None = None, budgets: Budgets | None = None,
             used: BudgetUsage | None = None) -> RoleContext:
    """A context whose lineage is ``transcript`` (the handled message last, as the runtime gives it)."""
    transcript = transcript if transcript is not None else []
    return RoleContext(model=model, tools=tools.toolbox(), trace=ListTrace(), lineage=LiveLineage(transcript),  # type: ignore[arg-type]
                       history=history or [], budgets=BudgetView(budgets or Budgets(), used or BudgetUsage()),
                       session_id="test", message=transcript[-1] if transcript else None)


class LiveLineage:
    """A lineage over a list the test keeps appending to; the last envelope is the handled one."""

    def __init__(self, transcript: list[Envelope]):
        self.source = transcript

    def _now(self) -> Lineage:
        last = self.source[-1] if self.source else None
        return Lineage.of(list(self.source), message=last)

    @property
    def envelopes(self) -> tuple[Envelope, ...]:
        return tuple(self.source)

    def ancestors(self, cls: Any) -> list[Any]:
        return self._now().ancestors(cls)

    def ancestor(self, cls: Any) -> Any:
        return self._now().ancestor(cls)

    def coproducts(self, cls: Any) -> list[Any]:
        return self._now().coproducts(cls)

    def count(self, cls: Any) -> int:
        return self._now().count(cls)

    def __len__(self) -> int:
        return len(self.source)


def env(payload: Payload, sender: str = "user", step: str = "") -> Envelope:
    return Envelope(session_id="test", sender=sender, payload=payload, step=step)


def add(transcript: list[Envelope], payloads: list[Payload], sender: str) -> list[Envelope]:
    """One step's outputs (they share a step id, as co-products do on the bus)."""
    step = new_id()
    envs = [env(p, sender, step) for p in payloads]
    transcript.extend(envs)
    return envs


_OPTION = re.compile(r"^(o\d+): (.*)$", re.MULTILINE)


def options_in(messages: list[ChatMessage]) -> dict[str, str]:
    """The ``oN: label`` options a choice prompt offered (from the first user message)."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    return {k: v for k, v in _OPTION.findall(user)}


def pick(*needles: str, k: int = 2) -> Callable[[list[ChatMessage]], str]:
    """A scripted reply that chooses the offered options whose label contains a needle."""

    def reply(messages: list[ChatMessage]) -> str:
        opts = options_in(messages)
        chosen = [k for k, label in opts.items() if any(n in label for n in needles)]
        return json.dumps({"chosen": chosen[:k] or ["o1"], "reason": "scripted"})

    return reply


def decisions(trace: Any, **match: Any) -> list[dict[str, Any]]:
    return [e for e in trace.events if e["event"] == "decision" and all(e.get(k) == v for k, v in match.items())]


def null_model() -> Any:
    """A scripted model whose every reply is unusable: roles must decide by fallback."""
    from kgteam.llm.scripted import ScriptedModel

    return ScriptedModel().add("*", None, "I cannot answer that.")

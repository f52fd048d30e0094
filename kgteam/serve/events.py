"""What a question's stream says, as JSON: role messages, tool calls, budget use and the answer.

The shapes are the HTTP contract (``docs/serve.md``) shared by API clients and the web chat;
they are built here from the runtime's own objects (envelopes, trace events, ``Answer``) and
nowhere else, so the stream and ``GET /v1/sessions/{id}`` describe an answer the same way.
"""

from __future__ import annotations

import time
from typing import Any

from kgteam.agents.routing import route
from kgteam.protocols.budgets import Budgets
from kgteam.protocols.display import display_data
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer
from kgteam.protocols.routes import Route

SNIPPET_CHARS = 500

Event = tuple[str, dict[str, Any]]  # (SSE event type, data)


def answer_json(answer: Answer) -> dict[str, Any]:
    """The contract's AnswerJSON: what the answer says, why (evidence), what it cost, why it stopped.
    Its strings come from the KG and are shown by clients (the web chat): sanitised as data."""
    ev = answer.evidence
    return display_data({
        "text": answer.text,
        "status": answer.status,
        "values": [{"label": v.label, "iri": v.iri} for v in answer.values],
        "guess": [{"label": v.label, "iri": v.iri} for v in answer.guess],
        "confidence": answer.confidence,
        "raw_confidence": answer.raw_confidence,  # the scorer's score before the team's map (None: no map)
        "calibration": answer.calibration,
        "grounded": answer.grounded,
        "stop_reason": answer.stopped_by,
        "error": answer.error,
        "fallbacks": list(answer.fallbacks),
        "model": answer.model,
        "evidence": {
            "triples": [{"s": t.subject, "p": t.predicate, "o": t.object, "s_label": t.subject_label,
                         "p_label": t.predicate_label, "o_label": t.object_label,
                         "o_is_literal": t.object_is_literal, **({"kg": t.kg} if t.kg else {})}
                        for t in ev.triples],
            "queries": [{"sparql": q.sparql, "rows": q.row_count, "endpoint": q.endpoint, "error": q.error}
                        for q in ev.queries],
            "documents": [{"title": d.title, "url": d.source if _is_url(d.source) else None,
                           "snippet": d.text[:SNIPPET_CHARS], "source": d.source, "id": d.id}
                          for d in ev.documents],
            "axioms": [{"text": a.text, "premises": list(a.premises)} for a in ev.axioms],
            "matches": [m.model_dump(mode="json") for m in ev.matches],
            "reasoning": list(ev.reasoning),
            # PG&AKV: the believed triples and what the fixer made of each (unverified ones are no fact)
            "pseudo_graph": [{"s": t.subject, "p": t.predicate, "o": t.object, "s_label": t.subject_label,
                              "p_label": t.predicate_label, "o_label": t.object_label,
                              "o_is_literal": t.object_is_literal, "status": t.status} for t in ev.pseudo_graph],
        },
        "cost": {"llm_calls": answer.cost.llm_calls, "tokens": answer.cost.total_tokens,
                 "prompt_tokens": answer.cost.prompt_tokens, "completion_tokens": answer.cost.completion_tokens,
                 "seconds": round(answer.cost.seconds, 3)},
    })


def _is_url(text: str | None) -> bool:
    return bool(text) and str(text).startswith(("http://", "https://"))


def _rows(result: Any) -> int | None:
    """How many rows or items a tool returned, from the trace's summary of its result."""
    if isinstance(result, dict):
        for key in ("rows", "len"):
            if isinstance(result.get(key), int):
                return int(result[key])
    return None


class RunEvents:
    """Turns one run's envelopes and trace events into the stream's events, in order.

    Budget use is tallied from what the stream sees (each LLM call, each message's depth and
    attempt, the clock), the same counts the supervisor keeps, and announced whenever it changes.
    """

    def __init__(self, session_id: str, question: str, budgets: Budgets, routes: list[Route]):
        self.session_id = session_id
        self.question = question
        self.budgets = budgets
        self.routes = routes
        self.started = time.monotonic()
        self.turn: int | None = None
        self.messages = 0
        self.llm_calls = 0
        self.tokens = 0
        self.depth = 0
        self.retries = 0

    def begin(self, turn: int) -> list[Event]:
        """The first event: the question is turn ``turn`` of the session (stored as running)."""
        self.turn = turn
        return [("turn", {"session": self.session_id, "turn": turn, "question": self.question})]

    def envelope(self, env: Envelope) -> list[Event]:
        out: list[Event] = []
        self.depth = max(self.depth, env.depth)
        self.retries = max(self.retries, env.attempt)
        terminal = env.kind == "answer" and not route(env, self.routes, self.budgets)
        recipients = [] if terminal else route(env, self.routes, self.budgets)
        out.append(("message", display_data({  # role messages quote KG labels: shown as data
            "seq": self.messages, "id": env.id, "kind": env.kind, "sender": env.sender,
            "recipient": ", ".join(recipients) or None, "recipients": recipients,
            "payload": env.payload.model_dump(mode="json"), "summary": env.payload.summary(),
            "parents": list(env.parents), "depth": env.depth, "branch": env.branch, "attempt": env.attempt,
            "created": env.created_at.isoformat(),
            "usage": {"llm_calls": env.usage.llm_calls, "tokens": env.usage.total_tokens},
        })))
        self.messages += 1
        out.append(("budget", self.budget()))
        return out

    def trace(self, event: str, data: dict[str, Any]) -> list[Event]:
        if event == "tool_call":
            return [("tool_call", display_data({"role": data.get("role"), "tool": data.get("tool"),
                                                "args": data.get("kwargs") or {}, "rows": _rows(data.get("result")),
                                                "seconds": data.get("seconds"), "error": data.get("error")}))]
        if event == "llm_retry":  # the model failed and is tried again: said while the run waits
            return [("progress", {"role": data.get("role"), "kind": "model_retry", "retry": data.get("retry"),
                                  "of": data.get("of"), "message": data.get("message"),
                                  "wait_s": data.get("wait_s")})]
        if event == "llm_call":
            self.llm_calls += 1
            self.tokens += int(data.get("prompt_tokens") or 0) + int(data.get("completion_tokens") or 0)
            return [("budget", self.budget())]
        return []

    def budget(self) -> dict[str, Any]:
        b = self.budgets
        return {
            "llm_calls": {"used": self.llm_calls, "max": b.max_llm_calls},
            "tokens": {"used": self.tokens, "max": b.max_tokens},
            "seconds": {"used": round(time.monotonic() - self.started, 3), "max": b.timeout_s},
            "depth": {"used": self.depth, "max": b.max_depth},
            "retries": {"used": self.retries, "max": b.max_retries},
            "messages": {"used": self.messages, "max": b.max_turns},
        }

    def answer(self, answer: Answer) -> list[Event]:
        """The final budget (the answer's own cost), the answer, an error when the run failed."""
        final = self.budget()
        final["llm_calls"]["used"] = answer.cost.llm_calls
        final["tokens"]["used"] = answer.cost.total_tokens
        final["seconds"]["used"] = round(answer.cost.seconds, 3)
        out: list[Event] = [("budget", final), ("answer", answer_json(answer))]
        if answer.status == "error":
            out.append(("error", display_data({"code": "run_failed", "message": answer.error or answer.text})))
        return out


def done_status(answer: Answer) -> str:
    if answer.stopped_by == "cancelled":
        return "cancelled"
    if answer.status == "error":
        return "error"
    return "done"

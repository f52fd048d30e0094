"""Run traces: the sink roles write to, JSONL export and a readable rendering (``kgteam trace ID``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from kgteam.agents.sessions import SessionStore
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer
from kgteam.roles.base import TraceSink

log = structlog.get_logger("kgteam.trace")

TraceTap = Callable[[str, dict[str, Any]], None]  # (event, data): one run's events as they happen


class RunTrace:
    """The ``TraceSink`` a run's roles get: persists each event with its session and turn, mirrors it
    to an optional extra sink (tests, UIs) and to ``tap``, this run's own listener (a server
    streaming tool calls to the client that asked)."""

    def __init__(self, session_id: str, turn: int, store: SessionStore | None = None,
                 mirror: TraceSink | None = None, tap: TraceTap | None = None):
        self.session_id = session_id
        self.turn = turn
        self.store = store
        self.mirror = mirror
        self.tap = tap
        self.events: list[dict[str, Any]] = []

    def record(self, event: str, **data: Any) -> None:
        self.events.append({"event": event, **data})
        log.debug(event, session_id=self.session_id, turn=self.turn, **data)
        if self.store is not None:
            self.store.append_event(self.session_id, self.turn, event, data)
        if self.mirror is not None:
            self.mirror.record(event, **data)
        if self.tap is not None:
            try:
                self.tap(event, data)
            except Exception as exc:  # a broken listener must not break the run
                log.warning("trace_tap_failed", error=str(exc))


def trace_records(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    """Messages and events of a session merged in time order (messages first on ties)."""
    records: list[tuple[str, int, dict[str, Any]]] = []
    for envelope in store.messages(session_id):
        records.append((envelope.created_at.isoformat(), 0,
                        {"type": "message", **envelope.model_dump(mode="json")}))
    for event in store.events(session_id):
        records.append((event.get("created_at", ""), 1, {"type": "event", **event}))
    records.sort(key=lambda r: (_ts(r[0]), r[1]))
    return [r[2] for r in records]


def _ts(value: str) -> float:
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return 0.0


def jsonl_lines(store: SessionStore, session_id: str) -> Iterator[str]:
    """The session's export, one JSON line (with its newline) each: turns first, then messages and
    events in time order (what ``kgteam trace --jsonl`` writes and ``GET .../trace`` returns)."""
    for turn in store.turns(session_id):
        yield json.dumps({"type": "turn", "session_id": session_id, "turn": turn.turn,
                          "question": turn.question, "complete": turn.complete, "status": turn.status,
                          "started_at": turn.started_at, "finished_at": turn.finished_at}) + "\n"
    for record in trace_records(store, session_id):
        yield json.dumps(record, default=str) + "\n"


def export_jsonl(store: SessionStore, session_id: str, path: str | Path) -> int:
    """Write the whole session (turns, messages, tool and LLM calls) as JSON lines; returns the count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for line in jsonl_lines(store, session_id):
            out.write(line)
            count += 1
    return count


def _payload_summary(envelope: Envelope) -> str:
    """The payload's own one-line summary (the chat shows the same), plus an answer's cost."""
    p = envelope.payload
    line = p.summary()
    if isinstance(p, Answer):
        c = p.cost
        line += f"  cost: {c.llm_calls} calls, {c.total_tokens} tokens, {c.seconds:.3f}s"
    return line


def render_text(store: SessionStore, session_id: str) -> str:
    """Human-readable trace: per turn, each message and each tool / LLM call, in order."""
    lines = [f"session {session_id}"]
    turns = {t.turn: t for t in store.turns(session_id)}
    current_turn: int | None = None
    for record in trace_records(store, session_id):
        turn = record.get("turn", 0)
        if turn != current_turn:
            current_turn = turn
            info = turns.get(turn)
            state = "complete" if info and info.complete else f"INCOMPLETE ({info.status if info else 'unknown'})"
            lines.append("")
            lines.append(f"== turn {turn}: {info.question if info else '?'}  [{state}]")
        if record["type"] == "message":
            env = Envelope.model_validate({k: v for k, v in record.items() if k != "type"})
            usage = env.usage
            cost = f"  ({usage.llm_calls} llm, {usage.total_tokens} tok)" if usage.llm_calls else ""
            lines.append(f"  [{env.sender:>15}] {env.kind:<18} d{env.depth} b{env.branch} a{env.attempt} "
                         f"{_payload_summary(env)}{cost}")
        else:
            event = record["event"]
            role = record.get("role") or "-"
            if event == "llm_call":
                detail = (f"{record.get('model')} {record.get('prompt_tokens')}+{record.get('completion_tokens')} tok "
                          f"{float(record.get('latency_s') or 0) * 1000:.1f} ms")
            elif event == "tool_call":
                detail = _tool_call_text(record)
            else:
                skip = {"type", "event", "turn", "seq", "created_at", "role"}
                detail = json.dumps({k: v for k, v in record.items() if k not in skip}, default=str)
                if len(detail) > 200:
                    detail = detail[:197] + "..."
            lines.append(f"      · {event:<10} {role:<15} {detail}")
    return "\n".join(lines)


def _tool_call_text(record: dict[str, Any]) -> str:
    """``search_entities text='Vienna' k=5 -> list of 3  2.1 ms``: the call's own arguments (kept
    under ``kwargs`` by the tool hook; ``args`` by older or hand-written records) and its result."""
    arguments = record.get("kwargs") if record.get("kwargs") is not None else record.get("args")
    if isinstance(arguments, dict):
        shown = " ".join(f"{k}={_short(v)}" for k, v in arguments.items())
    elif isinstance(arguments, list | tuple):
        shown = " ".join(_short(v) for v in arguments)
    else:
        shown = "" if arguments is None else _short(arguments)
    result = record.get("result")
    if isinstance(result, dict) and "len" in result:
        got = f"{result.get('type', 'list')} of {result['len']}"
    elif isinstance(result, dict) and "rows" in result:
        got = f"{result['rows']} rows"
    else:
        got = _short(result)
    error = record.get("error")
    return (f"{record.get('tool')} {shown} -> {'failed' if error else got} "
            f"{float(record.get('seconds') or 0) * 1000:.1f} ms" + (f" ERROR {error}" if error else ""))


def _short(value: Any, width: int = 120) -> str:
    """One line, at most ``width`` characters (SPARQL text is kept whole in the JSONL export)."""
    text = repr(" ".join(value.split())) if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= width else text[: width - 3] + "..."

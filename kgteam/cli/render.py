"""Terminal rendering (rich) shared by ask, chat, demo and trace: one line per message, answer panels."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from kgteam.llm.fencing import one_line
from kgteam.protocols.display import TEXT_CHARS, display_answer, display_data, display_text
from kgteam.protocols.envelope import Envelope
from kgteam.protocols.payloads import Answer, shorten

_ROLE_STYLES = ("cyan", "magenta", "green", "yellow", "blue", "bright_cyan", "bright_magenta", "bright_green")
STATUS_STYLES = {"answered": "bold green", "unknown": "bold yellow", "refused": "bold yellow", "error": "bold red"}


class RoleColors:
    """Stable colour per sender within one session."""

    def __init__(self) -> None:
        self._styles: dict[str, str] = {"user": "bold white", "supervisor": "bold red"}

    def __call__(self, sender: str) -> str:
        if sender not in self._styles:
            self._styles[sender] = _ROLE_STYLES[(len(self._styles) - 2) % len(_ROLE_STYLES)]
        return self._styles[sender]


def event_line(env: Envelope, colors: RoleColors | None = None) -> Text:
    """``sender → kind: summary`` (attempt and usage when they matter)."""
    colors = colors or RoleColors()
    line = Text("  ")
    if env.branch:  # a branch of a tree search: indented by depth, named, so the tree shows as it grows
        line.append("  " * env.depth + f"[b{env.branch}] ", style="dim")
    line.append(env.sender, style=colors(env.sender))
    line.append(" → ", style="dim")
    line.append(env.kind, style="bold")
    if env.attempt:
        line.append(f" (retry {env.attempt})", style="yellow")
    line.append(": ")
    line.append(display_text(env.payload.summary(), TEXT_CHARS))  # summaries quote KG labels
    if env.usage.llm_calls:
        line.append(f"  [{env.usage.llm_calls} LLM, {env.usage.total_tokens} tok, {env.usage.seconds:.2f}s]",
                    style="dim")
    return line


def cost_text(answer: Answer) -> str:
    c = answer.cost
    return (f"{c.llm_calls} LLM calls, {c.total_tokens} tokens "
            f"({c.prompt_tokens} prompt + {c.completion_tokens} completion), {c.seconds:.2f}s")


def answer_renderable(answer: Answer, *, max_triples: int = 12, show_queries: bool = True) -> Panel:
    answer = display_answer(answer)  # labels and literals come from the KG: shown as data, never as lines
    parts: list[Any] = []
    head = Text()
    head.append(answer.text or "(no answer text)", style="bold")
    parts.append(head)
    status = Text()
    status.append(answer.status, style=STATUS_STYLES.get(answer.status, "bold"))
    status.append(f"  stopped by: {answer.stopped_by}")
    backed = "the KG" if answer.route in (None, "kg") else "the retrieved facts"
    status.append("  grounded" if answer.grounded else f"  UNGROUNDED (not backed by {backed})",
                  style="green" if answer.grounded else "yellow")
    signals = answer.signals
    if answer.grounded and signals is not None and (signals.unnamed or signals.inferred):
        # the triples are the KG's; which relation the question meant was the reader's inference
        status.append("  (relation inferred, not named by the question)", style="yellow")
    if answer.route is not None:
        status.append(f"  route: {answer.route}")
    parts.append(status)
    if answer.confidence is not None:
        said = f"confidence: {answer.confidence:.2f}"
        if answer.raw_confidence is not None:  # a probability from a map (the team's, or the KG's own), not the score
            said += f" (calibrated by {answer.calibration or 'a map'}; score {answer.raw_confidence:.2f})"
        parts.append(Text(said, style="dim"))
    if answer.error and answer.error not in (answer.text or ""):  # a failed run's text already says it
        parts.append(Text(f"error: {answer.error}", style="red"))
    ev = answer.evidence
    if answer.reading:  # a shape's query graph, or a described topic and what it was read as
        parts.append(Text("read as: " + display_text(answer.reading, limit=400), style="dim"))
    if ev.matches:  # which question words named which relation
        parts.append(Text("reading: " + "; ".join(m.explain() for m in ev.matches), style="dim"))
        taught = next((m.learned_from for m in ev.matches if m.learned_from is not None), None)
        if taught is not None:  # the KG's trained reader chose it (kgteam tune --examples)
            parts.append(Text("read by the KG's trained reader" + (f" (taught by examples: {', '.join(taught)})"
                                                                   if taught else ""), style="dim"))
    if answer.guess:
        parts.append(Text("best guess (not stated as an answer): " + ", ".join(one_line(v.label) for v in answer.guess[:5]),
                          style="yellow"))
    if ev.reasoning:  # step-by-step, citing the evidence triples below by their id (t0, t1 ...)
        parts.append(Text("reasoning:", style="dim"))
        for line in ev.reasoning[:12]:
            parts.append(Text("  " + line, style="dim"))
    if ev.triples:
        table = Table(title="evidence triples", show_header=True, header_style="dim", box=None, padding=(0, 1))
        if ev.reasoning:
            table.add_column("id")
        table.add_column("subject")
        table.add_column("predicate")
        table.add_column("object")
        shown = ev.triples[:max_triples]
        several = any(t.kg for t in shown)  # a several-KG team: which KG states each triple
        if several:
            table.add_column("kg")
        for n, t in enumerate(shown):
            # Text, not str: labels come from the KG and may contain rich markup like "[/]" or "[draft]";
            # one line each, so a label cannot draw lines of its own (a forged fence, a fake status)
            row = [Text(one_line(t.subject_label or t.subject)), Text(one_line(t.predicate_label or t.predicate)),
                   Text(one_line(t.object_label or t.object))] + ([Text(one_line(t.kg or "?"))] if several else [])
            table.add_row(*([f"t{n}"] if ev.reasoning else []), *row)
        if len(ev.triples) > max_triples:
            table.add_row(*([""] if ev.reasoning else []), f"… {len(ev.triples) - max_triples} more", "", "",
                          *([""] if several else []))
        parts.append(table)
    if show_queries and ev.queries:
        parts.append(Text("queries:", style="dim"))
        for q in ev.queries:
            suffix = f"  -- {q.row_count} rows" + (f", error: {q.error}" if q.error else "")
            parts.append(Text("  " + " ".join(q.sparql.split()) + suffix, style="dim cyan"))
    for doc in ev.documents[:5]:
        where = f" <{one_line(doc.url)}>" if doc.url else ""
        parts.append(Text(f"doc {one_line(doc.title or doc.id)}{where}: {shorten(doc.text, 80)}", style="dim"))
    if answer.proposals:  # read from documents; shown for review, never written to the KG by the team
        parts.append(Text("proposed additions to the KG (review, then `kgteam kg add`):", style="magenta"))
        for prop in answer.proposals[:8]:
            parts.append(Text("  " + one_line(prop.line()), style="magenta"))
    for ax in ev.axioms[:5]:
        parts.append(Text(f"axiom: {shorten(ax.text, 100)}", style="dim"))
    if answer.model == "none":
        parts.append(Text("model: none — every decision was taken by the deterministic scorers", style="yellow"))
    elif answer.fallbacks:
        parts.append(Text("fallbacks: " + ", ".join(answer.fallbacks), style="yellow"))
    parts.append(Text("cost: " + cost_text(answer), style="dim"))
    return Panel(Group(*parts), title="answer", border_style=STATUS_STYLES.get(answer.status, "white").split()[-1])


def print_answer(console: Console, answer: Answer, **kwargs: Any) -> None:
    console.print(answer_renderable(answer, **kwargs))


def answer_json(answer: Answer, *, session_id: str | None = None, question: str | None = None) -> dict[str, Any]:
    """``--json``'s answer: its strings sanitised as the terminal's are (a client may print them)."""
    data = display_data(answer.model_dump(mode="json"))
    data["cost"]["total_tokens"] = answer.cost.total_tokens
    if session_id is not None:
        data["session_id"] = session_id
    if question is not None:
        data["question"] = question
    return data


def budget_table(limits: Any, used: Any | None = None) -> Table:
    """Budget limits with what the last run used (``used`` is a BudgetUsage or similar, optional)."""
    pairs = {"max_depth": "depth", "max_breadth": "breadth", "max_retries": "retries", "max_turns": "turns",
             "max_llm_calls": "llm_calls", "max_tokens": "tokens", "timeout_s": "seconds"}
    table = Table(title="budgets", box=None, header_style="dim")
    table.add_column("budget")
    table.add_column("limit", justify="right")
    table.add_column("used (last question)", justify="right")
    for limit_name, used_name in pairs.items():
        value = getattr(used, used_name, None) if used is not None else None
        shown = "-" if value is None else (f"{value:.2f}" if isinstance(value, float) else str(value))
        table.add_row(limit_name, f"{getattr(limits, limit_name)}", shown)
    return table

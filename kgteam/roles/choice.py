"""Every LLM decision goes through here: validated, bounded, and never the only way to decide.

The model sees numbered options (``o1``, ``o2`` ...) and answers with option ids, so it can never
inject an IRI: the output schema enumerates the ids and a validator rejects anything else.
Invalid output is repaired at most ``max_repairs`` times; after that the deterministic scorer
decides. A valid choice is *combined* with the deterministic score: scores are min-max
normalised over the offered options and the options the model picked get ``llm_weight`` on top.
A weak model can break near-ties but cannot override a clear lexical/structural signal, while a
strong model given a high weight decides outright. Every decision is recorded in the trace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, create_model

from kgteam.llm.no_model import model_available
from kgteam.llm.structured import structured_call
from kgteam.prompts import PromptTemplate, fence
from kgteam.roles.base import RoleContext

T = TypeVar("T", bound=BaseModel)
NO_MODEL_REASON = "no model (--model none): the deterministic scorer decides"


@dataclass
class Option:
    """One thing the model may pick: ``key`` is what callers get back (an IRI, an index ...)."""

    key: str
    label: str
    score: float = 0.0  # deterministic score, higher is better
    detail: str = ""  # extra context shown to the model (e.g. the SPARQL, sample rows)


@dataclass
class ChoiceResult:
    chosen: list[Option]  # best first
    source: Literal["llm", "fallback", "trivial"]
    reason: str = ""
    llm_picked: list[str] = field(default_factory=list)  # option keys the model picked (valid)
    attempts: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class StructuredResult:
    value: Any  # the validated model output, or the fallback value
    source: Literal["llm", "fallback"]
    reason: str = ""
    attempts: int = 0
    errors: list[str] = field(default_factory=list)


def options_block(options: Sequence[Option]) -> str:
    lines = []
    for i, opt in enumerate(options, start=1):
        line = f"o{i}: {opt.label}"
        if opt.detail:
            line += f" | {opt.detail}"
        lines.append(line)
    return fence("\n".join(lines), tag="options")


def _choice_model(ids: list[str], k: int) -> type[BaseModel]:
    id_type = Literal[tuple(ids)]  # type: ignore[valid-type]
    return create_model(
        "Choice",
        chosen=(list[id_type], Field(min_length=1, max_length=max(1, k))),  # type: ignore[valid-type]
        reason=(str, Field("", max_length=200)),
    )


def _record(ctx: RoleContext, role: str, decision: str, source: str, reason: str, **extra: Any) -> None:
    ctx.trace.record("decision", role=role, decision=decision, source=source, reason=reason, **extra)


async def choose(
    ctx: RoleContext,
    *,
    role: str,
    decision: str,
    prompt: PromptTemplate,
    options: Sequence[Option],
    k: int,
    values: dict[str, Any],
    llm_weight: float = 0.3,
    max_repairs: int = 1,
    max_offered: int = 8,
    ask_when_trivial: bool = False,
    max_tokens: int | None = 96,
) -> ChoiceResult:
    """Keep the ``k`` best ``options``; the model votes, the deterministic score carries.

    ``prompt`` is a template with ``{options}`` and ``{k}``; ``values`` fills the rest.
    When there are no more options than ``k`` nothing needs deciding and no call is made.
    """
    ranked = sorted(options, key=lambda o: o.score, reverse=True)
    if not ranked:
        _record(ctx, role, decision, "trivial", "no options")
        return ChoiceResult([], "trivial", "no options")
    if len(ranked) <= k and not ask_when_trivial:
        _record(ctx, role, decision, "trivial", f"{len(ranked)} option(s) for {k} slot(s)",
                chosen=[o.key for o in ranked])
        return ChoiceResult(ranked, "trivial", "nothing to decide")
    if not model_available(ctx.model):
        chosen = ranked[:k]
        _record(ctx, role, decision, "fallback", NO_MODEL_REASON, chosen=[o.key for o in chosen])
        return ChoiceResult(chosen, "fallback", NO_MODEL_REASON)
    offered = ranked[:max_offered]
    ids = [f"o{i}" for i in range(1, len(offered) + 1)]
    messages = prompt.render(options=options_block(offered), k=k, **values)
    outcome = await structured_call(ctx.model, messages, _choice_model(ids, k), role=role, max_repairs=max_repairs,
                                    max_tokens=max_tokens)
    top = max(o.score for o in offered)
    low = min(o.score for o in offered)
    span = top - low

    def norm(o: Option) -> float:  # min-max, so a constant offset in the scores changes nothing
        return 1.0 if span <= 0 else (o.score - low) / span

    if outcome.ok:
        picked_ids = list(dict.fromkeys(outcome.value.chosen))  # type: ignore[union-attr]
        picked = {offered[ids.index(i)].key for i in picked_ids}
        combined = sorted(
            offered,
            key=lambda o: norm(o) + (llm_weight if o.key in picked else 0.0),
            reverse=True,
        )
        chosen = combined[:k]
        reason = str(getattr(outcome.value, "reason", "") or "")
        agreed = {o.key for o in chosen} == {o.key for o in ranked[:k]}
        _record(ctx, role, decision, "llm", reason or "model choice combined with deterministic score",
                chosen=[o.key for o in chosen], llm_picked=sorted(picked), agreed_with_fallback=agreed,
                attempts=outcome.attempts, errors=outcome.errors)
        return ChoiceResult(chosen, "llm", reason, sorted(picked), outcome.attempts, outcome.errors)
    chosen = ranked[:k]
    reason = f"model output invalid after {outcome.attempts} attempt(s): {outcome.errors[-1] if outcome.errors else ''}"
    _record(ctx, role, decision, "fallback", reason, chosen=[o.key for o in chosen],
            attempts=outcome.attempts, errors=outcome.errors)
    return ChoiceResult(chosen, "fallback", reason, [], outcome.attempts, outcome.errors)


async def produce(
    ctx: RoleContext,
    *,
    role: str,
    decision: str,
    prompt: PromptTemplate,
    output: type[T],
    values: dict[str, Any],
    validate: Callable[[T], str | None],
    fallback: Callable[[], Any],
    max_repairs: int = 1,
    max_tokens: int | None = 384,
) -> StructuredResult:
    """Free-form structured output (a parse, a rewrite, an answer) with a semantic check.

    ``validate`` returns an error message or None. A schema-valid but semantically wrong value
    (an IRI in a template, a mention not in the question) counts as invalid: it is repaired
    within the same bound, then ``fallback()`` decides.
    """
    if not model_available(ctx.model):
        value = fallback()
        _record(ctx, role, decision, "fallback", NO_MODEL_REASON)
        return StructuredResult(value, "fallback", NO_MODEL_REASON)
    Checked = _checked_model(output, validate)
    messages = prompt.render(**values)
    outcome = await structured_call(ctx.model, messages, Checked, role=role, max_repairs=max_repairs,
                                    max_tokens=max_tokens)
    if outcome.ok:
        value = output.model_validate(outcome.value.model_dump())  # type: ignore[union-attr]
        _record(ctx, role, decision, "llm", "model output validated", attempts=outcome.attempts,
                errors=outcome.errors)
        return StructuredResult(value, "llm", "", outcome.attempts, outcome.errors)
    reason = f"model output invalid after {outcome.attempts} attempt(s): {outcome.errors[-1] if outcome.errors else ''}"
    value = fallback()
    _record(ctx, role, decision, "fallback", reason, attempts=outcome.attempts, errors=outcome.errors)
    return StructuredResult(value, "fallback", reason, outcome.attempts, outcome.errors)


def _checked_model(output: type[T], validate: Callable[[T], str | None]) -> type[T]:
    """A subclass of ``output`` whose validation also runs ``validate`` (so repair sees the error)."""
    from pydantic import model_validator

    def _check(self: Any) -> Any:
        problem = validate(self)
        if problem:
            raise ValueError(problem)
        return self

    return create_model(  # type: ignore[call-overload,no-any-return]
        output.__name__,
        __base__=output,
        __validators__={"semantic_check": model_validator(mode="after")(_check)},
    )


def fallback_keys(trace_events: list[dict[str, Any]]) -> list[str]:
    """``role.decision`` names decided by fallback, for ``Answer.fallbacks``."""
    out = []
    for ev in trace_events:
        if ev.get("event") == "decision" and ev.get("source") == "fallback":
            out.append(f"{ev.get('role')}.{ev.get('decision')}")
    return list(dict.fromkeys(out))

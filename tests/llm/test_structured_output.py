"""structured_call: extraction, validation, bounded repair, propagation of real failures."""

from __future__ import annotations

import asyncio
import json

import pytest
from llm_fakes import FakeOpenAIServer, Step
from pydantic import BaseModel, Field

from kgteam.llm.base import ModelError
from kgteam.llm.openai_model import OpenAIChatModel
from kgteam.llm.scripted import ScriptedModel
from kgteam.llm.structured import extract_json, inline_refs, schema_for, structured_call
from kgteam.llm.usage import estimate_prompt_tokens, estimate_tokens
from kgteam.protocols.budgets import BudgetExhausted


class Candidate(BaseModel):
    iri: str
    score: float = Field(ge=0, le=1)


class Selection(BaseModel):
    keep: list[Candidate]
    reason: str = ""


class Tree(BaseModel):
    name: str
    children: list[Tree] = []


GOOD = '{"keep": [{"iri": "http://e/1", "score": 0.9}], "reason": "label match"}'
MSGS = [{"role": "system", "content": "Select."}, {"role": "user", "content": "Pick candidates for Heat."}]


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '  {"a": 1}\n',
        '```json\n{"a": 1}\n```',
        '```\n{"a": 1}\n```',
        'Sure! Here is the JSON: {"a": 1} Hope that helps.',
        'Answer: {"a": {"b": "}"}, "c": 2} trailing',
    ],
)
def test_extract_json_tolerates_fences_and_prose(text: str):
    value = extract_json(text)
    assert value["a"] == 1 or value["a"] == {"b": "}"}


@pytest.mark.parametrize("text", ["", "   ", "no json here", "{broken: json"])
def test_extract_json_rejects_non_json(text: str):
    with pytest.raises(ValueError):
        extract_json(text)


def test_schema_refs_are_inlined():
    schema = schema_for(Selection)
    assert "$defs" not in schema and "$ref" not in json.dumps(schema)
    item = schema["properties"]["keep"]["items"]
    assert item["properties"]["score"]["maximum"] == 1
    assert item["required"] == ["iri", "score"]


def test_recursive_schema_keeps_defs():
    schema = schema_for(Tree)
    assert "$ref" in json.dumps(schema["properties"]["children"])
    assert "Tree" in schema["$defs"]


def test_inline_refs_keeps_sibling_keywords():
    schema = {
        "$defs": {"X": {"type": "string"}},
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/X", "description": "an x"}},
    }
    assert inline_refs(schema)["properties"]["x"] == {"type": "string", "description": "an x"}


async def test_valid_first_reply():
    model = ScriptedModel().add("dm", None, "```json\n" + GOOD + "\n```")
    outcome = await structured_call(model, MSGS, Selection, role="dm")
    assert outcome.ok and not outcome.repaired
    assert outcome.value == Selection(keep=[Candidate(iri="http://e/1", score=0.9)], reason="label match")
    assert outcome.attempts == 1 and outcome.errors == []
    assert model.calls[0].json_schema == schema_for(Selection)  # the schema reaches the model


async def test_invalid_json_then_repair_succeeds():
    model = ScriptedModel().add("dm", None, ["I think the answer is Heat.", GOOD])
    outcome = await structured_call(model, MSGS, Selection, role="dm")
    assert outcome.ok and outcome.repaired
    assert outcome.attempts == 2
    assert outcome.raw == ["I think the answer is Heat.", GOOD]
    assert len(outcome.errors) == 1 and "invalid JSON" in outcome.errors[0]
    repair_call = model.calls[1]
    assert repair_call.messages[: len(MSGS)] == MSGS
    assert repair_call.messages[-2] == {"role": "assistant", "content": "I think the answer is Heat."}
    assert repair_call.messages[-1]["role"] == "user"
    assert "JSON only" in repair_call.messages[-1]["content"]
    # tokens add up over both calls (chars/4 from the scripted model)
    assert outcome.prompt_tokens == sum(estimate_prompt_tokens(c.messages) for c in model.calls)
    assert outcome.completion_tokens == sum(estimate_tokens(c.reply) for c in model.calls)
    assert outcome.usage_estimated


async def test_schema_error_is_shown_to_the_model():
    bad = '{"keep": [{"iri": "http://e/1", "score": 7}]}'
    model = ScriptedModel().add("dm", None, [bad, GOOD])
    outcome = await structured_call(model, MSGS, Selection, role="dm")
    assert outcome.ok
    assert "keep.0.score" in outcome.errors[0]
    assert "keep.0.score" in model.calls[1].messages[-1]["content"]


async def test_invalid_twice_gives_none_with_everything_recorded():
    model = ScriptedModel().add("dm", None, ["nope", '{"keep": "wrong"}'])
    outcome = await structured_call(model, MSGS, Selection, role="dm", max_repairs=1)
    assert outcome.value is None and not outcome.ok
    assert outcome.attempts == 2 and len(model.calls) == 2
    assert outcome.raw == ["nope", '{"keep": "wrong"}']
    assert "invalid JSON" in outcome.errors[0] and "keep" in outcome.errors[1]


async def test_repairs_are_bounded():
    model = ScriptedModel().add("dm", None, "never json")
    outcome = await structured_call(model, MSGS, Selection, role="dm", max_repairs=2)
    assert outcome.attempts == 3 and len(outcome.errors) == 3 and outcome.value is None
    # each repair resends only the latest bad reply, so prompts do not grow
    assert len(model.calls[1].messages) == len(model.calls[2].messages) == len(MSGS) + 2


async def test_zero_repairs():
    model = ScriptedModel().add("dm", None, "never json")
    outcome = await structured_call(model, MSGS, Selection, role="dm", max_repairs=0)
    assert outcome.attempts == 1 and outcome.value is None


class _Raising:
    name = "raising"

    def __init__(self, exc: BaseException):
        self.exc = exc

    async def chat(self, messages, *, role, json_schema=None, temperature=0.0, max_tokens=None):
        raise self.exc


@pytest.mark.parametrize(
    "exc",
    [
        ModelError("boom", permanent=True, status=401),
        BudgetExhausted("max_llm_calls", 3, 3),
        asyncio.CancelledError(),
    ],
)
async def test_transport_budget_and_cancellation_propagate(exc: BaseException):
    with pytest.raises(type(exc)):
        await structured_call(_Raising(exc), MSGS, Selection, role="dm")


# ---------------------------------------------------------------- over real HTTP
async def test_repair_over_http_in_llama_cpp_mode(fake_openai: FakeOpenAIServer):
    fake_openai.script(Step(text='{"keep": [}'), Step(text=GOOD))
    model = OpenAIChatModel(
        fake_openai.base_url, "fake-model", structured_mode="json_object_schema", max_retries=0
    )
    outcome = await structured_call(model, MSGS, Selection, role="dm")
    assert outcome.ok and outcome.attempts == 2
    first, second = fake_openai.requests
    assert first["response_format"] == {"type": "json_object", "schema": schema_for(Selection)}
    assert second["messages"][-2] == {"role": "assistant", "content": '{"keep": [}'}
    assert "JSON only" in second["messages"][-1]["content"]
    assert (outcome.prompt_tokens, outcome.completion_tokens) == (22, 14)  # server usage, summed


async def test_permanent_error_over_http_raises(fake_openai: FakeOpenAIServer):
    fake_openai.script(
        Step(status=400, body={"error": {"message": "response_format json_schema unsupported"}})
    )
    model = OpenAIChatModel(fake_openai.base_url, "fake-model", max_retries=2)
    with pytest.raises(ModelError, match="json_schema unsupported") as info:
        await structured_call(model, MSGS, Selection, role="dm")
    assert info.value.permanent and len(fake_openai.requests) == 1

"""ScriptedModel: rules by role and prompt, sequences, callables, loud failures, script files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kgteam.llm.scripted import ScriptedModel, UnexpectedPrompt


def user(text: str, system: str = "sys") -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]


async def test_first_matching_rule_by_role_and_substring():
    model = ScriptedModel(
        [
            ("generalist", "directed", "G-directed"),
            ("generalist", None, "G-any"),
            ("*", "directed", "any-role-directed"),
        ]
    )
    assert (await model.chat(user("who directed Heat?"), role="generalist")).text == "G-directed"
    assert (await model.chat(user("who wrote Heat?"), role="generalist")).text == "G-any"
    assert (await model.chat(user("who directed Heat?"), role="advisor")).text == "any-role-directed"


async def test_pattern_matches_last_user_message_unless_on_all():
    model = ScriptedModel().add("r", "SECRET", "saw it").add("r", "SECRET", "saw it anywhere", on="all")
    msgs = [
        {"role": "system", "content": "SECRET in system"},
        {"role": "user", "content": "plain question"},
    ]
    assert (await model.chat(msgs, role="r")).text == "saw it anywhere"
    assert (await model.chat(user("a SECRET here"), role="r")).text == "saw it"


async def test_regex_rules():
    model = ScriptedModel().add("r", r"^pick (\d+) of", "regex hit", regex=True)
    model.add("r", re.compile(r"choose\s+one"), "compiled hit")
    assert (await model.chat(user("pick 3 of these"), role="r")).text == "regex hit"
    assert (await model.chat(user("please choose   one"), role="r")).text == "compiled hit"
    with pytest.raises(UnexpectedPrompt):
        await model.chat(user("I pick 3 of these"), role="r")


async def test_sequences_are_consumed_in_order_then_fail_loudly():
    model = ScriptedModel().add("r", "q", ["bad", {"ok": True}])
    assert (await model.chat(user("q"), role="r")).text == "bad"
    assert json.loads((await model.chat(user("q"), role="r")).text) == {"ok": True}
    with pytest.raises(UnexpectedPrompt, match="exhausted"):
        await model.chat(user("q"), role="r")


async def test_exhausted_sequence_falls_through_to_later_rule():
    model = ScriptedModel().add("r", "q", ["first"]).add("r", None, "fallback rule")
    assert (await model.chat(user("q"), role="r")).text == "first"
    assert (await model.chat(user("q"), role="r")).text == "fallback rule"


async def test_callable_reply_receives_messages():
    model = ScriptedModel().add("r", None, lambda msgs: msgs[-1]["content"].upper())
    assert (await model.chat(user("echo me"), role="r")).text == "ECHO ME"


async def test_unexpected_prompt_names_role_and_excerpt_and_is_recorded():
    model = ScriptedModel().add("generalist", "known", "x")
    with pytest.raises(UnexpectedPrompt) as info:
        await model.chat(user("an unplanned question " + "z" * 500), role="advisor")
    err = info.value
    assert err.role == "advisor"
    assert "'advisor'" in str(err) and "an unplanned question" in str(err)
    assert len(str(err)) < 450  # excerpt, not the whole prompt
    assert model.unexpected == [err]
    assert model.calls == []


async def test_calls_recorded_and_usage_is_chars_over_four():
    model = ScriptedModel().add("r", None, "y" * 20)
    schema = {"type": "object"}
    reply = await model.chat(user("x" * 40, system="s" * 8), role="r", json_schema=schema)
    assert (reply.prompt_tokens, reply.completion_tokens, reply.latency_s) == (12, 5, 0.0)
    assert reply.usage_estimated is True
    [call] = model.calls
    assert call.role == "r" and call.reply == "y" * 20 and call.json_schema == schema
    assert call.messages[-1]["content"] == "x" * 40
    assert model.calls_for("r") == [call] and model.calls_for("other") == []


async def test_from_yaml_file(tmp_path: Path):
    script = tmp_path / "script.yaml"
    script.write_text(
        """
name: demo-script
rules:
  - role: generalist
    match: "directed"
    reply: {"template": "SELECT ?x WHERE { ?x ?p ?o }"}
  - role: decision_maker
    regex: "candidates?:"
    replies: ["not json", '{"keep": [1]}']
  - role: advisor
    reply: [1, 2]
  - reply: anything else
""",
        encoding="utf-8",
    )
    model = ScriptedModel.from_file(script)
    assert model.name == "demo-script"
    assert json.loads((await model.chat(user("who directed it"), role="generalist")).text)["template"]
    assert (await model.chat(user("candidates: a, b"), role="decision_maker")).text == "not json"
    assert (await model.chat(user("candidate: a"), role="decision_maker")).text == '{"keep": [1]}'
    assert (await model.chat(user("?"), role="advisor")).text == "[1, 2]"  # a JSON array, not a sequence
    assert (await model.chat(user("?"), role="someone")).text == "anything else"


async def test_from_json_file(tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"role": "r", "match": "hi", "reply": "hello"}]), encoding="utf-8")
    model = ScriptedModel.from_file(script)
    assert (await model.chat(user("hi"), role="r")).text == "hello"


@pytest.mark.parametrize(
    "rules, message",
    [
        ([{"role": "r"}], "exactly one of 'reply' or 'replies'"),
        ([{"role": "r", "reply": "a", "replies": ["b"]}], "exactly one of"),
        ([{"role": "r", "match": "a", "regex": "b", "reply": "x"}], "not both"),
        ([{"role": "r", "regex": "(", "reply": "x"}], "bad regex"),
        ([{"role": "r", "reply": "x", "colour": "red"}], "unknown field"),
        ([{"role": "r", "replies": "x"}], "must be a list"),
        ("nope", "expected a mapping"),
        ([{"role": "r", "match": 5, "reply": "x"}], r"rules\[0\]: 'match' must be a string"),
        ([{"role": "r", "reply": "y"}, {"regex": ["a"], "reply": "x"}], r"rules\[1\]: 'regex' must be a string"),
    ],
)
def test_bad_scripts_are_rejected_with_location(rules, message):
    with pytest.raises(ValueError, match=message) as info:
        ScriptedModel.from_dict(rules, source="t.yaml")
    assert "t.yaml" in str(info.value)


def test_invalid_yaml_file_is_a_value_error_naming_the_file(tmp_path: Path):
    path = tmp_path / "broken.yaml"
    path.write_text("rules: [ {reply: x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="invalid YAML") as info:
        ScriptedModel.from_file(path)
    assert str(path) in str(info.value)

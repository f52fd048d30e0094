"""The wire contract: envelopes round-trip through JSON with their payload type intact."""

import pytest
from pydantic import ValidationError

from kgteam.protocols import Envelope, Evidence, EvidenceTriple, Usage
from kgteam.protocols.payloads import (
    PAYLOAD_TYPES,
    Answer,
    AnswerValue,
    Payload,
    Question,
    RetryHint,
    RetrySignal,
    payload_from_dict,
    register_payload,
)


def test_envelope_round_trips_every_builtin_payload_kind():
    samples = {
        "question": Question(text="who directed Alien?"),
        "retry_signal": RetrySignal(phase="query", reason="empty_result", hint=RetryHint(note="try the inverse", hops=2), attempt=2),
        "answer": Answer(confidence=1.0,
            text="Ridley Scott",
            values=[AnswerValue(label="Ridley Scott", iri="http://example.org/e/Ridley%20Scott")],
            grounded=True,
            evidence=Evidence(triples=[EvidenceTriple(subject="s", predicate="p", object="o")]),
            cost=Usage(llm_calls=3, prompt_tokens=10, completion_tokens=5, seconds=0.5),
        ),
    }
    for kind, payload in samples.items():
        env = Envelope(session_id="s1", sender="tester", payload=payload, parents=["a"], depth=2)
        back = Envelope.model_validate_json(env.model_dump_json())
        assert back.kind == kind
        assert type(back.payload) is PAYLOAD_TYPES[kind]
        assert back.payload == payload
        assert back.parents == ["a"] and back.depth == 2


def test_envelope_rejects_kind_that_disagrees_with_payload():
    with pytest.raises(ValidationError):
        Envelope(session_id="s", sender="x", kind="answer", payload=Question(text="q"))


def test_unknown_payload_kind_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown payload kind 'nope'"):
        payload_from_dict({"kind": "nope"})


def test_plugin_payload_registration_and_conflicts():
    from typing import Literal

    class Hunch(Payload):
        kind: Literal["test_hunch"] = "test_hunch"
        guess: str

    register_payload(Hunch)
    try:
        env = Envelope(session_id="s", sender="p", payload=Hunch(guess="42"))
        assert Envelope.model_validate_json(env.model_dump_json()).payload == Hunch(guess="42")

        class Other(Payload):
            kind: Literal["test_hunch"] = "test_hunch"

        with pytest.raises(ValueError, match="already registered"):
            register_payload(Other)
    finally:
        PAYLOAD_TYPES.pop("test_hunch", None)


def test_usage_adds_up():
    total = Usage(llm_calls=1, prompt_tokens=3, completion_tokens=4, seconds=0.25) + Usage(
        llm_calls=2, prompt_tokens=1, completion_tokens=1, seconds=0.5
    )
    assert (total.llm_calls, total.total_tokens, total.seconds) == (3, 9, 0.75)

"""Typed messages and evidence records. Imported by every layer; imports no other kgteam layer.

The names below are loaded on first use: a ``run_sparql`` worker process needs only the evidence
records, and importing every payload model (~0.3 s of pydantic class building) for each of the
hundreds of workers a test run or a server starts was most of their start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgteam.protocols.envelope import Envelope
    from kgteam.protocols.errors import ContractError, KgteamError
    from kgteam.protocols.evidence import (
        Evidence,
        EvidenceAxiom,
        EvidenceDocument,
        EvidenceQuery,
        EvidenceTriple,
        Usage,
    )
    from kgteam.protocols.payloads import PAYLOAD_TYPES, Payload, payload_from_dict, register_payload

__all__ = [
    "ContractError", "KgteamError", "Envelope", "Evidence", "EvidenceAxiom", "EvidenceDocument", "EvidenceQuery", "EvidenceTriple",
    "Usage", "PAYLOAD_TYPES", "Payload", "payload_from_dict", "register_payload",
]

_HOMES = {
    "Envelope": "envelope",
    "ContractError": "errors", "KgteamError": "errors",
    "Evidence": "evidence", "EvidenceAxiom": "evidence", "EvidenceDocument": "evidence",
    "EvidenceQuery": "evidence", "EvidenceTriple": "evidence", "Usage": "evidence",
}


def __getattr__(name: str) -> Any:
    """``kgteam.protocols.X``: from its module, every payload type included."""
    if name.startswith("__"):
        raise AttributeError(name)
    module = importlib.import_module(f"kgteam.protocols.{_HOMES.get(name, 'payloads')}")
    try:
        value = getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module 'kgteam.protocols' has no attribute {name!r}") from None
    globals()[name] = value
    return value

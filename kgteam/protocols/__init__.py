"""Typed messages and evidence records. Imported by every layer; imports no other kgteam layer."""

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
from kgteam.protocols.payloads import *  # noqa: F403
from kgteam.protocols.payloads import PAYLOAD_TYPES, Payload, payload_from_dict, register_payload

__all__ = [
    "ContractError", "KgteamError", "Envelope", "Evidence", "EvidenceAxiom", "EvidenceDocument", "EvidenceQuery", "EvidenceTriple",
    "Usage", "PAYLOAD_TYPES", "Payload", "payload_from_dict", "register_payload",
]

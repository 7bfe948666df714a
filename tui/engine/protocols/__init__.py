"""Protocols by name."""

from __future__ import annotations

from tui.engine.protocols.adversary import AdversaryProtocol
from tui.engine.protocols.base import Protocol
from tui.engine.protocols.challenge import ChallengeProtocol
from tui.engine.protocols.debate import DebateProtocol
from tui.engine.protocols.refine import RefineProtocol
from tui.engine.spec import Spec

PROTOCOL_CLASSES: dict[str, type[Protocol]] = {
    "debate": DebateProtocol,
    "adversary": AdversaryProtocol,
    "challenge": ChallengeProtocol,
    "refine": RefineProtocol,
}


def protocol_for(spec: Spec) -> Protocol:
    return PROTOCOL_CLASSES[spec.debate.protocol](spec)

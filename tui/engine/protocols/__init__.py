"""Protocols by name: the one registry that spec validation and the engine both read.

A protocol is one module here (a ``Protocol`` subclass: its roles, rounds,
voters, spec rules, critique pairs and run-time bookkeeping) plus its entry below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.engine.protocols.adversary import AdversaryProtocol
from tui.engine.protocols.base import Protocol
from tui.engine.protocols.challenge import ChallengeProtocol
from tui.engine.protocols.debate import DebateProtocol
from tui.engine.protocols.delphi import DelphiProtocol
from tui.engine.protocols.refine import RefineProtocol

if TYPE_CHECKING:
    from tui.engine.spec import Spec

PROTOCOLS: dict[str, type[Protocol]] = {
    p.name: p
    for p in (
        DebateProtocol,
        AdversaryProtocol,
        ChallengeProtocol,
        RefineProtocol,
        DelphiProtocol,
    )
}


def protocol_for(spec: Spec) -> Protocol:
    """A fresh run-time protocol for a validated spec."""
    return PROTOCOLS[spec.debate.protocol](spec)

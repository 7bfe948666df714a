"""Protocols by name: the one registry that spec validation and the engine both read.

A protocol is one module (a ``Protocol`` subclass: its roles, rounds, voters,
spec rules, prompts, console views, verify claims and run-time bookkeeping).
The built-in ones are listed below; any installed distribution adds its own
through the ``moot.protocols`` entry-point group (``name = "module:Class"``).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from tui.engine.protocols.adversary import AdversaryProtocol
from tui.engine.protocols.base import Protocol
from tui.engine.protocols.challenge import ChallengeProtocol
from tui.engine.protocols.debate import DebateProtocol
from tui.engine.protocols.delphi import DelphiProtocol
from tui.engine.protocols.refine import RefineProtocol

if TYPE_CHECKING:
    from tui.engine.spec import Spec

ENTRY_POINT_GROUP = "moot.protocols"

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

# Third-party protocols that could not be registered, by entry-point name: why not.
REFUSED: dict[str, str] = {}


def _installed() -> None:
    """Register each ``moot.protocols`` entry point; a broken one is refused, never fatal."""
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            found = point.load()
        except Exception as err:  # a third party's import error must not stop moot
            REFUSED[point.name] = f"{point.value} does not load: {type(err).__name__}: {err}"
            continue
        if not (isinstance(found, type) and issubclass(found, Protocol)):
            REFUSED[point.name] = f"{point.value} is not a Protocol subclass"
        elif getattr(found, "name", None) != point.name:
            REFUSED[point.name] = f"{point.value} is named {getattr(found, 'name', None)!r}"
        elif point.name in PROTOCOLS and PROTOCOLS[point.name] is not found:
            REFUSED[point.name] = f"{point.value}: the name {point.name!r} is taken"
        else:
            PROTOCOLS[point.name] = found


_installed()


def protocol_for(spec: Spec) -> Protocol:
    """A fresh run-time protocol for a validated spec."""
    return PROTOCOLS[spec.debate.protocol](spec)

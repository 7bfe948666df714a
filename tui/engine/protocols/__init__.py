"""Protocols by name: the one registry that spec validation and the engine both read.

A protocol is one module (a ``Protocol`` subclass: its roles, rounds, voters,
spec rules, prompts, console views, verify claims and run-time bookkeeping).
The built-in ones are listed below; any installed distribution adds its own
through the ``moot.protocols`` entry-point group (``name = "module:Class"``).
"""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from tui.engine.basics.vocab import TurnKind
from tui.engine.core.substance import add_labels
from tui.engine.protocols.adversary import AdversaryProtocol
from tui.engine.protocols.base import Protocol
from tui.engine.protocols.challenge import ChallengeProtocol
from tui.engine.protocols.debate import DebateProtocol
from tui.engine.protocols.delphi import DelphiProtocol
from tui.engine.protocols.refine import RefineProtocol
from tui.engine.terms.spec import name_protocols

if TYPE_CHECKING:
    from tui.engine.terms.spec import Spec

ENTRY_POINT_GROUP = "moot.protocols"
KIND_NAME = re.compile(r"[a-z][a-z0-9_]*")  # as session files and the JSON export's schema hold it

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


def _kinds_taken(by_other_than: type[Protocol]) -> set[str]:
    """The shared turn kinds, and those every other registered protocol adds."""
    added = {k for p in PROTOCOLS.values() if p is not by_other_than for k in p.turn_kinds}
    return set(TurnKind) | added


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
        elif odd := [k for k in found.turn_kinds if not KIND_NAME.fullmatch(k)]:
            REFUSED[point.name] = (
                f"{point.value}: the turn kind {odd[0]!r} is not a lower_case name"
            )
        elif taken := sorted(set(found.turn_kinds) & _kinds_taken(found)):
            REFUSED[point.name] = f"{point.value}: the turn kind {taken[0]!r} is taken"
        else:
            PROTOCOLS[point.name] = found


_installed()
add_labels(model for p in PROTOCOLS.values() for model in p.turn_kinds.values())
name_protocols(PROTOCOLS)  # a spec's default rounds and voters are its protocol's


def kind_owner(kind: str) -> type[Protocol] | None:
    """The protocol that adds a turn kind, if one does (the shared kinds are records.py's)."""
    return next((p for p in PROTOCOLS.values() if kind in p.turn_kinds), None)


def protocol_class(spec: Spec) -> type[Protocol]:
    """The registered protocol a validated spec names (validation refuses any other)."""
    return PROTOCOLS[spec.debate.protocol]


def protocol_for(spec: Spec) -> Protocol:
    """A fresh run-time protocol for a validated spec."""
    return PROTOCOLS[spec.debate.protocol](spec)

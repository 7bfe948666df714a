"""Textual messages: engine events as they reach the console's handlers.

The engine runs in a worker; its listener turns each event into one of these
and posts it to the debate screen, whose handlers own all display state.
Tokens are coalesced: a burst of tokens becomes one ``TokensArrived``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:  # the engine (and pydantic) load when a debate starts, not at start-up
    from tui.engine.events import Slot
    from tui.engine.records import Turn


@dataclass
class PhaseBegan(Message):
    round: int
    phase: str
    slots: tuple[Slot, ...]


@dataclass
class TurnBegan(Message):
    slot: Slot
    model: str
    attempt: int


@dataclass
class TokensArrived(Message):
    """Some tokens are waiting in the screen's buffer; drain them."""


@dataclass
class TurnFinished(Message):
    turn: Turn
    replayed: bool


@dataclass
class PhaseFinished(Message):
    round: int
    phase: str


@dataclass
class TallyMoved(Message):
    tally: dict[str, int]
    threshold: int
    votes_by_debater: dict[str, str]


@dataclass
class DebateDecided(Message):
    decision: str
    rule: str
    decided_by: str
    result: dict[str, Any]


@dataclass
class ActionRecorded(Message):
    action: dict[str, Any]


@dataclass
class StatusMoved(Message):
    status: str


@dataclass
class ProviderFailure(Message):
    """A provider call failed; ``choice`` is resolved by the operator."""

    slot: Slot
    kind: str
    message: str
    choice: asyncio.Future[Any]


@dataclass
class EngineCrashed(Message):
    """The engine itself raised (a bug or a damaged session); shown, never a traceback."""

    error: str


@dataclass
class SessionChosen(Message):
    """Home screen: open a spec or a session."""

    mode: str  # run | resume | replay
    path: str

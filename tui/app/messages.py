"""Textual messages: how engine events and the home screen's choices reach handlers.

The engine runs in a worker; its listener posts each event, unchanged, as one
``EngineEvent`` to the live screen, whose handler matches on the event's type.
Two exceptions: tokens are buffered and a burst becomes one ``TokensArrived``,
and a provider failure waits for the operator's choice (``ProviderFailure``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # the engine (and pydantic) load when a debate starts, not at start-up
    from tui.engine.core.schedule import Slot
    from tui.engine.run.events import Event
    from tui.engine.run.turns import FailureChoice


@dataclass
class EngineEvent(Message):
    """One event from the engine, as the engine emitted it."""

    event: Event


@dataclass
class TokensArrived(Message):
    """Some tokens are waiting in the screen's buffer; drain them."""


@dataclass
class ProviderFailure(Message):
    """A provider call failed; ``choice`` is resolved by the operator."""

    slot: Slot
    kind: str
    message: str
    choice: asyncio.Future[FailureChoice]


@dataclass
class SessionChosen(Message):
    """Home screen: open a spec or a session."""

    mode: str  # run | resume | replay
    path: str

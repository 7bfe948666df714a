"""Typed events the engine emits; the console, headless printer and tests subscribe."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui.engine.basics.vocab import DecidedBy, RunStatus
from tui.engine.core.records import Turn
from tui.engine.core.schedule import Slot

if TYPE_CHECKING:
    from tui.engine.run.budget import Ledger
    from tui.engine.run.report import ResultRecord


@dataclass(slots=True, frozen=True)
class PhaseStarted:
    round: int
    phase: str
    slots: tuple[Slot, ...]


@dataclass(slots=True, frozen=True)
class TurnStarted:
    slot: Slot
    model: str
    attempt: int = 1


@dataclass(slots=True, frozen=True)
class TokenReceived:
    slot: Slot
    text: str


@dataclass(slots=True, frozen=True)
class TurnCompleted:
    turn: Turn
    replayed: bool = False


@dataclass(slots=True, frozen=True)
class LookupsRan:
    """A turn's lookups, run and recorded before the model is asked again with their results."""

    slot: Slot
    lookups: tuple[dict[str, Any], ...]


@dataclass(slots=True, frozen=True)
class PhaseCompleted:
    round: int
    phase: str


@dataclass(slots=True, frozen=True)
class TallyChanged:
    tally: dict[str, int]
    threshold: int
    votes_by_debater: dict[str, str]


@dataclass(slots=True, frozen=True)
class DecisionReached:
    decision: str
    rule: str  # a DecisionRule, or one its protocol names
    decided_by: DecidedBy
    result: ResultRecord


@dataclass(slots=True, frozen=True)
class OperatorActed:
    action: dict[str, Any]


@dataclass(slots=True, frozen=True)
class ProviderFailed:
    slot: Slot
    kind: str
    message: str


@dataclass(slots=True, frozen=True)
class LedgerChanged:
    """A debater's spending after a call: tokens, cost, last latency, context fullness."""

    speaker: str
    ledger: Ledger


@dataclass(slots=True, frozen=True)
class StatusChanged:
    """LIVE / PAUSED / AWAITING_OPERATOR / ENDED, for headers and printers."""

    status: RunStatus


Event = (
    PhaseStarted
    | TurnStarted
    | TokenReceived
    | TurnCompleted
    | LookupsRan
    | PhaseCompleted
    | TallyChanged
    | DecisionReached
    | OperatorActed
    | ProviderFailed
    | StatusChanged
    | LedgerChanged
)


Listener = Callable[[Event], None]


class EventBus:
    """Fans engine events out to subscribers; ``active`` lets hot paths skip building them."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    @property
    def active(self) -> bool:
        return bool(self._listeners)

    def emit(self, event: Event) -> None:
        for listener in self._listeners:
            listener(event)

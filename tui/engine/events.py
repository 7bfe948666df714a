"""Typed events the engine emits; the console, headless printer and tests subscribe."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui.engine.records import Turn


@dataclass(slots=True, frozen=True)
class Slot:
    """One scheduled speaking slot: who speaks, when, and about whom."""

    index: int
    round: int
    phase: str
    speaker: str
    kind: str
    target: str | None = None
    variant: str | None = None  # e.g. the X/Y order a judge is shown


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
    rule: str
    decided_by: str
    result: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class OperatorActed:
    action: dict[str, Any]


@dataclass(slots=True, frozen=True)
class ProviderFailed:
    slot: Slot
    kind: str
    message: str


@dataclass(slots=True, frozen=True)
class StatusChanged:
    """LIVE / PAUSED / AWAITING_OPERATOR / ENDED, for headers and printers."""

    status: str


Event = (
    PhaseStarted
    | TurnStarted
    | TokenReceived
    | TurnCompleted
    | PhaseCompleted
    | TallyChanged
    | DecisionReached
    | OperatorActed
    | ProviderFailed
    | StatusChanged
)

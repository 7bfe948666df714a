"""The deterministic speaker schedule: its slots, and registration order, optionally rotated."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class Slot:
    """One scheduled speaking slot: who speaks, when, and about whom."""

    index: int  # the turn number it will fill, 1-based as written and shown
    round: int
    phase: str
    speaker: str
    kind: str  # a TurnKind, or a kind its protocol adds (Protocol.turn_kinds)
    target: str | None = None
    variant: str | None = None  # e.g. the X/Y order a judge is shown


def round_order(ids: Sequence[str], round_no: int, rotate: bool) -> list[str]:
    """Speaking order for a round (1-based); rotation shifts by one each round."""
    order = list(ids)
    if rotate and order:
        k = (round_no - 1) % len(order)
        order = order[k:] + order[:k]
    return order


def critique_target(order: Sequence[str], speaker: str) -> str:
    """Each debater critiques the next in schedule order, never itself."""
    i = order.index(speaker)
    return order[(i + 1) % len(order)]

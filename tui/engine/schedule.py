"""The deterministic speaker schedule: registration order, optionally rotated."""

from __future__ import annotations

from collections.abc import Sequence


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

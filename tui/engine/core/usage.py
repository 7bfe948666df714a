"""The numbers a provider reports for a call, held to a sane range at the port.

A server says how many tokens a call used and a provider prices it; neither is
trusted. A 201-digit count would make the session file unreadable, a negative
one would let a run spend past ``[budget] max_tokens``, and NaN defeats every
comparison. Each number is held to ``[0, bound]`` (anything not a finite number
becomes 0) before the engine charges or records it, and the turn names the
fields that were changed in ``clamped``, which ``moot verify`` checks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from tui.engine.core.ports import TurnReply

CALL_TOKENS = 100_000_000  # tokens one call may report, in or out (past any context window)
CALL_COST = 10_000.0  # US dollars one call may cost
CONTEXT_WINDOW = "context_window"  # a model's context size, when the provider says
# The reply's counted fields and each one's bound; the context window is a count too.
BOUNDS: Mapping[str, int | float] = {
    "tokens_in": CALL_TOKENS,
    "tokens_out": CALL_TOKENS,
    "cost": CALL_COST,
    CONTEXT_WINDOW: CALL_TOKENS,
}
CLAMPED = "clamped"  # a provider may list counts it replaced itself in ``reply.extra``


def held(value: Any, bound: int | float) -> int | float:
    """``value`` in ``[0, bound]``: 0 for anything not a finite number, of bound's type."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return type(bound)(0)
    if isinstance(value, float) and not math.isfinite(value):
        return type(bound)(0)
    return type(bound)(min(max(value, 0), bound))


def clamp(reply: TurnReply) -> set[str]:
    """Hold the reply's numbers in range, in place; the names of those that were not."""
    changed = set()
    for name in ("tokens_in", "tokens_out", "cost"):
        value = getattr(reply, name)
        kept = held(value, BOUNDS[name])
        if kept != value:
            changed.add(name)
        setattr(reply, name, kept)
    window = reply.extra.get(CONTEXT_WINDOW)
    if window is not None:
        kept = held(window, CALL_TOKENS)
        if kept != window:
            changed.add(CONTEXT_WINDOW)
        reply.extra[CONTEXT_WINDOW] = kept
    said = reply.extra.get(CLAMPED)
    if isinstance(said, list | tuple | set):
        changed.update(name for name in said if name in BOUNDS)
    return changed


def in_range(value: Any, bound: int | float, calls: int) -> bool:
    """Whether a turn's sum over ``calls`` calls can be what :func:`clamp` lets through."""
    if isinstance(value, bool) or not isinstance(value, type(bound) | int):
        return False
    return math.isfinite(value) and 0 <= value <= bound * max(1, calls)

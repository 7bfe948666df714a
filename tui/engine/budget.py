"""Spending caps and the per-debater ledger.

``[budget]`` caps the session's tokens (in and out, summed) and cost in US
dollars; ``[debaters.budget]`` caps one debater's. The engine asks before every
call: a call that would start at or past a cap is not made, and the debate ends
``escalate`` with rule ``budget_exhausted``. The operator may raise a cap
(operator action ``raise_budget``, replayed on resume) and go on. The ledger
(tokens, cost, last latency, context fullness) is what a pane shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tui.engine.records import Turn
from tui.engine.spec import Spec

TOKENS = "max_tokens"
COST = "max_cost_usd"
CAPS = (TOKENS, COST)
SESSION = ""  # the scope of the session's own caps


@dataclass(slots=True)
class Ledger:
    """One debater's spending so far, and how its last call went."""

    tokens: int = 0
    cost: float = 0.0
    calls: int = 0
    last_latency_ms: float | None = None
    context_tokens: int | None = None  # the last prompt's size, as the provider counted it
    context_window: int | None = None  # the model's context, when the provider says

    @property
    def fullness(self) -> float | None:
        """How full the context was on the last call, 0..1, when both sizes are known."""
        if self.context_tokens is None or not self.context_window:
            return None
        return min(1.0, self.context_tokens / self.context_window)


def cap_key(scope: str, cap: str) -> str:
    """The spec key a cap is set by: ``budget.max_tokens`` or ``debaters.critic.budget.…``."""
    return f"budget.{cap}" if scope == SESSION else f"debaters.{scope}.budget.{cap}"


def parse_cap(key: str) -> tuple[str, str]:
    """``budget.max_tokens`` → (SESSION, max_tokens); ``debaters.ID.budget.CAP`` → (ID, CAP)."""
    parts = key.split(".")
    if len(parts) == 2 and parts[0] == "budget" and parts[1] in CAPS:
        return SESSION, parts[1]
    if len(parts) == 4 and parts[0] == "debaters" and parts[2] == "budget" and parts[3] in CAPS:
        return parts[1], parts[3]
    raise ValueError(
        f"{key}: expected budget.CAP or debaters.ID.budget.CAP, CAP one of {', '.join(CAPS)}"
    )


class Budget:
    """The caps now in force and what each debater has spent against them."""

    def __init__(self, spec: Spec, recorded: Iterable[Turn] = ()) -> None:
        self.caps: dict[tuple[str, str], float] = {}
        if spec.budget is not None:
            self._set(SESSION, spec.budget.max_tokens, spec.budget.max_cost_usd)
        for d in spec.debaters:
            if d.budget is not None:
                self._set(d.id, d.budget.max_tokens, d.budget.max_cost_usd)
        self.ledgers: dict[str, Ledger] = {d.id: Ledger() for d in spec.debaters}
        for turn in recorded:  # a resumed run has spent what its turns record
            self.charge(turn.speaker, turn.tokens_in + turn.tokens_out, turn.cost)

    def _set(self, scope: str, tokens: int | None, cost: float | None) -> None:
        if tokens is not None:
            self.caps[(scope, TOKENS)] = tokens
        if cost is not None:
            self.caps[(scope, COST)] = cost

    def charge(
        self,
        speaker: str,
        tokens: int,
        cost: float,
        latency_ms: float | None = None,
        context: tuple[int, int | None] | None = None,
    ) -> Ledger:
        """Add one call (or one recorded turn) to ``speaker``'s ledger."""
        ledger = self.ledgers.setdefault(speaker, Ledger())
        ledger.tokens += tokens
        ledger.cost = round(ledger.cost + cost, 9)
        if latency_ms is not None:
            ledger.calls += 1
            ledger.last_latency_ms = latency_ms
        if context is not None:
            ledger.context_tokens, ledger.context_window = context
        return ledger

    def spent(self, scope: str, cap: str) -> float:
        ledgers = self.ledgers.values() if scope == SESSION else [self.ledgers[scope]]
        if cap == TOKENS:
            return sum(ledger.tokens for ledger in ledgers)
        return round(sum(ledger.cost for ledger in ledgers), 9)

    def exhausted(self, speaker: str) -> dict[str, Any] | None:
        """The first cap ``speaker``'s next call would start past, as the result names it."""
        for scope in (SESSION, speaker):
            for cap in CAPS:
                limit = self.caps.get((scope, cap))
                if limit is None:
                    continue
                spent = self.spent(scope, cap)
                if spent >= limit:
                    return {
                        "budget_exhausted": cap_key(scope, cap),
                        "budget_spent": spent,
                        "budget_cap": limit,
                        "budget_speaker": speaker,
                    }
        return None

    def raise_cap(self, scope: str, cap: str, value: float) -> None:
        """Set a higher cap from the operator (checked by :meth:`check_raise`)."""
        self.check_raise(scope, cap, value)
        self.caps[(scope, cap)] = int(value) if cap == TOKENS else float(value)

    def check_raise(self, scope: str, cap: str, value: float) -> None:
        """ValueError for a cap that is not higher, unknown, or of an unknown debater."""
        if cap not in CAPS:
            raise ValueError(f"unknown cap {cap!r}; expected {' or '.join(CAPS)}")
        if scope != SESSION and scope not in self.ledgers:
            raise ValueError(f"{scope!r} is not a debater")
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError(f"{cap_key(scope, cap)} must be a positive number")
        current = self.caps.get((scope, cap))
        if current is not None and value <= current:
            raise ValueError(f"{cap_key(scope, cap)} is {current}; a raise must be higher")

    def apply(self, action: Mapping[str, Any]) -> None:
        """Re-apply a recorded ``raise_budget`` action."""
        self.raise_cap(str(action.get("speaker", SESSION)), str(action["cap"]), action["value"])

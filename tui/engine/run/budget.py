"""Spending caps and the per-debater ledger.

``[budget]`` caps the session's tokens (in and out, summed) and cost in US
dollars; ``[debaters.budget]`` caps one debater's. The engine asks before every
call: a call that would start at or past a cap is not made, and the debate ends
``escalate`` with rule ``budget_exhausted``. Lookups have caps of their own
(``max_lookups``, ``max_lookup_bytes``), asked before each lookup: one past them
is refused on record and the debate goes on. The operator may raise a cap
(operator action ``raise_budget``, replayed on resume) and go on. The ledger
(tokens, cost, last latency, context fullness) is what a pane shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tui.engine.core.records import Turn
from tui.engine.specs.spec import Spec

TOKENS = "max_tokens"
COST = "max_cost_usd"
CAPS = (TOKENS, COST)
LOOKUPS = "max_lookups"
LOOKUP_BYTES = "max_lookup_bytes"
LOOKUP_CAPS = (LOOKUPS, LOOKUP_BYTES)
SESSION = ""  # the scope of the session's own caps


def lookup_ran(record: Mapping[str, Any]) -> bool:
    """A lookup that was run (ok or failed in its tool), not refused before it: it has ``ms``."""
    return "ms" in record


def lookup_spend(records: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """The lookups run and the result bytes kept, of one turn's recorded lookups."""
    ran = [r for r in records if isinstance(r, Mapping) and lookup_ran(r)]
    kept = sum(r.get("bytes", 0) for r in ran if r.get("ok") and isinstance(r.get("bytes"), int))
    return len(ran), kept


def lookup_caps(spec: Spec) -> dict[tuple[str, str], int]:
    """The lookup caps the spec sets, by (scope, cap)."""
    scoped = [(SESSION, spec.budget)] + [(d.id, d.budget) for d in spec.debaters]
    return {
        (scope, cap): limit
        for scope, budget in scoped
        if budget is not None
        for cap in LOOKUP_CAPS
        if (limit := getattr(budget, cap)) is not None
    }


@dataclass(slots=True)
class Ledger:
    """One debater's spending so far, and how its last call went."""

    tokens: int = 0
    cost: float = 0.0
    calls: int = 0
    last_latency_ms: float | None = None
    context_tokens: int | None = None  # the last prompt's size, as the provider counted it
    context_window: int | None = None  # the model's context, when the provider says
    lookups: int = 0  # lookups run
    lookup_bytes: int = 0  # result bytes they kept

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


def lookup_budget_problems(spec: Spec, turns: Iterable[Turn]) -> list[str]:
    """What ``moot verify`` finds over the lookup caps, re-counted from the turns (empty: held)."""
    spent: dict[str, list[int]] = {}
    for turn in turns:
        ran, kept = lookup_spend(turn.lookups or ())
        for scope in (SESSION, turn.speaker):
            total = spent.setdefault(scope, [0, 0])
            total[0] += ran
            total[1] += kept
    problems = []
    for (scope, cap), limit in lookup_caps(spec).items():
        ran, kept = spent.get(scope, [0, 0])
        value, what = (ran, "lookups ran") if cap == LOOKUPS else (kept, "result bytes kept")
        if value > limit:
            problems.append(f"{value} {what}, over {cap_key(scope, cap)} = {limit}")
    return problems


class Budget:
    """The caps now in force and what each debater has spent against them."""

    def __init__(self, spec: Spec, recorded: Iterable[Turn] = ()) -> None:
        self.caps: dict[tuple[str, str], float] = {}
        if spec.budget is not None:
            self._set(SESSION, spec.budget.max_tokens, spec.budget.max_cost_usd)
        for d in spec.debaters:
            if d.budget is not None:
                self._set(d.id, d.budget.max_tokens, d.budget.max_cost_usd)
        self.lookup_caps = lookup_caps(spec)
        self.ledgers: dict[str, Ledger] = {d.id: Ledger() for d in spec.debaters}
        for turn in recorded:  # a resumed run has spent what its turns record
            self.charge(turn.speaker, turn.tokens_in + turn.tokens_out, turn.cost)
            ran, kept = lookup_spend(turn.lookups or ())
            ledger = self.ledgers.setdefault(turn.speaker, Ledger())
            ledger.lookups += ran
            ledger.lookup_bytes += kept

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

    # ------------------------------------------------------------ lookups
    def _lookups_spent(self, scope: str, cap: str) -> int:
        ledgers = self.ledgers.values() if scope == SESSION else [self.ledgers[scope]]
        return sum(ledger.lookups if cap == LOOKUPS else ledger.lookup_bytes for ledger in ledgers)

    def lookup_refusal(self, speaker: str) -> str | None:
        """Why ``speaker`` may run no lookup now (a cap reached), or None."""
        for (scope, cap), limit in self.lookup_caps.items():
            if scope in (SESSION, speaker) and (spent := self._lookups_spent(scope, cap)) >= limit:
                return f"over the budget of {cap_key(scope, cap)} = {limit} ({spent} spent)"
        return None

    def lookup_room(self, speaker: str) -> tuple[int, str] | None:
        """The result bytes ``speaker`` may still keep, and the cap that says so; None: no cap."""
        rooms = [
            (limit - self._lookups_spent(scope, cap), cap_key(scope, cap))
            for (scope, cap), limit in self.lookup_caps.items()
            if cap == LOOKUP_BYTES and scope in (SESSION, speaker)
        ]
        return min(rooms) if rooms else None

    def start_lookup(self, speaker: str) -> None:
        """Count a lookup as it starts, so turns running at once share the cap."""
        self.ledgers.setdefault(speaker, Ledger()).lookups += 1

    def keep_lookup_bytes(self, speaker: str, kept: int) -> None:
        self.ledgers.setdefault(speaker, Ledger()).lookup_bytes += kept

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

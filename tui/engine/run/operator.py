"""The operator log: controls, the journal of operator actions, and their replay on resume.

Every control the operator uses is journalled (to the session file through the
sink) at the turn count it happened after, so a resumed run re-applies notes,
extra rounds and model swaps at exactly the turn they first took effect.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from typing import Protocol as TypingProtocol

from tui.engine.basics.redact import Redactor
from tui.engine.basics.vocab import (
    ESCALATE,
    DecidedBy,
    DecisionChannel,
    DecisionRule,
    OperatorAction,
    RunStatus,
)
from tui.engine.core.records import Turn
from tui.engine.core.state import DebateState, Decision
from tui.engine.core.substance import rationale_problem
from tui.engine.protocols import protocol_class
from tui.engine.protocols.base import Protocol
from tui.engine.run.budget import SESSION, Budget
from tui.engine.run.events import EventBus, OperatorActed, StatusChanged
from tui.engine.run.roster import Roster
from tui.engine.specs.spec import Spec


class TurnSink(TypingProtocol):
    """Where completed turns and operator actions are persisted (the session store)."""

    def append_turn(self, turn: Turn) -> None:
        """Write the turn, in order; it counts as on disk only once ``durable`` returns."""
        ...

    async def durable(self) -> None:
        """Return once every turn appended so far is on disk."""
        ...

    def append_action(self, action: dict[str, Any]) -> None: ...

    @property
    def full(self) -> int | None:
        """The bytes the file would have held with a record it refused for want of room."""
        ...


def now() -> str:
    """A timestamp as session files record it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _operator_decision(vote: str, rationale: str, via: object) -> Decision:
    """The decision a decide action makes; its channel, if recorded, goes into the result."""
    extra = {"decided_via": str(via)} if via is not None else {}
    return Decision(vote, DecisionRule.OPERATOR_DECISION, DecidedBy.OPERATOR, rationale, extra)


class OperatorLog:
    """The run's status, pause gate and stop request, moved only by journalled controls."""

    def __init__(
        self,
        spec: Spec,
        protocol: Protocol,
        state: DebateState,
        roster: Roster,
        bus: EventBus,
        *,
        sink: TurnSink | None = None,
        recorded_actions: Iterable[dict[str, Any]] = (),
        budget: Budget | None = None,
    ) -> None:
        self.spec = spec
        self.budget = budget or Budget(spec)
        self.protocol = protocol
        self.state = state
        self.roster = roster
        self.actions: list[dict[str, Any]] = []
        self.status = RunStatus.READY
        self.stop: Decision | None = None  # set to end the run at the next turn boundary
        self.gate = asyncio.Event()  # cleared while paused
        self.gate.set()
        self.inflight: set[asyncio.Task[Any]] = set()
        self._bus = bus
        self._sink = sink
        self._redact = Redactor.for_spec(spec)  # a pasted key never reaches the journal
        self._pending = sorted(
            (dict(a) for a in recorded_actions), key=lambda a: a.get("after_turn", 0)
        )

    # ------------------------------------------------------------- run state
    def set_status(self, status: RunStatus) -> None:
        if status != self.status:
            self.status = status
            self._bus.emit(StatusChanged(status))

    def _follow_gate(self) -> None:
        """A running debate shows what its gate does: PAUSED exactly while it is shut."""
        if self.running:
            self.set_status(RunStatus.PAUSED if self.paused else RunStatus.LIVE)

    def _shut(self) -> None:
        self.gate.clear()
        self._follow_gate()

    def _open(self) -> None:
        self.gate.set()
        self._follow_gate()

    def release(self) -> None:
        """Go on after a pause because of another control (escalate, decide, extend,
        a raised cap): journalled as a ``resume``, so a resumed run is not left paused."""
        if self.paused:
            self.record(OperatorAction.RESUME)
            self._open()

    @property
    def paused(self) -> bool:
        return not self.gate.is_set()

    @property
    def running(self) -> bool:
        return self.status in (RunStatus.LIVE, RunStatus.PAUSED)

    def halt(self, decision: Decision, keep: asyncio.Task[Any] | None = None) -> None:
        """End the run with ``decision`` at the next boundary; cancel calls in flight."""
        self.stop = decision
        for task in list(self.inflight):
            if task is not keep and not task.done():
                task.cancel()

    # --------------------------------------------------------------- journal
    def record(self, action: OperatorAction, **fields: Any) -> dict[str, Any]:
        """Journal an action after the turns so far (None fields are left out)."""
        entry: dict[str, Any] = {
            "at": now(),
            "action": action,
            "after_turn": len(self.state.turns),
        }
        entry.update({k: self._redact.tree(v) for k, v in fields.items() if v is not None})
        self.actions.append(entry)
        if self._sink is not None:
            self._sink.append_action(entry)
        self._bus.emit(OperatorActed(entry))
        return entry

    def replay(self) -> bool:
        """On resume, re-apply the journal, in order, up to the turns replayed so far.

        Each action does what it did live: a note is shown, a pause holds the
        gate, a swap changes the model, an escalate or decide stops the run, and
        an extend adds its round and withdraws whatever end came before it (the
        operator chose to go on). True when an extend was replayed.
        """
        done = len(self.state.turns)
        extended = False
        while self._pending and self._pending[0].get("after_turn", 0) <= done:
            a = self._pending.pop(0)
            self.actions.append(a)
            kind = a.get("action")
            if kind == OperatorAction.NOTE:
                self.state.notes.append(str(a.get("text", "")))
            elif kind == OperatorAction.PAUSE:
                self._shut()
            elif kind == OperatorAction.RESUME:
                self._open()
            elif kind == OperatorAction.EXTEND:
                recorded = a.get("max_rounds")
                self.state.max_rounds = (
                    recorded
                    if isinstance(recorded, int) and not isinstance(recorded, bool)
                    else self.state.max_rounds + 1
                )
                self.stop = None
                extended = True
            elif kind == OperatorAction.REPLACE_MODEL:
                self.roster.swap_model(str(a.get("speaker")), str(a.get("model")))
            elif kind == OperatorAction.RAISE_BUDGET:
                self.budget.apply(a)
                self.stop = None
            elif kind == OperatorAction.DECIDE:
                self.stop = _operator_decision(
                    str(a.get("vote")), str(a.get("rationale")), a.get("via")
                )
            elif kind == OperatorAction.ESCALATE:
                self._open()  # escalating released a pause (files before 0.3 journal no resume)
                self.stop = Decision(
                    ESCALATE, DecisionRule.OPERATOR_ESCALATION, decided_by=DecidedBy.OPERATOR
                )
            self._bus.emit(OperatorActed(a))
        return extended

    # -------------------------------------------------------------- controls
    def pause(self) -> None:
        if not self.paused:
            self.record(OperatorAction.PAUSE)
            self._shut()

    def resume(self) -> None:
        if self.paused:
            self.record(OperatorAction.RESUME)
            self._open()

    def note(self, text: str) -> None:
        """Shown to debaters from the next turn on."""
        text = self._redact(text.strip())
        if not text:
            raise ValueError("a note needs text")
        self.state.notes.append(text)
        self.record(OperatorAction.NOTE, text=text)

    def escalate(self, reason: str | None = None) -> None:
        """Stop at the next turn boundary, unresolved, and hand over to the operator."""
        self.release()
        self.record(OperatorAction.ESCALATE, rationale=reason)
        self.halt(
            Decision(ESCALATE, DecisionRule.OPERATOR_ESCALATION, decided_by=DecidedBy.OPERATOR)
        )

    def decide(self, vote: str, rationale: str, via: DecisionChannel | None = None) -> Decision:
        """The operator's final call, checked and journalled; the caller applies it.

        ``via`` names the channel when the decision did not come through moot's own
        console or command line (an MCP client); it is recorded with the decision.
        """
        d = self.spec.debate
        if problem := protocol_class(self.spec).decision_problem(self.spec, vote):
            raise ValueError(problem)
        problem = rationale_problem(rationale, votes=d.vote_options, motion=d.motion)
        if problem:
            raise ValueError(problem)
        veto = self.protocol.operator_veto(self.state, vote)
        if veto:
            raise ValueError(veto)
        if self.running:  # it ends a running debate: any pause ends first, on record
            self.release()
        self.record(OperatorAction.DECIDE, vote=vote, rationale=rationale.strip(), via=via)
        return _operator_decision(vote, rationale.strip(), via)

    def extend(self) -> None:
        """One more round after an unresolved end; the debate goes on, so a pause ends."""
        self.release()
        self.state.max_rounds += 1
        self.record(OperatorAction.EXTEND, max_rounds=self.state.max_rounds)

    def raise_budget(
        self, cap: str, value: float, speaker: str | None = None, after_turn: int | None = None
    ) -> None:
        """A higher spending cap, checked, applied and journalled (after ``after_turn``, if
        given: a resumed run raises before its recorded turns are replayed)."""
        self.budget.raise_cap(speaker or SESSION, cap, value)
        if after_turn in (None, len(self.state.turns)):  # live: it goes on, so a pause ends
            self.release()
        self.record(
            OperatorAction.RAISE_BUDGET,
            cap=cap,
            value=value,
            speaker=speaker,
            after_turn=after_turn,
        )

    def replace_model(self, speaker: str, model: str) -> None:
        self.roster.swap_model(speaker, model)
        self.record(OperatorAction.REPLACE_MODEL, speaker=speaker, model=model)

"""The engine: runs a protocol's schedule phase by phase and owns every rule.

Models only fill in turns. Who speaks, what they see, whether a turn counts and
when the debate stops are decided here and recorded, never left to a model. The
work is shared out: :mod:`tui.engine.run.turns` plays one slot, :mod:`tui.engine.run.operator`
keeps the controls and their journal, :mod:`tui.engine.run.report` writes the result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tui.engine.basics.errors import SessionError, SessionFullError
from tui.engine.basics.vocab import ESCALATE, DecisionChannel, DecisionRule, RunStatus
from tui.engine.core.ports import Provider, ToolBox
from tui.engine.core.records import Turn
from tui.engine.core.schedule import Slot
from tui.engine.core.state import DebateState, Decision
from tui.engine.protocols import protocol_for
from tui.engine.run.budget import Budget
from tui.engine.run.events import (
    DecisionReached,
    EventBus,
    Listener,
    PhaseCompleted,
    PhaseStarted,
    TallyChanged,
    TurnCompleted,
)
from tui.engine.run.operator import OperatorLog, TurnSink
from tui.engine.run.report import ResultRecord, result_record
from tui.engine.run.roster import Roster
from tui.engine.run.turns import CutChoice, FailureHandler, TurnPlayer, escalate_on_failure
from tui.engine.specs.spec import Debater, Spec


class Engine:
    """Runs one debate. Operator controls may be called at any time from the same loop."""

    def __init__(
        self,
        spec: Spec,
        provider_for: Callable[[Debater], Provider],
        *,
        sink: TurnSink | None = None,
        recorded_turns: Sequence[Turn] = (),
        recorded_actions: Iterable[dict[str, Any]] = (),
        on_failure: FailureHandler = escalate_on_failure,
        max_parallel: int = 8,
        tools: ToolBox | None = None,
    ) -> None:
        self.spec = spec
        self.protocol = protocol_for(spec)
        self.state = DebateState(spec, spec.max_rounds)
        self.roster = Roster(spec.debaters)
        self.decision: Decision | None = None
        self._bus = EventBus()
        self.operator = OperatorLog(
            spec,
            self.protocol,
            self.state,
            self.roster,
            self._bus,
            sink=sink,
            recorded_actions=recorded_actions,
            budget=Budget(spec, recorded_turns),
        )
        self.player = TurnPlayer(
            spec,
            self.protocol,
            self.state,
            self.roster,
            self.operator,
            self._bus,
            provider_for,
            on_failure,
            tools,
        )
        self._sink = sink
        self._recorded = list(recorded_turns)
        self._semaphore = asyncio.Semaphore(max_parallel)
        self._round = 1
        self._phase_index = 0
        self._current_slots: list[Slot] | None = None
        self._phase_view: DebateState | None = None  # what a parallel phase's calls see
        self._phase_tasks: dict[int, asyncio.Task[Turn | Decision | None]] = {}
        self._played = 0  # turns a call has returned that are not yet on file

    # ------------------------------------------------------------ public view
    def subscribe(self, listener: Listener) -> None:
        self._bus.subscribe(listener)

    @property
    def status(self) -> RunStatus:
        return self.operator.status

    @property
    def actions(self) -> list[dict[str, Any]]:
        return self.operator.actions

    @property
    def debaters(self) -> dict[str, Debater]:
        return self.roster.debaters

    @property
    def paused(self) -> bool:
        return self.operator.paused

    @property
    def turn_under_way(self) -> bool:
        """A turn is being played, or was played and is not yet on file (paused or not: a
        pause stops the next turn only)."""
        return self.player.turns_under_way > 0 or self._played > 0

    def result(self) -> ResultRecord:
        """The ``[result]`` table, with the protocol's own report beside it."""
        return result_record(self.spec, self.state, self.decision, self.protocol)

    # --------------------------------------------------------------- running
    async def run(self) -> Decision:
        """Run until a decision; ``escalate`` leaves the engine awaiting the operator."""
        self.decision = None
        self.operator.stop = None
        self.operator.set_status(RunStatus.LIVE if not self.paused else RunStatus.PAUSED)
        decision: Decision | None = None
        while True:
            # On resume the journal is re-applied as the turns are: an extend the
            # operator chose after an end withdraws that end, and the run goes on.
            if self.operator.replay():
                decision = None
            if self.operator.stop is not None:
                decision = self.operator.stop
            if decision is not None:
                break
            if self._round > self.state.max_rounds:
                decision = self.protocol.exhausted(self.state)
                continue  # an extend recorded at this turn may withdraw it
            phases = self.protocol.phases(self._round)
            phase = phases[self._phase_index]
            self.state.round, self.state.phase = self._round, phase
            if self._current_slots is None:  # else: finish a phase that was interrupted
                start = len(self.state.turns) + 1  # turn numbers are 1-based
                self._current_slots = self.protocol.slots(self.state, self._round, phase, start)
                parallel = self.spec.debate.parallel and len(self._current_slots) > 1
                self._phase_view = self.state.frozen_turns() if parallel else None
            slots = self._current_slots
            if self._bus.active:
                self._bus.emit(PhaseStarted(self._round, phase, tuple(slots)))
            turns = await self._run_phase(slots)
            if turns is None:
                continue  # stopped: the operator's (or the refusal's) decision ends it
            self._current_slots = self._phase_view = None
            self.state.phase_sequence.append(phase)
            self._phase_index += 1
            if self._phase_index >= len(phases):
                self._phase_index = 0
                self._round += 1
            self._bus.emit(PhaseCompleted(self.state.round, phase))
            decision = self.protocol.after_phase(self.state, self.state.round, phase, turns)
        return self._conclude(decision)

    def _conclude(self, decision: Decision | None) -> Decision:
        assert decision is not None
        self.decision = decision
        self.operator.set_status(
            RunStatus.AWAITING_OPERATOR if decision.decision == ESCALATE else RunStatus.ENDED
        )
        self._bus.emit(
            DecisionReached(decision.decision, decision.rule, decision.decided_by, self.result())
        )
        return decision

    async def _run_phase(self, slots: list[Slot]) -> list[Turn] | None:
        committed = len(self.state.turns)
        done: list[Turn] = [self.state.turns[s.index - 1] for s in slots if s.index <= committed]
        slots = [s for s in slots if s.index > committed]
        for slot in [s for s in slots if self._is_recorded(s)]:  # each in the file stays
            recorded = self._recorded_turn(slot)
            self._commit_recorded(recorded)  # replayed: never refused
            done.append(recorded)
        slots = [s for s in slots if not self._is_recorded(s)]
        if slots and self.operator.stop is not None:
            return None  # a replayed escalate or decide ends the run before a live turn
        if not self.spec.debate.parallel or len(slots) <= 1:
            for slot in slots:
                turn = await self._play_cancellable(slot)
                if isinstance(turn, Decision):
                    self.operator.halt(turn)
                if not isinstance(turn, Turn) or not await self._commit_live(turn):
                    return None
                done.append(turn)
            return done
        tasks = [asyncio.ensure_future(self._play_bounded(s)) for s in slots]
        self._phase_tasks = dict(zip((s.index for s in slots), tasks, strict=True))
        inflight = self.operator.inflight
        inflight.update(tasks)
        try:
            # In schedule order, whatever order the calls end in: the transcript, and the
            # first failure that ends the run, are the schedule's, never the clock's.
            for task in tasks:
                try:
                    played = await task
                except asyncio.CancelledError:
                    if self.operator.stop is None:
                        raise
                    played = None
                if isinstance(played, Decision):
                    self.operator.halt(played)
                if not isinstance(played, Turn) or not await self._commit_live(played):
                    return None
                done.append(played)
            return done
        finally:
            for task in tasks:
                if not task.done():
                    task.cancel()
            inflight.difference_update(tasks)
            self._phase_tasks = {}
            self._played = 0  # a turn played after the one that ended the run is not kept

    async def _play_cancellable(self, slot: Slot) -> Turn | Decision | None:
        """A single call as a task, so decide/escalate can stop it mid-stream."""
        task = asyncio.ensure_future(self._play(slot))
        self.operator.inflight.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            if self.operator.stop is None or not task.cancelled():
                raise
            return None
        finally:
            self.operator.inflight.discard(task)

    async def _play_bounded(self, slot: Slot) -> Turn | Decision | None:
        async with self._semaphore:
            played = await self._play(slot)
        if isinstance(played, Decision):  # the run ends here: no later slot will be written
            for index, task in self._phase_tasks.items():
                if index > slot.index and not task.done():
                    task.cancel()
        return played

    async def _play(self, slot: Slot) -> Turn | Decision | None:
        refusal = self.player.refusal(slot)
        if refusal is not None:  # validation refuses such specs; stop on record anyway
            self.operator.stop = refusal
            return None
        if self._sink is not None and self._sink.full is not None:
            return _session_full(self._sink.full)  # no call whose turn the file cannot take
        played = await self.player.play(slot, self._phase_view)
        if isinstance(played, Turn):
            self._played += 1  # still under way until _commit_live has it on file
        return played

    async def _commit_live(self, turn: Turn) -> bool:
        """Record ``turn``, count it, and tell of it once it is on disk; False (the run
        stops) when the file had no room.

        The write is made here, on the loop, so records keep their order (an operator
        action after it is journalled after it); the fsync runs on a thread meanwhile.
        """
        try:
            if self._sink is not None:
                try:
                    self._sink.append_turn(turn)  # on file first: a refused turn is not counted
                except SessionFullError as full:
                    self.operator.halt(_session_full(full.size))
                    return False
            before = self._count(turn)
        finally:
            self._played -= 1
        if self._sink is not None:
            await self._sink.durable()
        self._tell(turn, before, replayed=False)
        return True

    def _commit_recorded(self, turn: Turn) -> None:
        """Count a turn read from the file, and the journal up to it, as it stood live."""
        before = self._count(turn)
        self.operator.replay()
        self._tell(turn, before, replayed=True)

    def _count(self, turn: Turn) -> str | None:
        """Add ``turn`` to the state; the speaker's vote before it (only theirs can move)."""
        before = self.state.latest_vote.get(turn.speaker)
        self.state.speaker_turns[turn.speaker] = self.state.speaker_turns.get(turn.speaker, 0) + 1
        self.state.add(turn)
        return before

    def _tell(self, turn: Turn, before: str | None, *, replayed: bool) -> None:
        if not self._bus.active:
            return
        self._bus.emit(TurnCompleted(turn, replayed))
        if self.state.latest_vote.get(turn.speaker) != before:
            self._bus.emit(
                TallyChanged(self.state.tally(), self.spec.threshold, dict(self.state.latest_vote))
            )

    # ------------------------------------------------------------- resuming
    def _is_recorded(self, slot: Slot) -> bool:
        return slot.index <= len(self._recorded)

    def _recorded_turn(self, slot: Slot) -> Turn:
        """The recorded turn for a slot, which must be the one the schedule expects."""
        turn = self._recorded[slot.index - 1]
        expected = (slot.round, slot.phase, slot.speaker)
        found = (turn.round, turn.phase, turn.speaker)
        if expected != found or turn.index != slot.index:
            raise SessionError(
                "session",
                [
                    f"turn {slot.index}: recorded round/phase/speaker {found} but the "
                    f"schedule says {expected}; the session does not match its spec"
                ],
            )
        return turn

    # ------------------------------------------------------- operator controls
    def pause(self) -> None:
        self.operator.pause()

    def resume(self) -> None:
        self.operator.resume()

    def note(self, text: str) -> None:
        """Shown to debaters from the next turn on."""
        self.operator.note(text)

    def escalate(self, reason: str | None = None) -> None:
        """Stop at the next turn boundary, unresolved, and hand over to the operator."""
        if self.decision is None:
            self.operator.escalate(reason)

    def decide(self, vote: str, rationale: str, via: DecisionChannel | None = None) -> Decision:
        """The operator's final call: one of the spec's votes and a non-empty rationale
        (``via``: the channel it came through, when not moot's own console or CLI)."""
        decision = self.operator.decide(vote, rationale, via)
        if self.decision is None and self.operator.running:
            self.operator.halt(decision)
            return decision
        return self._conclude(decision)

    def extend(self) -> None:
        """One more round after an unresolved end; call ``run()`` again to continue."""
        self.operator.extend()
        self.decision = None

    def replace_model(self, speaker: str, model: str) -> None:
        self.operator.replace_model(speaker, model)

    def cut(self, speaker: str | None = None) -> list[Slot]:
        """Cancel ``speaker``'s call (or every call of the phase) at once, journalled with
        its partial text; each cut turn then waits for :meth:`answer_cut`."""
        return self.player.cut(speaker)

    def answer_cut(self, choice: CutChoice, speaker: str | None = None) -> list[Slot]:
        """Redo (after an optional note), skip, or replace the model of the cut turn(s)."""
        return self.player.answer_cut(choice, speaker)

    @property
    def awaiting_cut(self) -> list[Slot]:
        """The cut turns waiting for the operator's choice."""
        return self.player.awaiting_cut

    @property
    def budget(self) -> Budget:
        """Caps in force and each debater's ledger (tokens, cost, latency, context)."""
        return self.operator.budget

    def raise_budget(self, cap: str, value: float, speaker: str | None = None) -> None:
        """A higher cap (the session's, or ``speaker``'s); call ``run()`` again to go on."""
        done = max(len(self.state.turns), len(self._recorded))  # resumed: after the file's turns
        self.operator.raise_budget(cap, value, speaker, after_turn=done)
        self.decision = None


def _session_full(size: int) -> Decision:
    """The file has no room for another turn: escalate, naming the bytes it would have held."""
    return Decision(ESCALATE, DecisionRule.SESSION_FULL, extra={"session_full": size})

"""The engine: runs a protocol's schedule, asks providers for turns, owns every rule.

Models only fill in turns. Who speaks, what they see, whether a turn counts and
when the debate stops are decided here and recorded, never left to a model.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any
from typing import Protocol as TypingProtocol

from tui.engine.errors import SessionError
from tui.engine.events import (
    DecisionReached,
    Event,
    OperatorActed,
    PhaseCompleted,
    PhaseStarted,
    ProviderFailed,
    Slot,
    StatusChanged,
    TallyChanged,
    TokenReceived,
    TurnCompleted,
    TurnStarted,
)
from tui.engine.evidence import assess, rubric_schema, with_rubric
from tui.engine.parsing import TurnParseError, parse_turn
from tui.engine.ports import Provider, ProviderError, TurnRequest
from tui.engine.prompts import build_messages, reask_message
from tui.engine.protocols import protocol_for
from tui.engine.records import CONTENT_MODELS, VERIFIER_KINDS, Turn
from tui.engine.redact import redact
from tui.engine.spec import Debater, Spec
from tui.engine.state import DebateState, Decision

FailureChoice = str | tuple[str, str]
FailureHandler = Callable[[Slot, ProviderError], Awaitable[FailureChoice]]
Listener = Callable[[Event], None]
NOT_ARTIFACT = ("note:", "critique:", "challenges:", "responses:")


class TurnSink(TypingProtocol):
    """Where completed turns and operator actions are persisted (the session store)."""

    def append_turn(self, turn: Turn) -> None: ...

    def append_action(self, action: dict[str, Any]) -> None: ...


async def escalate_on_failure(slot: Slot, error: ProviderError) -> FailureChoice:
    """Headless default: a provider failure ends the debate unresolved."""
    return "escalate"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


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
    ) -> None:
        self.spec = spec
        self.protocol = protocol_for(spec)
        self.state = DebateState(spec, spec.max_rounds)
        self.debaters: dict[str, Debater] = {d.id: d for d in spec.debaters}
        self._family = {d.id: d.resolved_family for d in spec.debaters}
        self.actions: list[dict[str, Any]] = []
        self.decision: Decision | None = None
        self.status = "READY"
        self._provider_for = provider_for
        self._sink = sink
        self._recorded = list(recorded_turns)
        self._replaying_actions = sorted(
            (dict(a) for a in recorded_actions), key=lambda a: a.get("after_turn", 0)
        )
        self._on_failure = on_failure
        self._listeners: list[Listener] = []
        self._gate = asyncio.Event()
        self._gate.set()
        self._stop: Decision | None = None
        self._inflight: set[asyncio.Task[Any]] = set()
        self._semaphore = asyncio.Semaphore(max_parallel)
        self._round = 1
        self._phase_index = 0
        self._current_slots: list[Slot] | None = None
        self._models: dict[str, type[Any]] = dict(CONTENT_MODELS)
        self._rubric_kinds: set[str] = set()
        if spec.rubric is not None:
            applies = set(spec.rubric.applies_to)
            for kind in VERIFIER_KINDS:
                probe = Slot(0, 1, "", "", kind)
                if self.protocol.rubric_role(probe) in applies:
                    self._models[kind] = with_rubric(CONTENT_MODELS[kind], spec.rubric)
                    self._rubric_kinds.add(kind)
        self._schemas = {k: m.model_json_schema() for k, m in self._models.items()}
        for kind in self._rubric_kinds:  # one answer per property, named by its id
            self._schemas[kind] = rubric_schema(self._schemas[kind], spec.rubric)

    # ----------------------------------------------------------------- events
    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _emit(self, event: Event) -> None:
        for listener in self._listeners:
            listener(event)

    def _set_status(self, status: str) -> None:
        if status != self.status:
            self.status = status
            self._emit(StatusChanged(status))

    # --------------------------------------------------------------- running
    async def run(self) -> Decision:
        """Run until a decision; ``escalate`` leaves the engine awaiting the operator."""
        self.decision = None
        self._stop = None
        self._set_status("LIVE" if self._gate.is_set() else "PAUSED")
        decision: Decision | None = None
        while decision is None:
            self._replay_actions()
            if self._stop is not None:
                decision = self._stop
                break
            if self._round > self.state.max_rounds:
                decision = self.protocol.exhausted(self.state)
                break
            phases = self.protocol.phases(self._round)
            phase = phases[self._phase_index]
            if self._current_slots is None:  # else: finish a phase that was interrupted
                start = len(self.state.turns)
                self._current_slots = self.protocol.slots(self.state, self._round, phase, start)
            slots = self._current_slots
            self.state.round, self.state.phase = self._round, phase
            if self._listeners:
                self._emit(PhaseStarted(self._round, phase, tuple(slots)))
            turns = await self._run_phase(slots)
            if turns is None:
                decision = self._stop
                break
            self._current_slots = None
            self.state.phase_sequence.append(phase)
            self._phase_index += 1
            if self._phase_index >= len(phases):
                self._phase_index = 0
                self._round += 1
            self._emit(PhaseCompleted(self.state.round, phase))
            decision = self.protocol.after_phase(self.state, self.state.round, phase, turns)
        return self._conclude(decision)

    def _conclude(self, decision: Decision | None) -> Decision:
        assert decision is not None
        self.decision = decision
        self._set_status("AWAITING_OPERATOR" if decision.decision == "escalate" else "ENDED")
        self._emit(
            DecisionReached(decision.decision, decision.rule, decision.decided_by, self.result())
        )
        return decision

    async def _run_phase(self, slots: list[Slot]) -> list[Turn] | None:
        committed = len(self.state.turns)
        done: list[Turn] = [self.state.turns[s.index] for s in slots if s.index < committed]
        slots = [s for s in slots if s.index >= committed]
        if not self.spec.debate.parallel or len(slots) <= 1:
            for slot in slots:
                if slot.index < len(self._recorded):
                    turn: Turn | None = self._recorded_turn(slot)
                else:
                    turn = await self._play_cancellable(slot)
                if turn is None:
                    return None
                self._commit(turn, slot)
                done.append(turn)
            return done
        tasks = [asyncio.ensure_future(self._play_bounded(s)) for s in slots]
        self._inflight.update(tasks)
        done = []
        try:
            for slot, task in zip(slots, tasks, strict=True):
                try:
                    turn = await task
                except asyncio.CancelledError:
                    if self._stop is None:
                        raise
                    turn = None
                if turn is None:
                    return None
                self._commit(turn, slot)  # transcript keeps schedule order
                done.append(turn)
            return done
        finally:
            for task in tasks:
                if not task.done():
                    task.cancel()
            self._inflight.difference_update(tasks)

    async def _play_cancellable(self, slot: Slot) -> Turn | None:
        """A single call as a task, so decide/escalate can stop it mid-stream."""
        task = asyncio.ensure_future(self._play(slot))
        self._inflight.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            if self._stop is None or not task.cancelled():
                raise
            return None
        finally:
            self._inflight.discard(task)

    async def _play_bounded(self, slot: Slot) -> Turn | None:
        async with self._semaphore:
            return await self._play(slot)

    def _commit(self, turn: Turn, slot: Slot) -> None:
        replayed = slot.index < len(self._recorded)
        before = self.state.latest_vote.get(turn.speaker)  # only this speaker's vote can move
        self.state.speaker_turns[turn.speaker] = self.state.speaker_turns.get(turn.speaker, 0) + 1
        self.state.add(turn)
        if self._sink is not None and not replayed:
            self._sink.append_turn(turn)
        if not self._listeners:
            return
        self._emit(TurnCompleted(turn, replayed))
        if self.state.latest_vote.get(turn.speaker) != before:
            self._emit(
                TallyChanged(self.state.tally(), self.spec.threshold, dict(self.state.latest_vote))
            )

    async def _play(self, slot: Slot) -> Turn | None:
        if slot.kind in VERIFIER_KINDS and slot.speaker in (
            self.protocol.cross_family_against(slot) or [slot.target]
        ):
            # Validation refuses such specs; if one gets here anyway, stop on record.
            self._stop = Decision(
                "escalate",
                "self_critique_refused",
                extra={"refused_speaker": slot.speaker, "refused_slot": slot.index},
            )
            return None
        if slot.index < len(self._recorded):
            return self._recorded_turn(slot)
        if not self._gate.is_set():
            await self._gate.wait()
        if self._stop is not None:
            return None
        debater = self.debaters[slot.speaker]
        items = self.protocol.context(self.state, slot)
        schema = self.protocol.slot_schema(self.state, slot, self._schemas[slot.kind])
        votes = list(self.spec.debate.votes)
        messages = build_messages(self.spec, debater, slot, items, schema, votes)
        content_model = self._models[slot.kind]
        started_at, t0 = _now(), time.perf_counter()
        tokens_in = tokens_out = 0
        cost = 0.0
        attempts = 0
        last_text, last_error = "", ""
        content = None
        on_token = (lambda text: self._emit(TokenReceived(slot, text))) if self._listeners else None
        while attempts <= self.spec.debate.retries:
            attempts += 1
            request = TurnRequest(
                debater=debater,
                slot=slot,
                messages=messages,
                schema_name=content_model.__name__,
                json_schema=schema,
                votes=votes,
                attempt=attempts,
                speaker_turn=self.state.speaker_turns.get(slot.speaker, 0) + 1,
            )
            if self._listeners:
                self._emit(TurnStarted(slot, debater.model, attempts))
            reply = await self._call(request, on_token)
            if reply is None:
                return None
            if isinstance(reply, Turn):
                return reply  # skipped after a provider failure
            tokens_in += reply.tokens_in
            tokens_out += reply.tokens_out
            cost += reply.cost
            last_text = reply.text
            debater = self.debaters[slot.speaker]
            try:
                content = parse_turn(reply.text, content_model, votes)
                self.protocol.check(self.state, slot, content)
                break
            except TurnParseError as err:
                content = None
                last_error = str(err)
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply.text},
                    reask_message(last_error),
                ]
        turn = self._new_turn(slot, started_at)
        turn.saw = [label for label, _, _ in items]
        turn.attempts = attempts
        turn.elapsed_ms = round((time.perf_counter() - t0) * 1000, 3)
        turn.tokens_in, turn.tokens_out, turn.cost = tokens_in, tokens_out, cost
        if content is None:
            turn.invalid = True
            turn.raw = last_text
            turn.error = last_error
        else:
            turn.content = content.model_dump()
            vote = turn.content.get("routing") or turn.content.get("vote") or None
            turn.vote = vote
        against = self.protocol.cross_family_against(slot)
        if against:
            mine = self._family[slot.speaker]
            turn.cross_family_held = all(mine != self._family[a] for a in against)
        if content is not None:
            if slot.kind in self._rubric_kinds and self.spec.rubric is not None:
                turn.derived["rubric"] = assess(
                    self.spec.rubric,
                    turn.content.get("rubric", []),
                    [text for label, _, text in items if not label.startswith(NOT_ARTIFACT)],
                    (t.content for t in self.state.turns),
                )
            self.protocol.annotate(self.state, slot, turn)
        return turn

    async def _call(self, request: TurnRequest, on_token: Any) -> Any:
        """One provider call; failures go to the failure handler, never up as tracebacks."""
        slot = request.slot
        while True:
            provider = self._provider_for(self.debaters[slot.speaker])
            try:
                return await provider.complete(request, on_token)
            except asyncio.CancelledError:
                raise
            except ProviderError as err:
                error = ProviderError(err.kind, redact(err.message))
            except Exception as err:  # a provider bug must not crash the console
                error = ProviderError("internal", redact(f"{type(err).__name__}: {err}"))
            self._emit(ProviderFailed(slot, error.kind, error.message))
            choice = await self._on_failure(slot, error)
            if choice == "retry":
                continue
            if isinstance(choice, tuple) and choice[0] == "replace":
                self.replace_model(slot.speaker, choice[1])
                request.debater = self.debaters[slot.speaker]
                continue
            if choice == "skip":
                self._record_action("skip", speaker=slot.speaker, error=error.message)
                turn = self._new_turn(slot, _now())
                turn.invalid = True
                turn.error = f"provider failure ({error.kind}): {error.message}"
                return turn
            self._stop = Decision(
                "escalate",
                "provider_failure",
                extra={"failed_speaker": slot.speaker, "failure": f"{error.kind}: {error.message}"},
            )
            self._cancel_inflight(exclude=asyncio.current_task())
            return None

    def _new_turn(self, slot: Slot, started_at: str) -> Turn:
        """A turn for a slot, with the speaker's current model and family."""
        return Turn(
            index=slot.index,
            round=slot.round,
            phase=slot.phase,
            speaker=slot.speaker,
            kind=slot.kind,
            model=self.debaters[slot.speaker].model,
            family=self._family[slot.speaker],
            target=slot.target,
            variant=slot.variant,
            started_at=started_at,
        )

    def _recorded_turn(self, slot: Slot) -> Turn:
        turn = self._recorded[slot.index]
        expected = (slot.round, slot.phase, slot.speaker)
        found = (turn.round, turn.phase, turn.speaker)
        if expected != found or turn.index != slot.index:
            raise SessionError(
                "session",
                [
                    f"turns[{slot.index}]: recorded round/phase/speaker {found} but the "
                    f"schedule says {expected}; the session does not match its spec"
                ],
            )
        return turn

    def _cancel_inflight(self, exclude: asyncio.Task[Any] | None = None) -> None:
        for task in list(self._inflight):
            if task is not exclude and not task.done():
                task.cancel()

    # ------------------------------------------------------- operator controls
    def _record_action(self, action: str, replayed: bool = False, **fields: Any) -> dict[str, Any]:
        entry = {"at": _now(), "action": action, "after_turn": len(self.state.turns)}
        entry.update({k: v for k, v in fields.items() if v is not None})
        self.actions.append(entry)
        if self._sink is not None and not replayed:
            self._sink.append_action(entry)
        self._emit(OperatorActed(entry))
        return entry

    def _replay_actions(self) -> None:
        """On resume, re-apply recorded notes, extends and model swaps at their turn."""
        while self._replaying_actions and self._replaying_actions[0].get("after_turn", 0) <= len(
            self.state.turns
        ):
            a = self._replaying_actions.pop(0)
            self.actions.append(a)
            kind = a.get("action")
            if kind == "note":
                self.state.notes.append(str(a.get("text", "")))
            elif kind == "extend":
                self.state.max_rounds += 1
            elif kind == "replace_model":
                self._swap_model(str(a.get("speaker")), str(a.get("model")))
            elif kind == "decide":  # written, then the process died before the result
                self._stop = Decision(
                    str(a.get("vote")), "operator_decision", "operator", str(a.get("rationale"))
                )
            elif kind == "escalate":
                self._stop = Decision("escalate", "operator_escalation", decided_by="operator")
            self._emit(OperatorActed(a))

    @property
    def paused(self) -> bool:
        return not self._gate.is_set()

    def pause(self) -> None:
        if self._gate.is_set():
            self._gate.clear()
            self._record_action("pause")
            if self.status == "LIVE":
                self._set_status("PAUSED")

    def resume(self) -> None:
        if not self._gate.is_set():
            self._gate.set()
            self._record_action("resume")
            if self.status == "PAUSED":
                self._set_status("LIVE")

    def note(self, text: str) -> None:
        """Shown to debaters from the next turn on."""
        text = text.strip()
        if not text:
            raise ValueError("a note needs text")
        self.state.notes.append(text)
        self._record_action("note", text=text)

    def escalate(self, reason: str | None = None) -> None:
        """Stop at the next turn boundary, unresolved, and hand over to the operator."""
        if self.decision is not None:
            return
        self._record_action("escalate", rationale=reason)
        self._stop = Decision("escalate", "operator_escalation", decided_by="operator")
        self._gate.set()
        self._cancel_inflight()

    def decide(self, vote: str, rationale: str) -> Decision:
        """The operator's final call: one of the spec's votes and a non-empty rationale."""
        if vote not in self.spec.debate.votes:
            raise ValueError(f"{vote!r} is not one of {', '.join(self.spec.debate.votes)}")
        if not rationale.strip():
            raise ValueError("a decision needs a rationale")
        veto = self.protocol.operator_veto(self.state, vote)
        if veto:
            raise ValueError(veto)
        self._record_action("decide", vote=vote, rationale=rationale.strip())
        decision = Decision(vote, "operator_decision", "operator", rationale.strip())
        if self.decision is None and self.status in ("LIVE", "PAUSED"):
            self._stop = decision
            self._gate.set()
            self._cancel_inflight()
            return decision
        return self._conclude(decision)

    def extend(self) -> None:
        """One more round after an unresolved end; call ``run()`` again to continue."""
        self.state.max_rounds += 1
        self._record_action("extend", max_rounds=self.state.max_rounds)
        self.decision = None

    def replace_model(self, speaker: str, model: str) -> None:
        self._swap_model(speaker, model)
        self._record_action("replace_model", speaker=speaker, model=model)

    def _swap_model(self, speaker: str, model: str) -> None:
        old = self.debaters[speaker]
        new = old.model_copy(update={"model": model, "script": None, "family": None})
        self.debaters[speaker] = new
        self._family[speaker] = new.resolved_family

    # ----------------------------------------------------------------- result
    def result(self) -> dict[str, Any]:
        """The ``[result]`` table, with the protocol's own report beside it."""
        d = self.decision
        st = self.state
        rounds_run = max((t.round for t in st.turns), default=0)
        out: dict[str, Any] = {
            "debater_ids": list(self.spec.ids),
            "protocol": self.spec.debate.protocol,
            "rounds_run": rounds_run,
            "max_rounds": st.max_rounds,
            "phase_sequence": list(st.phase_sequence),
            "consensus_threshold": self.spec.threshold,
            "vote_tally": st.tally(),
            "final_votes": dict(st.latest_vote),
            "speaker_schedule": [t.speaker for t in st.turns],
            "speaker_selected_by": "schedule",
            "turns": len(st.turns),
            "invalid_turns": sum(1 for t in st.turns if t.invalid),
            "tokens": sum(t.tokens_in + t.tokens_out for t in st.turns),
            "cost": round(sum(t.cost for t in st.turns), 6),
        }
        held = [t.cross_family_held for t in st.turns if t.cross_family_held is not None]
        if held:
            out["cross_family_policy"] = self.spec.debate.cross_family
            out["cross_family_held"] = all(held)
            out["weak_adversarial_pass"] = not all(held)
        assessed = [t for t in st.turns if "rubric" in t.derived]
        if assessed:
            last = assessed[-1].derived["rubric"]
            out["rubric_pass"] = last["pass"]
            out["rubric_missing_evidence"] = last["missing_evidence"]
            out["rubric_assessed_turn"] = assessed[-1].index
            out["rubric"] = last["properties"]  # evidence, rationale, verdict per property
            out["rubric_turns"] = [
                {
                    "turn": t.index,
                    "speaker": t.speaker,
                    "pass": t.derived["rubric"]["pass"],
                    "missing_evidence": t.derived["rubric"]["missing_evidence"],
                }
                for t in assessed
            ]
        if d is not None:
            out.update(decision=d.decision, decision_rule=d.rule, decided_by=d.decided_by)
            if d.rationale:
                out["rationale"] = d.rationale
            out.update(d.extra)
        out.update(self.protocol.report(st))
        return out

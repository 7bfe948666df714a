"""The live debate: the engine runs in a worker, its events drive the screen."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual import work
from textual.binding import Binding
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from tui.app.components.pane import DebaterPane
from tui.app.components.tally import Verdict
from tui.app.messages import EngineEvent, ProviderFailure, TokensArrived
from tui.app.screens.debate import DebateScreen
from tui.app.screens.modals import (
    BudgetModal,
    CutModal,
    CutResult,
    DecideModal,
    DecideResult,
    FailureModal,
    GuardModal,
    NoteModal,
    RaiseResult,
)
from tui.engine.basics.errors import MootInputError, SessionError, SpecError
from tui.engine.basics.vocab import ESCALATE, DecisionRule, OperatorAction, RunStatus, is_deferral
from tui.engine.core.ports import Provider, ProviderError
from tui.engine.core.schedule import Slot
from tui.engine.record.live import LiveSession
from tui.engine.run.budget import SESSION, parse_cap
from tui.engine.run.events import (
    DecisionReached,
    Event,
    LedgerChanged,
    LookupsRan,
    OperatorActed,
    PhaseCompleted,
    PhaseStarted,
    ProviderFailed,
    StatusChanged,
    TallyChanged,
    TokenReceived,
    TurnCompleted,
    TurnStarted,
)
from tui.engine.run.report import ResultRecord
from tui.engine.run.runner import Engine
from tui.engine.run.turns import CutAction, FailureAction, FailureChoice
from tui.engine.specs.spec import Debater, Spec
from tui.exitcodes import ExitCode
from tui.render.textsafe import clean_line, shorten

FLUSH_INTERVAL = 1 / 12  # seconds between display updates of streaming text (~12 fps)
PANE_OP_INTERVAL = 1 / 60  # seconds between two panes' changes: a frame, keys between
# Operator actions the screen confirms with a short notice (pause/resume show in the header).
ANNOUNCED = frozenset(
    {
        OperatorAction.NOTE,
        OperatorAction.EXTEND,
        OperatorAction.REPLACE_MODEL,
        OperatorAction.SKIP,
        OperatorAction.ESCALATE,
    }
)


class LiveScreen(DebateScreen):
    BINDINGS = [
        Binding("p", "pause", "Pause/resume"),
        Binding("e", "escalate", "Escalate"),
        Binding("d", "decide", "Decide"),
        Binding("n", "note", "Note"),
        Binding("x", "cut(False)", "Cut turn"),
        Binding("X", "cut(True)", "Cut phase", show=False),
        Binding("f,end", "follow", "Follow", show=False),
        Binding("E", "edit_spec", "Edit spec", show=False),
    ]

    def __init__(
        self,
        spec: Spec,
        spec_raw: dict[str, Any] | None,
        provider_for: Callable[[Debater], Provider],
        *,
        resume_path: str | Path | None = None,
        out: str | Path | None = None,
        sessions_dir: str | Path | None = None,
        spec_source: str | None = None,
        force: bool = False,
        allow_tools: bool = False,
        writes: bool = False,
    ) -> None:
        super().__init__(spec)
        self.spec_raw = spec_raw
        self.provider_for = provider_for
        self.resume_path = resume_path
        self.force = force  # resume a session whose hash chain is broken
        self.allow_tools = allow_tools  # --allow-tools: start the tools the spec or file names
        self.writes = writes  # --allow-tool-writes: offer listed calls that may write
        self.out = out
        self.sessions_dir = sessions_dir
        self.spec_source = spec_source
        self.session: LiveSession | None = None
        self.path: Path | None = None
        self.engine: Engine | None = None
        self.decision: DecisionReached | None = None
        self._tokens: dict[int, list[str]] = {}
        self._slots: dict[int, Slot] = {}
        self._flush_pending = False
        self._decide_modal: DecideModal | None = None  # the one open, if any
        # Pane changes that re-lay out a pane (a turn begins or ends) run one per
        # frame, so four panes finishing together cost four light frames instead of
        # one heavy one, and key presses get handled between them.
        self._pane_ops: dict[str, list[Callable[[], Awaitable[None]]]] = {}
        self._pane_ops_running = False
        self._streaming_slots: set[int] = set()
        self._edit_waiting: Timer | None = None  # E pressed while a turn was being spoken
        self._finish_trace: Callable[[], None] | None = None

    # -------------------------------------------------------------- start-up
    def on_mount(self) -> None:
        from tui.tools.toolbox import run_tools, session_tools

        try:
            if self.resume_path is not None:
                self.session = LiveSession.resume(
                    self.resume_path,
                    self.provider_for,
                    on_failure=self._on_failure,
                    force=self.force,
                    tools_for=lambda data: session_tools(
                        data,
                        self.moot.allow_read,
                        allow_tools=self.allow_tools,
                        writes=self.writes,
                    ),
                )
            else:
                self.session = LiveSession.start(
                    self.spec,
                    self.spec_raw or {},
                    self.provider_for,
                    out=self.out,
                    directory=self.sessions_dir,
                    spec_source=self.spec_source,
                    on_failure=self._on_failure,
                    tools=run_tools(
                        self.spec,
                        self.spec_source,
                        self.moot.allow_read,
                        allow_tools=self.allow_tools,
                        writes=self.writes,
                    ),
                )
        except (SessionError, SpecError, OSError) as err:
            self.moot.fail_start(_error_text(err))
            return
        self.engine = self.session.engine
        self.path = self.session.path
        self.spec = self.engine.spec
        self.engine.subscribe(self._relay_engine_event)
        from tui.telemetry import trace_session  # no OpenTelemetry unless an endpoint is set

        self._finish_trace = trace_session(self.session)
        from tui.notify import notify_session  # delivery runs in a thread of its own

        notify_session(self.session, "console", warn=self._notify_warning)
        self.header.max_rounds = self.engine.state.max_rounds
        self._refresh_verify()
        if self.spec.tools:  # what a lookup may do, said as the debate opens
            from tui.providers.preflight import tool_calls

            for line in tool_calls(self.spec, self.writes):
                self.notify(shorten(line, 600), title="tools", markup=False, timeout=20)
        if self.session.resumed_from is not None and self.session.resumed_from.warnings:
            for warning in self.session.resumed_from.warnings:
                self.notify(shorten(warning, 300), severity="warning", markup=False)
        self.drive()

    @property
    def _engine_now(self) -> Engine:
        """The engine, for handlers that only run once it exists (events, steering)."""
        if self.engine is None:
            raise RuntimeError("the debate has not started")  # on_mount returned early
        return self.engine

    @work(group="engine", exclusive=True, exit_on_error=False)
    async def drive(self) -> None:
        await self._engine_now.run()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The engine itself raised (a bug or a damaged session): shown, never a traceback."""
        error = event.worker.error
        if event.worker.group != "engine" or event.state != WorkerState.ERROR or error is None:
            return
        self.status = RunStatus.ENDED
        self.notify(
            f"the debate stopped: {shorten(f'{type(error).__name__}: {_error_text(error)}', 500)}",
            severity="error",
            markup=False,
            timeout=30,
        )

    # ---------------------------------------------- engine events → messages
    def _relay_engine_event(self, event: Event) -> None:
        """The engine's listener: tokens are buffered, every other event is posted as is."""
        if isinstance(event, TurnStarted):  # a re-ask starts afresh; its first token is next
            self._tokens.pop(event.slot.index, None)
        if isinstance(event, TokenReceived):
            self._tokens.setdefault(event.slot.index, []).append(event.text)
            self._slots[event.slot.index] = event.slot
            if not self._flush_pending:
                # Coalesce: one display update per pane per frame, however fast tokens come.
                self._flush_pending = True
                self.set_timer(FLUSH_INTERVAL, self._post_flush)
        elif not isinstance(event, ProviderFailed):  # the failure handler asks the operator
            self.post_message(EngineEvent(event))

    def _post_flush(self) -> None:
        self.post_message(TokensArrived())

    async def _on_failure(self, slot: Slot, error: ProviderError) -> FailureChoice:
        choice: asyncio.Future[FailureChoice] = asyncio.get_running_loop().create_future()
        self.post_message(ProviderFailure(slot, error.kind, error.message, choice))
        return await choice

    # ------------------------------------------------------------- handlers
    async def on_engine_event(self, message: EngineEvent) -> None:
        """Every engine event but tokens and provider failures, in the order emitted."""
        match message.event:
            case PhaseStarted() as event:
                self.header.round = event.round
                self.header.max_rounds = self._engine_now.state.max_rounds
                self.header.phase = event.phase
                self.timeline.add_slots(
                    [(s.index, s.round, s.phase, s.speaker, s.target) for s in event.slots]
                )
                for s in event.slots:
                    self._slots[s.index] = s
            case TurnStarted() as event:
                await self._turn_started(event)
            case TurnCompleted() as event:
                await self._turn_completed(event)
            case LookupsRan() as event:
                self.pane(event.slot.speaker).show_lookups(event.slot, event.lookups)
            case PhaseCompleted():
                self._refresh_verify()  # the protocol has closed the phase by now
            case TallyChanged() as event:
                self.tally_panel.tally = event.tally
            case StatusChanged():
                self.status = RunStatus(self._engine_now.status)
            case OperatorActed() as event:
                self._operator_acted(event.action)
            case LedgerChanged() as event:
                if event.speaker in self._engine_now.debaters:  # a copy: the engine's changes
                    pane = self.pane(event.speaker)
                    pane.ledger = replace(event.ledger)

                    async def reply_done(pane: DebaterPane = pane) -> None:
                        pane.reply_done()

                    # Charged after each call: its reply has ended. Queued behind the
                    # pane's own changes, so a reply faster than its box's mount is not lost.
                    await self._pane_op(event.speaker, reply_done)
            case DecisionReached() as event:
                await self._decision_reached(event)

    # ------------------------------------------------------ pane changes
    async def _pane_op(self, speaker: str, op: Callable[[], Awaitable[None]]) -> None:
        self._pane_ops.setdefault(speaker, []).append(op)
        if not self._pane_ops_running:
            await self._next_pane_op()

    async def _next_pane_op(self) -> None:
        """Apply one pane's queued changes (in order), then wait for a frame."""
        if not self._pane_ops:
            self._pane_ops_running = False  # a frame has passed with nothing queued
            return
        self._pane_ops_running = True
        speaker = next(iter(self._pane_ops))
        ops = self._pane_ops.pop(speaker)
        try:
            for op in ops:
                await op()
        finally:  # the next pane waits for this one's frame
            # A timer of this screen's own: an after-refresh callback goes to the screen
            # on top, and is lost if that one (transcript, help, a modal) closes first.
            self.set_timer(PANE_OP_INTERVAL, self._next_pane_op)

    @property
    def panes_settled(self) -> bool:
        """No pane change is waiting for its frame (tests and screenshots wait on this)."""
        return not self._pane_ops and not self._pane_ops_running

    async def drain_pane_ops(self) -> None:
        """Apply every queued pane change now (before a decision is shown)."""
        while self._pane_ops:
            speaker = next(iter(self._pane_ops))
            for op in self._pane_ops.pop(speaker):
                await op()

    async def _turn_started(self, event: TurnStarted) -> None:
        slot = event.slot
        self.timeline.mark(slot.index, "speaking")

        async def begin() -> None:
            await self.pane(slot.speaker).begin_turn(slot, event.attempt)
            self._streaming_slots.add(slot.index)

        self._streaming_slots.discard(slot.index)
        await self._pane_op(slot.speaker, begin)

    async def on_tokens_arrived(self, message: TokensArrived) -> None:
        self._flush_pending = False
        pending, self._tokens = self._tokens, {}
        waiting = False
        for index, chunks in pending.items():
            slot = self._slots.get(index)
            if slot is None:
                continue
            if index not in self._streaming_slots:  # its pane change is still queued
                self._tokens.setdefault(index, [])[:0] = chunks
                waiting = True
                continue
            self.pane(slot.speaker).feed("".join(chunks), len(chunks))
        if waiting and not self._flush_pending:
            self._flush_pending = True
            self.set_timer(FLUSH_INTERVAL, self._post_flush)

    async def _turn_completed(self, event: TurnCompleted) -> None:
        turn = event.turn
        self._tokens.pop(turn.index, None)
        self._streaming_slots.discard(turn.index)
        self.turns.append(turn)
        pane = self.pane(turn.speaker)
        if event.replayed:
            self.timeline.add_slots(
                [(turn.index, turn.round, turn.phase, turn.speaker, turn.target)]
            )
            await self._pane_op(turn.speaker, lambda: pane.add_card(turn))
        else:
            await self._pane_op(turn.speaker, lambda: pane.finish_turn(turn))
        self.timeline.mark(turn.index, "invalid" if turn.invalid else "done")
        self._refresh_verify()

    def _refresh_verify(self) -> None:
        if self.verifying and self.engine is not None:
            self.refresh_verify(self.engine.protocol, self.engine.state.turns)

    def _operator_acted(self, action: dict[str, Any]) -> None:
        self.actions.append(action)
        kind = str(action.get("action", ""))
        if kind == OperatorAction.REPLACE_MODEL:
            speaker = str(action.get("speaker", ""))
            if speaker in self._engine_now.debaters:
                self.pane(speaker).model = str(action.get("model", ""))
        elif kind == OperatorAction.EXTEND:
            self.header.max_rounds = self._engine_now.state.max_rounds
        if kind in ANNOUNCED:
            self.notify(f"operator {kind} recorded", markup=False, timeout=2)

    async def _decision_reached(self, event: DecisionReached) -> None:
        await self.drain_pane_ops()
        self._streaming_slots.clear()
        self._tokens.clear()  # turns cut short by the decision never complete
        for pane in self.query(DebaterPane):
            await pane.stop_streaming()
        self.decision = event
        self._refresh_verify()
        self.tally_panel.tally = event.result.get("vote_tally", self.tally_panel.tally)
        self.tally_panel.verdict = Verdict(
            event.decision, event.rule, event.decided_by, event.result.get("rationale")
        )
        for index, entry in self.timeline.entries.items():
            if entry.status == "speaking":
                self.timeline.mark(index, "waiting", render=False)
        self.timeline.set_current(None)
        if is_deferral(event.decision, event.rule):  # the operator's own escalate: asked no more
            self.notify(
                "deferred: the session waits in the inbox with your rationale "
                "(moot inbox; d decides it later)",
                markup=False,
                timeout=8,
            )
        elif event.decision == ESCALATE and event.rule == DecisionRule.BUDGET_EXHAUSTED:
            self.open_budget(event.result)
        elif event.decision == ESCALATE:
            self.open_decide(unresolved=True, rule=event.rule)
        else:
            self.notify(
                f"decision: {clean_line(event.decision)} ({clean_line(event.rule)})",
                markup=False,
            )

    def on_provider_failure(self, message: ProviderFailure) -> None:
        slot = message.slot
        pane = self.pane(slot.speaker)
        pane.show_failure(message.kind, message.message)
        self.timeline.mark(slot.index, "failed")

        def chosen(picked: FailureChoice | None) -> None:
            choice = picked or FailureChoice(FailureAction.ESCALATE)
            if not message.choice.done():
                message.choice.set_result(choice)
            if choice.action != FailureAction.ESCALATE:
                pane.failure = None

        self.app.push_screen(
            FailureModal(slot.speaker, pane.model, message.kind, message.message), chosen
        )

    # ------------------------------------------------------------- controls
    def _can_steer(self) -> bool:
        return self.engine is not None and self.engine.status in (RunStatus.LIVE, RunStatus.PAUSED)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Pause, escalate and cut act on a running debate: not offered once it has ended."""
        if action in ("pause", "escalate", "cut"):
            return self._can_steer()
        return super().check_action(action, parameters)

    def watch_status(self) -> None:
        self.refresh_bindings()  # the footer follows what the keys can do now

    def action_pause(self) -> None:
        if not self._can_steer():
            self.notify("the debate is not running", markup=False, timeout=2)
            return
        engine = self._engine_now
        if engine.paused:
            engine.resume()
        else:
            engine.pause()  # shown at once; the engine stops at the next turn
        self.status = RunStatus(engine.status)

    def action_escalate(self) -> None:
        """Asks first: escalating stops the debate and cancels the turns being spoken."""
        if not self._can_steer():
            self.notify("nothing to escalate", markup=False, timeout=2)
            return

        def answered(yes: bool | None) -> None:
            if yes and self._can_steer():
                self._engine_now.escalate()

        self._ask_first(
            GuardModal(
                "Escalate to the operator?",
                "The debate stops now, unresolved; turns being spoken are cancelled. "
                "You then decide, or add a round.",
                "Escalate",
                stay=self._staying(),
            ),
            answered,
        )

    def action_decide(self) -> None:
        if self.engine is None:
            return
        if self.decision is not None and self.decision.decision != ESCALATE:
            self.notify("already decided", markup=False, timeout=2)
            return
        unresolved = self.engine.status == RunStatus.AWAITING_OPERATOR
        self.open_decide(unresolved=unresolved, rule=self.decision.rule if self.decision else "")

    def open_decide(self, *, unresolved: bool, rule: str = "") -> None:
        summary = ""
        if unresolved:
            summary = f"The debate ended unresolved ({rule or 'escalate'})."
            tally = self.tally_panel.tally
            if tally and self.protocol_class.shows_votes:
                summary += " Tally: " + ", ".join(f"{k} {v}" for k, v in tally.items())
        open_modal = self._decide_modal
        if open_modal is not None:  # one modal at a time; an escalation updates it in place
            if unresolved and not open_modal.unresolved:
                self.call_later(open_modal.escalated, summary, self._vetoes())
            return
        modal = DecideModal(
            self.spec.debate.vote_options or list(self.tally_panel.tally),
            unresolved=unresolved,
            allow_extend=unresolved,
            summary=summary,
            vetoes=self._vetoes(),
            apply=self._apply_decision,
            value_prompt=self.protocol_class.value_prompt(self.spec),
        )
        self._decide_modal = modal
        self.app.push_screen(modal, self._decided)

    def _vetoes(self) -> dict[str, str]:
        """The votes the protocol would refuse now, and why (blocking mode), shown disabled."""
        if self.engine is None:
            return {}
        vetoes = {}
        for vote in self.spec.debate.vote_options or list(self.tally_panel.tally):
            try:
                veto = self.engine.protocol.operator_veto(self.engine.state, vote)
            except Exception:  # a protocol bug must not keep the operator from deciding
                veto = None
            if veto:
                vetoes[vote] = clean_line(veto)
        return vetoes

    def _apply_decision(self, vote: str, rationale: str) -> str | None:
        """Called by the modal on confirm; returns the engine's refusal, or None when applied."""
        if self.engine is None:
            return "the debate is not running"
        try:
            self.engine.decide(vote, rationale)
        except ValueError as err:
            return str(err)
        return None

    def _decided(self, result: DecideResult | None) -> None:
        self._decide_modal = None
        if result is None:
            return
        if result.extend:
            engine = self._engine_now
            if engine.status != RunStatus.AWAITING_OPERATOR:
                return
            engine.extend()
            self.decision = None
            self.tally_panel.verdict = None
            self.drive()
        # otherwise the modal has already applied the decision through the engine

    def open_budget(self, result: ResultRecord) -> None:
        """A cap ended the debate: the operator raises it and goes on, or decides."""
        key = str(result.get("budget_exhausted", ""))
        spent = float(result.get("budget_spent", 0))
        cap = float(result.get("budget_cap", 0))

        def answered(raised: RaiseResult | None) -> None:
            if raised is None or self.engine is None:
                self.open_decide(unresolved=True, rule=DecisionRule.BUDGET_EXHAUSTED)
                return
            scope, name = parse_cap(key)
            try:
                self.engine.raise_budget(name, raised.value, None if scope == SESSION else scope)
            except ValueError as err:
                self.notify(str(err), severity="error", markup=False)
                self.open_budget(result)
                return
            self.decision = None
            self.tally_panel.verdict = None
            self.drive()

        self.app.push_screen(BudgetModal(key, spent, cap), answered)

    # ------------------------------------------------------------------ cuts
    def action_cut(self, whole_phase: bool) -> None:
        """Cut the speaking turn (the pane shown, else the first speaking), or all of them,
        once the operator confirms; a cut turn already waiting is offered again at once."""
        engine = self.engine
        if engine is None:
            return
        if engine.awaiting_cut:
            self._ask_cut()
            return
        speaking = [slot.speaker for slot in engine.player.speaking]
        if not speaking:
            self.notify("no turn is being spoken", markup=False, timeout=2)
            return
        # The pane on screen in the narrow layout; every pane shows in the wide one.
        shown = self.shown_speaker() if self.has_class("-narrow") else None
        speaker = None if whole_phase else (shown if shown in speaking else speaking[0])
        who = "every turn being spoken" if speaker is None else f"{clean_line(speaker)}'s turn"

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            cut = engine.cut(speaker)
            if not cut and not engine.awaiting_cut:
                self.notify("the turn ended before the cut", markup=False, timeout=3)
                return
            for slot in cut:
                self.timeline.mark(slot.index, "failed")
            self._ask_cut()

        self._ask_first(
            GuardModal(
                f"Cut {who}?",
                "The call stops now; the words spoken so far are kept on record. "
                "You then redo it (with a note), skip it, or replace the model.",
                "Cut",
                stay=self._staying(),
            ),
            answered,
        )

    def _staying(self) -> str:
        """The guard's answer that acts on nothing: it keeps the pause when paused."""
        return "Stay paused" if self._engine_now.paused else "Keep running"

    def _ask_first(self, question: GuardModal, answered: Callable[[bool | None], None]) -> None:
        """One question at a time: a key typed again before the first shows asks nothing."""
        if not any(isinstance(s, GuardModal) for s in self.app.screen_stack):
            self.app.push_screen(question, answered)

    def _ask_cut(self) -> None:
        engine = self._engine_now
        waiting = engine.awaiting_cut
        if not waiting:
            return
        turns = {slot.index for slot in waiting}
        words = sum(
            len(str(a.get("partial", "")).split())
            for a in engine.operator.actions
            if a.get("action") == OperatorAction.CUT and a.get("turn") in turns
        )

        def answered(result: CutResult | None) -> None:
            if result is None:
                self.notify("the cut turn waits: x to choose", markup=False, timeout=3)
                return
            if result.action == CutAction.REPLACE and result.model:
                for slot in engine.awaiting_cut:
                    self.pane(slot.speaker).model = result.model
            engine.answer_cut(result.choice())

        self.app.push_screen(CutModal([slot.speaker for slot in waiting], words), answered)

    def action_follow(self) -> None:
        """Every pane follows its newest words again (scrolling up had stopped it)."""
        for pane in self.query(DebaterPane):
            pane.follow()

    def action_edit_spec(self) -> None:
        """``E``: the spec file in ``$EDITOR``, then checked. This run keeps the spec it
        started with (the session file records it); the edits are for the next run.

        The editor holds the terminal and the event loop until it exits, so a running
        debate is paused first, and the editor opens once no model call is under way
        (a stream stalled behind it could time out and cost a retry).
        """
        if self.spec_source is None:
            self.notify(
                "this debate's spec is the copy in its session file; there is no spec file to edit",
                markup=False,
            )
            return
        engine = self.engine
        if engine is None or (not engine.turn_under_way and not self._can_steer()):
            self._edit_spec_now()
            return
        if self._can_steer() and not engine.paused:
            self.action_pause()
        if not engine.turn_under_way:
            self._edit_spec_now()
            return
        if self._edit_waiting is None:
            self.notify(
                "paused: the editor opens when the turn being spoken ends (p resumes the debate)",
                markup=False,
                timeout=5,
            )
            self._edit_waiting = self.set_interval(0.1, self._edit_when_quiet)

    def _edit_when_quiet(self) -> None:
        if self.engine is not None and self.engine.turn_under_way:
            return
        if self._edit_waiting is not None:
            self._edit_waiting.stop()
            self._edit_waiting = None
        self._edit_spec_now()

    def _edit_spec_now(self) -> None:
        from tui.app.editor import checked, edit

        path = Path(str(self.spec_source))
        problem = edit(self.app, path)
        if problem is not None:
            self.notify(problem, severity="warning", markup=False, timeout=10)
            return
        if checked(self.app, path, self.moot.allow_read):
            self.notify(
                f"{shorten(path.name, 60)} is valid; this debate keeps the spec it started "
                "with, the next run uses the edits",
                markup=False,
                timeout=10,
            )

    def action_note(self) -> None:
        engine = self.engine
        if engine is None:
            return

        def noted(text: str | None) -> None:
            if text:
                try:
                    engine.note(text)
                except ValueError as err:
                    self.notify(str(err), severity="error", markup=False)

        self.app.push_screen(NoteModal(), noted)

    # ------------------------------------------------------- outcome, shutdown
    @property
    def session_path(self) -> Path | None:
        return self.path

    def exit_code(self) -> ExitCode:
        """What quitting now tells the shell, read from the run's decision and status."""
        if self.decision is not None:
            return ExitCode.UNRESOLVED if self.decision.decision == ESCALATE else ExitCode.DECIDED
        if self.status == RunStatus.ENDED:  # the engine stopped without a decision
            return ExitCode.UNRESOLVED
        return ExitCode.INTERRUPTED

    def _notify_warning(self, line: str) -> None:
        """A notify warning as a toast, from the delivery's thread too; stderr once the app is gone."""

        def show() -> None:
            self.notify(shorten(line, 600), severity="warning", markup=False, timeout=20)

        if threading.current_thread() is threading.main_thread():
            show()
            return
        try:
            self.app.call_from_thread(show)
        except RuntimeError:  # the console has closed; the thread finishes on its own
            print(line, file=sys.stderr)

    def close_session(self) -> None:
        self.workers.cancel_node(self)
        if self._finish_trace is not None:
            self._finish_trace()
            self._finish_trace = None
        if self.session is not None:
            if self.session.tools is not None:  # stops the MCP servers the run started
                asyncio.get_running_loop().create_task(self.session.tools.aclose())
            self.session.close()
            self.session = None

    def on_unmount(self) -> None:
        self.close_session()


def _error_text(err: BaseException) -> str:
    if isinstance(err, MootInputError) and err.problems:
        return "; ".join(err.problems)
    return str(err)

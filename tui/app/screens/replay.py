"""Replay a saved session: the live layout driven by recorded turns, no model calls."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.binding import Binding
from textual.timer import Timer

from tui.app.components.header import REPLAY
from tui.app.components.pane import MAX_CARDS, DebaterPane
from tui.app.components.tally import Verdict
from tui.app.messages import SessionChosen
from tui.app.screens.debate import DebateScreen
from tui.app.screens.modals import JumpModal
from tui.engine.basics.errors import MootInputError, SessionError
from tui.engine.core import tally as tally_rules
from tui.engine.core.records import Turn
from tui.engine.record.fork import fork
from tui.engine.record.replay import protocol_at
from tui.engine.record.session import SessionData
from tui.render.textsafe import shorten

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


class ReplayScreen(DebateScreen):
    BINDINGS = [
        Binding("right,l", "step(1)", "Step →"),
        Binding("left,h", "step(-1)", "← Back"),
        Binding("space", "play", "Play/stop"),
        Binding("plus,equals_sign", "faster", "Faster"),
        Binding("minus", "slower", "Slower"),
        Binding("g", "jump", "Go to turn"),
        Binding("k", "fork", "Fork here"),
        Binding("home", "goto(0)", "Start", show=False),
        Binding("end", "goto_end", "End", show=False),
    ]

    def __init__(self, data: SessionData, *, start_at: int = 0, speed: float = 1.0) -> None:
        super().__init__(data.spec)
        self.data = data
        self.recorded = list(data.turns)
        self.cursor = 0
        self.start_at = max(0, min(start_at, len(self.recorded)))
        self.speed = speed
        self.playing = False
        self._timer: Timer | None = None
        # Keys and the play timer run in different tasks; one move at a time, or two
        # moves from the same cursor would both add its next turn.
        self._moving = asyncio.Lock()
        self.set_reactive(DebateScreen.status, REPLAY)

    async def on_mount(self) -> None:
        self.timeline.add_slots(
            [(t.index, t.round, t.phase, t.speaker, t.target) for t in self.recorded]
        )
        await self.goto(self.start_at)

    # -------------------------------------------------------------- drawing
    def _max_rounds(self) -> int:
        result = self.data.result or {}
        return int(result.get("max_rounds", self.spec.max_rounds))

    async def goto(self, n: int) -> None:
        """Show the debate as it stood after ``n`` recorded turns."""
        async with self._moving:
            await self._show(n)

    async def step(self, delta: int) -> None:
        """``delta`` turns on (or back) from wherever the last move left the cursor."""
        async with self._moving:
            await self._show(self.cursor + delta)

    async def _show(self, n: int) -> None:
        n = max(0, min(n, len(self.recorded)))
        if n == self.cursor + 1:
            await self._apply(self.recorded[self.cursor])
            self.cursor = n
        elif n != self.cursor or n == 0:
            for pane in self.query(DebaterPane):
                await pane.reset()
            shown = self.recorded[:n]
            for speaker in {t.speaker for t in shown}:
                mine = [t for t in shown if t.speaker == speaker]
                pane = self.pane(speaker)
                for t in mine[:-MAX_CARDS]:
                    pane.count(t)
                for t in mine[-MAX_CARDS:]:
                    await pane.add_card(t)
            self.cursor = n
        self.turns = self.recorded[: self.cursor]
        self.actions = [a for a in self.data.actions if int(a.get("after_turn", 0)) <= self.cursor]
        self._refresh_side()

    async def _apply(self, turn: Turn) -> None:
        await self.pane(turn.speaker).add_card(turn)

    def _refresh_side(self) -> None:
        shown = self.recorded[: self.cursor]
        for t in self.recorded:
            if t.index <= self.cursor:  # turn numbers are 1-based
                status = "invalid" if t.invalid else "done"
            else:
                status = "waiting"
            self.timeline.mark(t.index, status, render=False)
        current = self.cursor or None  # the last turn shown
        self.timeline.set_current(current)
        latest: dict[str, str] = {}
        for t in shown:
            if t.vote and not t.invalid:
                latest[t.speaker] = t.vote
        self.tally_panel.tally = tally_rules.count(latest, self.spec.debate.vote_options)
        last = shown[-1] if shown else None
        self.header.round = last.round if last else 0
        self.header.max_rounds = self._max_rounds()
        self.header.phase = last.phase if last else ""
        self.header.extra = (
            f"turn {self.cursor}/{len(self.recorded)} · "
            f"{'playing' if self.playing else 'stopped'} ×{self.speed:g}"
            if self.recorded
            else "no turns recorded"
        )
        if self.verifying:
            self.refresh_verify(protocol_at(self.spec, shown), shown)
        result = self.data.result
        if self.cursor >= len(self.recorded) and result and result.get("decision"):
            self.tally_panel.verdict = Verdict(
                str(result["decision"]),
                str(result.get("decision_rule", "")),
                str(result.get("decided_by", "")),
                result.get("rationale"),
                tuple(
                    f"outcome {o.get('at')}: {o.get('outcome')} — {o.get('note')}"
                    for o in self.data.outcomes
                ),
            )
            if "vote_tally" in result:
                self.tally_panel.tally = result["vote_tally"]
        else:
            self.tally_panel.verdict = None

    # ------------------------------------------------------------- controls
    async def action_step(self, delta: int) -> None:
        await self.step(delta)

    async def action_goto(self, n: int) -> None:
        await self.goto(n)

    async def action_goto_end(self) -> None:
        await self.goto(len(self.recorded))

    def action_play(self) -> None:
        if not self.recorded:
            self.notify("nothing to play: the session has no turns", markup=False, timeout=3)
            return
        if self.playing:
            self._stop_playing()
        else:
            if self.cursor >= len(self.recorded):
                self.call_later(self.goto, 0)
            self.playing = True
            self._restart_timer()
        self._refresh_side()

    def _restart_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_interval(1.0 / self.speed, self._tick) if self.playing else None

    def _stop_playing(self) -> None:
        self.playing = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    async def _tick(self) -> None:
        if self.cursor >= len(self.recorded):
            self._stop_playing()
            self._refresh_side()
            return
        await self.step(1)

    def _set_speed(self, step: int) -> None:
        i = min(range(len(SPEEDS)), key=lambda k: abs(SPEEDS[k] - self.speed))
        self.speed = SPEEDS[max(0, min(len(SPEEDS) - 1, i + step))]
        if self.playing:
            self._restart_timer()
        self._refresh_side()

    def action_faster(self) -> None:
        self._set_speed(1)

    def action_slower(self) -> None:
        self._set_speed(-1)

    @property
    def session_path(self) -> Path | None:
        return self.data.path

    def action_jump(self) -> None:
        def jumped(n: int | None) -> None:
            if n is not None:
                self.call_later(self.goto, n)

        self.app.push_screen(JumpModal(len(self.recorded)), jumped)

    def action_fork(self) -> None:
        """Fork the session after the turn shown into a new file, and go on with it live."""
        source = self.data.path
        try:
            path = fork(source, self.cursor, None, [])
        except (MootInputError, SessionError, OSError) as err:
            problems = getattr(err, "problems", None) or [str(err)]
            self.notify(
                shorten(f"fork: {'; '.join(problems)}", 600), severity="error", markup=False
            )
            return
        self.notify(
            shorten(f"forked turns 1 to {self.cursor} into {path}", 600), markup=False, timeout=8
        )
        self.post_message(SessionChosen("resume", str(path)))

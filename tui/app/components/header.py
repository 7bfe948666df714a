"""The debate header: title, protocol, round, phase and the run status.

Round, phase, the extra note and the status are reactive: the screen assigns
them (the status is bound to the screen's own) and the watchers redraw.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.reactive import var
from textual.widgets import Static

from tui.engine.vocab import RunStatus
from tui.render.textsafe import clean_line, shorten

REPLAY = "REPLAY"  # the replay screen's badge: a saved debate, not a run

STATUS_LABEL = {
    RunStatus.READY: "READY",
    RunStatus.LIVE: "● LIVE",
    RunStatus.PAUSED: "❚❚ PAUSED",
    RunStatus.AWAITING_OPERATOR: "◆ AWAITING OPERATOR",
    RunStatus.ENDED: "■ ENDED",
    REPLAY: "▶ REPLAY",
}


class DebateHeader(Horizontal):
    """Two lines: the facts of the debate, then the motion."""

    round: var[int] = var(0, init=False)
    max_rounds: var[int] = var(0, init=False)
    phase: var[str] = var("", init=False)
    extra: var[str] = var("", init=False)
    status: var[str] = var(str(RunStatus.READY), init=False)

    def __init__(self, title: str, protocol: str, motion: str, max_rounds: int) -> None:
        super().__init__()
        self.debate_title = title
        self.protocol = protocol
        self.motion = motion
        self.set_reactive(DebateHeader.max_rounds, max_rounds)

    def compose(self) -> ComposeResult:
        yield Static(id="facts", markup=False)
        yield Static(id="status", markup=False)

    def on_mount(self) -> None:
        self._show_facts()
        self._show_status()

    # Watchers run from the first assignment on; before mount there is nothing to draw.
    def watch_round(self) -> None:
        if self.is_mounted:
            self._show_facts()

    def watch_max_rounds(self) -> None:
        if self.is_mounted:
            self._show_facts()

    def watch_phase(self) -> None:
        if self.is_mounted:
            self._show_facts()

    def watch_extra(self) -> None:
        if self.is_mounted:
            self._show_facts()

    def watch_status(self) -> None:
        if self.is_mounted:
            self._show_status()

    def _show_status(self) -> None:
        widget = self.query_one("#status", Static)
        for name in STATUS_LABEL:
            widget.set_class(name == self.status, f"-{name.lower()}")
        widget.update(Content(STATUS_LABEL.get(self.status, clean_line(self.status))))

    def _show_facts(self) -> None:
        sep = (" │ ", "$text-muted")
        parts: list[tuple[str, str] | str] = [
            ("moot", "bold $accent"),
            sep,
            (shorten(self.debate_title, 70), "bold"),
            sep,
            clean_line(self.protocol),
            sep,
            f"round {self.round}/{self.max_rounds}" if self.round else "not started",
        ]
        if self.phase:
            parts += [sep, ("phase ", "$text-muted"), (clean_line(self.phase), "bold")]
        if self.extra:
            parts += [sep, (self.extra, "$secondary")]
        parts += ["\n", ("motion ", "$text-muted"), (shorten(self.motion, 150), "italic")]
        self.query_one("#facts", Static).update(Content.assemble(*parts))

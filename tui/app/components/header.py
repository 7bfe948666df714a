"""The debate header: title, protocol, round, phase and the run status."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static

from tui.textsafe import clean_line, shorten

STATUS_LABEL = {
    "READY": "READY",
    "LIVE": "● LIVE",
    "PAUSED": "❚❚ PAUSED",
    "AWAITING_OPERATOR": "◆ AWAITING OPERATOR",
    "ENDED": "■ ENDED",
    "REPLAY": "▶ REPLAY",
}


class DebateHeader(Horizontal):
    """Two lines: the facts of the debate, then the motion."""

    DEFAULT_CSS = """
    DebateHeader { height: 2; background: $panel; }
    DebateHeader #facts { width: 1fr; padding: 0 1; }
    DebateHeader #status { width: auto; padding: 0 1; text-style: bold; }
    DebateHeader #status.-live { background: $success; color: $background; }
    DebateHeader #status.-paused { background: $warning; color: $background; }
    DebateHeader #status.-awaiting_operator { background: $accent; color: $background; }
    DebateHeader #status.-ended { background: $primary-muted; }
    DebateHeader #status.-replay { background: $secondary; color: $background; }
    """

    def __init__(self, title: str, protocol: str, motion: str) -> None:
        super().__init__()
        self.debate_title = title
        self.protocol = protocol
        self.motion = motion
        self.round = 0
        self.max_rounds = 0
        self.phase = ""
        self.status = "READY"
        self.extra = ""

    def compose(self) -> ComposeResult:
        yield Static(id="facts", markup=False)
        yield Static(id="status", markup=False)

    def on_mount(self) -> None:
        self.refresh_facts()

    def set_progress(
        self, round_no: int | None = None, max_rounds: int | None = None, phase: str | None = None
    ) -> None:
        if round_no is not None:
            self.round = round_no
        if max_rounds is not None:
            self.max_rounds = max_rounds
        if phase is not None:
            self.phase = phase
        self.refresh_facts()

    def set_status(self, status: str) -> None:
        self.status = status
        widget = self.query_one("#status", Static)
        for name in STATUS_LABEL:
            widget.set_class(name == status, f"-{name.lower()}")
        widget.update(Content(STATUS_LABEL.get(status, clean_line(status))))

    def set_extra(self, extra: str) -> None:
        self.extra = extra
        self.refresh_facts()

    def refresh_facts(self) -> None:
        sep = (" │ ", "$text-muted")
        parts: list[tuple[str, str] | str] = [
            ("moot", "bold $accent"),
            sep,
            (shorten(self.debate_title, 70), "bold"),
            sep,
            clean_line(self.protocol),
            sep,
            f"round {self.round}/{self.max_rounds}",
        ]
        if self.phase:
            parts += [sep, ("phase ", "$text-muted"), (clean_line(self.phase), "bold")]
        if self.extra:
            parts += [sep, (self.extra, "$secondary")]
        parts += ["\n", ("motion ", "$text-muted"), (shorten(self.motion, 150), "italic")]
        self.query_one("#facts", Static).update(Content.assemble(*parts))
        if self.status:
            self.set_status(self.status)

"""The debate header: title, protocol, round, phase and the run status.

Round, phase, the extra note and the status are reactive: the screen assigns
them (the status is bound to the screen's own) and the watchers redraw.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.reactive import var
from textual.widgets import Static

from tui.engine.basics.vocab import RunStatus
from tui.render.textsafe import clean_line, shorten

Fact = list[tuple[str, str] | str]  # one fact of the header's line, as Content parts

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
            self._show_facts()  # the badge's width is the facts line's to give

    def _show_status(self) -> None:
        widget = self.query_one("#status", Static)
        for name in STATUS_LABEL:
            widget.set_class(name == self.status, f"-{name.lower()}")
        widget.update(Content(STATUS_LABEL.get(self.status, clean_line(self.status))))

    def on_resize(self) -> None:
        self._show_facts()  # the title and the motion are cut to the new width

    def _facts_width(self) -> int:
        """The cells the facts line has: the header less the status badge and paddings."""
        label = STATUS_LABEL.get(self.status, clean_line(self.status))
        return self.size.width - (cell_len(label) + 2) - 2

    def _show_facts(self) -> None:
        """One line of facts that never wraps: at a narrow width the title is cut
        first, then the brand and the protocol go, so "round 1/2" stays whole."""
        width = self._facts_width()
        sep = (" │ ", "$text-muted")
        facts: list[Fact] = [
            [f"round {self.round}/{self.max_rounds}" if self.round else "not started"]
        ]
        if self.phase:
            facts.append([("phase ", "$text-muted"), (clean_line(self.phase), "bold")])
        if self.extra:
            facts.append([(self.extra, "$secondary")])
        brand: Fact = [("moot", "bold $accent")]
        protocol: Fact = [clean_line(self.protocol)]
        title = clean_line(self.debate_title)
        room = 70
        ways: list[tuple[list[Fact], list[Fact]]] = [
            ([brand], [protocol]),
            ([], [protocol]),
            ([], []),
        ]
        for before, after in ways:
            fixed = sum(_cells(fact) + 3 for fact in [*before, *after, *facts])  # + a separator
            room = min(70, width - fixed) if width > 0 else 70
            if room >= min(MIN_TITLE, len(title)):
                break
        shown_title: Fact = [(shorten(title, max(1, room)), "bold")]
        head: list[Fact] = [*before, shown_title, *after]
        parts: list[tuple[str, str] | str] = []
        for fact in [*head, *facts]:
            if parts:
                parts.append(sep)
            parts += fact
        motion = max(10, min(150, width - len("motion "))) if width > 0 else 150
        parts += ["\n", ("motion ", "$text-muted"), (shorten(self.motion, motion), "italic")]
        self.query_one("#facts", Static).update(Content.assemble(*parts))


MIN_TITLE = 16  # below this the brand and then the protocol give way to the title


def _cells(fact: Fact) -> int:
    return sum(cell_len(part if isinstance(part, str) else part[0]) for part in fact)

"""The debate layout shared by the live screen and the replay screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.events import Mount
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer

from tui.app.components.header import DebateHeader
from tui.app.components.pane import DebaterPane
from tui.app.components.tally import TallyPanel
from tui.app.components.timeline import Timeline
from tui.app.components.verify import ChallengePanel, JudgePanel, RubricPanel
from tui.engine.protocols.challenge import ChallengeProtocol
from tui.engine.protocols.refine import RefineProtocol
from tui.engine.vocab import RunStatus

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from tui.app.app import MootApp
    from tui.engine.protocols.base import Protocol
    from tui.engine.records import Turn
    from tui.engine.spec import Spec


def grid_columns(n: int) -> int:
    if n <= 3:
        return max(1, n)
    if n == 4:
        return 2
    return 3


class DebateScreen(Screen[None]):
    """Header, one pane per debater, the timeline and the tally.

    ``status`` is the screen's one copy of the run status (the live screen
    follows the engine's; a replay shows ``REPLAY``); the header is bound to it.
    """

    BINDINGS = [
        Binding("t", "transcript", "Transcript"),
        Binding("slash", "search", "Search"),
        Binding("escape", "back", "Home"),
    ]

    status: var[str] = var(str(RunStatus.READY), init=False)

    def __init__(self, spec: Spec) -> None:
        super().__init__()
        self.spec = spec
        self.turns: list[Turn] = []
        self.actions: list[dict[str, Any]] = []

    @property
    def moot(self) -> MootApp:
        """The app, typed: debate screens only ever run inside the moot console."""
        from tui.app.app import MootApp

        app = self.app
        if not isinstance(app, MootApp):
            raise TypeError(f"a debate screen needs the moot console, not {type(app).__name__}")
        return app

    def compose(self) -> ComposeResult:
        d = self.spec.debate
        yield DebateHeader(d.title, d.protocol, d.motion, self.spec.max_rounds).data_bind(
            DebateScreen.status
        )
        with Horizontal(id="body"):
            with Grid(id="panes"):
                for debater in self.spec.debaters:
                    yield DebaterPane(
                        debater.id, debater.model, debater.resolved_family, debater.role
                    )
            with Vertical(id="side"):
                yield Timeline(id="timeline")
                if d.protocol == "challenge":
                    yield ChallengePanel(id="challenges")
                elif d.protocol == "refine":
                    yield JudgePanel(id="judges")
                if self.spec.rubric is not None:
                    yield RubricPanel(id="rubric")
                yield TallyPanel(
                    list(d.votes),
                    len(self.spec.voters),
                    self.spec.threshold,
                    id="tally",
                    bars=self.spec.protocol_class.shows_votes,
                )
        yield Footer()

    @property
    def verifying(self) -> bool:
        """Whether this debate has verification views (challenge, refine or a rubric)."""
        return not self.spec.protocol_class.shows_votes or self.spec.rubric is not None

    @on(Mount)
    def _lay_out(self) -> None:
        """Grid and colours; Textual calls this after a subclass's own ``on_mount``."""
        self.set_class(self.verifying, "-verify")
        grid = self.query_one("#panes", Grid)
        n = len(self.spec.debaters)
        cols = grid_columns(n)
        grid.styles.grid_size_columns = cols
        grid.styles.grid_size_rows = (n + cols - 1) // cols
        self.apply_colors()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.apply_colors())

    def apply_colors(self) -> None:
        colors = self.moot.debater_colors()
        for i, pane in enumerate(self.query(DebaterPane)):
            pane.set_color(colors[i % len(colors)])

    # ------------------------------------------------------------ accessors
    @property
    def header(self) -> DebateHeader:
        return self.query_one(DebateHeader)

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    @property
    def tally_panel(self) -> TallyPanel:
        return self.query_one(TallyPanel)

    def refresh_verify(self, protocol: Protocol | None, turns: Sequence[Turn]) -> None:
        """Redraw the verification views from the protocol's state and the turns so far."""
        if isinstance(protocol, ChallengeProtocol):
            for challenges in self.query(ChallengePanel):
                challenges.update_from(protocol, self.spec.debate.mode)
        if isinstance(protocol, RefineProtocol):
            for judges in self.query(JudgePanel):
                judges.update_from(protocol, turns)
        for rubric in self.query(RubricPanel):
            rubric.update_from(turns, self.spec)

    @property
    def session_path(self) -> Path | None:
        """The session file shown (a live screen has none until its session starts)."""
        raise NotImplementedError

    def close_session(self) -> None:
        """Let go of the session file; only a live screen holds one open."""

    def pane(self, speaker: str) -> DebaterPane:
        return self.query_one(f"#pane-{speaker}", DebaterPane)

    def action_transcript(self, search: bool = False) -> None:
        from tui.app.screens.transcript import TranscriptScreen

        screen = TranscriptScreen(self.spec, list(self.turns), list(self.actions), search=search)
        self.app.push_screen(screen)

    def action_search(self) -> None:
        """``/``: the transcript, with its search field open."""
        self.action_transcript(search=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":  # Esc means "home" only where there is a home to go back to
            return self.moot.opened_from_home()
        return True

    def action_back(self) -> None:
        """Esc: back to the home screen; a running debate asks first (it stops here)."""
        from tui.app.app import resume_hint
        from tui.app.screens.modals import ConfirmModal

        running = self.moot.running_debate()
        if running is not self:
            self.moot.go_home()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.moot.go_home()

        question = "Leave the running debate? It stops here."
        self.app.push_screen(ConfirmModal(question, resume_hint(running.path), "Leave"), answered)

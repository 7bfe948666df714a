"""The debate layout shared by the live screen and the replay screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.content import Content
from textual.events import Mount, Resize
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Static

from tui.app.components.header import DebateHeader
from tui.app.components.key_footer import KeyFooter
from tui.app.components.pane import DebaterPane
from tui.app.components.tally import TallyPanel
from tui.app.components.timeline import Timeline
from tui.app.components.verify import (
    DistributionPanel,
    FindingsPanel,
    JudgePanel,
    RubricPanel,
    ViewPanel,
)
from tui.app.screens.too_small import NARROW_BELOW
from tui.engine.basics.redact import Redactor
from tui.engine.basics.vocab import RunStatus
from tui.render.textsafe import shorten

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from tui.app.app import MootApp
    from tui.engine.core.records import Turn
    from tui.engine.protocols.base import Protocol
    from tui.engine.specs.spec import Spec

# The generic panels a protocol names in its ``views``, beside the tally and the rubric.
VIEW_PANELS: dict[str, type[ViewPanel]] = {
    p.VIEW: p for p in (FindingsPanel, JudgePanel, DistributionPanel)
}


def grid_columns(n: int) -> int:
    if n <= 3:
        return max(1, n)
    if n == 4:
        return 2
    return 3


CHECKS = "checks"  # the narrow layout's stop for the verification views


class DebateScreen(Screen[None]):
    """Header, one pane per debater, the timeline and the tally.

    ``status`` is the screen's one copy of the run status (the live screen
    follows the engine's; a replay shows ``REPLAY``); the header is bound to it.
    Below ``NARROW_BELOW`` columns (class ``-narrow``) the timeline and tally fold
    into a few lines and one pane shows at full width: the speaker's, or the one
    picked with ``[`` / ``]`` (``.`` follows the speaker again). A debate with
    verification views (findings, judges, a rubric) has one more stop in that
    cycle, ``CHECKS``: those views at full width in place of the panes.
    """

    BINDINGS = [  # first in the footer: the keys that matter on a narrow terminal
        Binding("question_mark", "app.help", "Keys"),
        Binding("q", "app.quit", "Quit"),
        Binding("t", "transcript", "Transcript"),
        Binding("slash", "search", "Search"),
        Binding("c", "copy_turn", "Copy turn", show=False),
        Binding("escape", "back", "Home"),
        Binding("left_square_bracket", "cycle_pane(-1)", "Previous debater", show=False),
        Binding("right_square_bracket", "cycle_pane(1)", "Next debater", show=False),
        Binding("full_stop", "follow_speaker", "Follow speaker", show=False),
    ]

    status: var[str] = var(str(RunStatus.READY), init=False)

    def __init__(self, spec: Spec) -> None:
        # Deferred for start-up: the home screen imports this module and loads no protocol
        # until a debate opens (a validated spec has loaded the registry by then).
        from tui.engine.protocols import protocol_class

        super().__init__()
        self.spec = spec
        self.protocol_class = protocol_class(spec)
        self.turns: list[Turn] = []
        self.actions: list[dict[str, Any]] = []
        self.picked: str | None = None  # narrow layout: the pane the operator chose

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
        redact = Redactor.for_spec(self.spec)  # streamed text is shown before it is stored
        with Horizontal(id="body"):
            with Grid(id="panes"):
                for debater in self.spec.debaters:
                    yield DebaterPane(
                        debater.id, debater.model, debater.resolved_family, debater.role, redact
                    )
            with Vertical(id="side"):
                yield Static(id="compact", markup=False)
                yield Timeline(id="timeline")
                for view in self.protocol_class.views:
                    if view in VIEW_PANELS:
                        yield VIEW_PANELS[view](id=view)
                if self.spec.rubric is not None:
                    yield RubricPanel(id="rubric")
                yield TallyPanel(
                    d.vote_options,
                    len(self.spec.voters),
                    self.spec.threshold,
                    id="tally",
                    bars=self.protocol_class.shows_votes,
                    decide=self.protocol_class.votes_decide,
                )
        yield KeyFooter()

    @property
    def verifying(self) -> bool:
        """Whether this debate has verification views (challenge, refine or a rubric)."""
        return not self.protocol_class.shows_votes or self.spec.rubric is not None

    @on(Mount)
    def _lay_out(self) -> None:
        """Grid and colours; Textual calls this after a subclass's own ``on_mount``."""
        self.set_class(self.verifying, "-verify")
        self.fit(self.app.size.width)
        self.apply_colors()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.apply_colors())

    # --------------------------------------------------------- narrow layout
    def on_resize(self, event: Resize) -> None:
        self.fit(event.size.width)

    def fit(self, width: int) -> None:
        """The full layout, or the narrow one (one pane, side panels as lines)."""
        narrow = width < NARROW_BELOW
        changed = narrow != self.has_class("-narrow")
        self.set_class(narrow, "-narrow")
        grid = self.query_one("#panes", Grid)
        n = len(self.spec.debaters)
        cols = 1 if narrow else grid_columns(n)
        grid.styles.grid_size_columns = cols
        grid.styles.grid_size_rows = 1 if narrow else (n + cols - 1) // cols
        self.show_pane()
        if changed:
            self.refresh_bindings()

    def shown_speaker(self) -> str:
        """Narrow layout: the debater whose pane shows (or showed, before ``CHECKS``)."""
        ids = [d.id for d in self.spec.debaters]
        for wanted in (self.picked, self.timeline.latest_speaker):
            if wanted in ids:
                return str(wanted)
        return ids[0]

    @property
    def showing_checks(self) -> bool:
        """Narrow layout: the verification views show in place of the panes."""
        return self.has_class("-narrow") and self.picked == CHECKS

    def show_pane(self) -> None:
        narrow = self.has_class("-narrow")
        shown = self.shown_speaker()
        checks = self.showing_checks
        self.set_class(checks, "-checks")
        for pane in self.query(DebaterPane):
            pane.set_class(narrow and (checks or pane.debater_id != shown), "-folded")
        if narrow:
            self._draw_compact(CHECKS if checks else shown)

    def _draw_compact(self, shown: str) -> None:
        speaking = self.timeline.current_speaker
        parts: list[tuple[str, str] | str | Content] = [
            self.tally_panel.one_line(),
            "\n",
            self.timeline.compact(),
            "\n",
        ]
        for debater in self.spec.debaters:
            label = ("▶" if debater.id == speaking else " ") + shorten(debater.id, 16)
            parts += [(f" {label} ", "bold reverse" if debater.id == shown else "$text-muted"), "│"]
        if self.verifying:
            parts += [(f" {CHECKS} ", "bold reverse" if shown == CHECKS else "$text-muted"), "│"]
        follow = "following the speaker" if self.picked is None else ".: follow the speaker"
        parts.append((f" [ ]: debater · {follow}", "$text-muted"))
        self.query_one("#compact", Static).update(Content.assemble(*parts))

    @on(Timeline.Changed)
    @on(TallyPanel.Changed)
    def _side_changed(self) -> None:
        if self.has_class("-narrow"):
            self.show_pane()

    def action_cycle_pane(self, step: int) -> None:
        stops = [d.id for d in self.spec.debaters] + ([CHECKS] if self.verifying else [])
        at = stops.index(CHECKS if self.showing_checks else self.shown_speaker())
        self.picked = stops[(at + step) % len(stops)]
        self.show_pane()

    def action_follow_speaker(self) -> None:
        self.picked = None
        self.show_pane()

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
        if protocol is not None:
            for panel in self.query(ViewPanel):
                panel.update_from(protocol.view_data(panel.VIEW, turns), turns)
        for rubric in self.query(RubricPanel):
            rubric.update_from(turns, self.spec)

    @property
    def session_path(self) -> Path | None:
        """The session file shown: none here; a live screen has one once its session
        starts, a replay the file it reads."""
        return None

    def close_session(self) -> None:
        """Let go of the session file; only a live screen holds one open."""

    def pane(self, speaker: str) -> DebaterPane:
        return self.query_one(f"#pane-{speaker}", DebaterPane)

    def action_transcript(self, search: bool = False) -> None:
        from tui.app.screens.transcript import TranscriptScreen

        screen = TranscriptScreen(self.spec, list(self.turns), list(self.actions), search=search)
        self.app.push_screen(screen)

    def action_copy_turn(self) -> None:
        """``c``: the newest turn of the debater in focus (or shown), else the newest turn."""
        from tui.app.copying import selected_turn, turn_text

        turn = selected_turn(self)
        if turn is None:
            self.notify("no turn to copy yet", markup=False)
            return
        self.app.copy_to_clipboard(turn_text(turn))
        self.notify(f"copied turn #{turn.index} ({shorten(turn.speaker, 30)})", markup=False)

    def action_search(self) -> None:
        """``/``: the transcript, with its search field open."""
        self.action_transcript(search=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":  # Esc means "home" only where there is a home to go back to
            return self.moot.opened_from_home()
        if action in ("cycle_pane", "follow_speaker"):  # one pane at a time: narrow only
            return self.has_class("-narrow")
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

"""The transcript: every turn so far, in order, with operator actions between."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui.app.components.cards import turn_body, turn_heading
from tui.engine.records import Turn
from tui.engine.spec import Spec
from tui.textsafe import SCREEN_LIMIT, clean_line, shorten

MAX_SHOWN = 400


class TranscriptScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,t,q", "app.pop_screen", "Back"),
        Binding("home", "top", "Top", show=False),
        Binding("end", "bottom", "Bottom", show=False),
    ]

    def __init__(self, spec: Spec, turns: list[Turn], actions: list[dict]) -> None:
        super().__init__()
        self.spec = spec
        self.turns = turns
        self.actions = actions

    def compose(self) -> ComposeResult:
        d = self.spec.debate
        yield Static(
            Content.assemble(
                ("Transcript · ", "bold"),
                shorten(d.title, 80),
                (f" · {len(self.turns)} turns", "$text-muted"),
            ),
            classes="head",
            markup=False,
        )
        with VerticalScroll(id="transcript"):
            if len(self.turns) > MAX_SHOWN:
                yield Static(
                    Content(
                        f"… {len(self.turns) - MAX_SHOWN} earlier turns are in the session file"
                    ),
                    markup=False,
                )
            by_turn: dict[int, list[dict]] = {}
            for a in self.actions:
                by_turn.setdefault(int(a.get("after_turn", 0)), []).append(a)
            shown = self.turns[-MAX_SHOWN:]
            for turn in shown:
                for a in by_turn.pop(turn.index - 1, []):  # after turn N-1, before N
                    yield self._action(a)
                yield Static(
                    Content.assemble(
                        (clean_line(turn.speaker), "bold $accent"),
                        (f" ({shorten(turn.model, 30)})  ", "$text-muted"),
                        *turn_heading(turn),
                        *turn_body(turn, SCREEN_LIMIT),
                    ),
                    classes="entry",
                    markup=False,
                )
            for rest in by_turn.values():
                for a in rest:
                    yield self._action(a)
        yield Footer()

    @staticmethod
    def _action(a: dict) -> Static:
        text = f"operator {clean_line(a.get('action', ''))}"
        for key in ("vote", "text", "rationale", "speaker", "model"):
            if a.get(key):
                text += f" · {key}: {shorten(str(a[key]), 200)}"
        return Static(Content(text), classes="action", markup=False)

    def on_mount(self) -> None:
        self.query_one("#transcript").focus()

    def action_top(self) -> None:
        self.query_one("#transcript", VerticalScroll).scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.query_one("#transcript", VerticalScroll).scroll_end(animate=False)

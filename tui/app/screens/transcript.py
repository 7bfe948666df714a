"""The transcript: every turn so far, in order, with operator actions between."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Input, Static

from tui.app.components.cards import turn_body, turn_heading
from tui.app.components.key_footer import KeyFooter
from tui.engine.core.records import Turn
from tui.engine.specs.spec import Spec
from tui.plural import counted
from tui.render.textsafe import SCREEN_LIMIT, clean_line, shorten

MAX_SHOWN = 400


class TranscriptScreen(Screen[None]):
    """Every turn so far; ``/`` searches it, ``n``/``N`` jump between the matching turns."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("t,q", "app.pop_screen", "Back", show=False),
        Binding("slash", "search", "Search"),
        Binding("n", "next_match(1)", "Next match"),
        Binding("N", "next_match(-1)", "Previous match"),
        Binding("home", "top", "Top", show=False),
        Binding("end", "bottom", "Bottom", show=False),
    ]

    def __init__(
        self, spec: Spec, turns: list[Turn], actions: list[dict[str, Any]], *, search: bool = False
    ) -> None:
        super().__init__()
        self.spec = spec
        self.turns = turns
        self.actions = actions
        self.start_searching = search
        self.searchable: list[tuple[Static, str]] = []
        self.matches: list[Static] = []
        self.match_at = -1

    def compose(self) -> ComposeResult:
        d = self.spec.debate
        yield Static(
            Content.assemble(
                ("Transcript · ", "bold"),
                shorten(d.title, 80),
                (f" · {counted(len(self.turns), 'turn')}", "$text-muted"),
            ),
            classes="head",
            markup=False,
        )
        with VerticalScroll(id="transcript"):
            if len(self.turns) > MAX_SHOWN:
                yield Static(
                    Content(
                        f"… {counted(len(self.turns) - MAX_SHOWN, 'earlier turn')} in the session file"
                    ),
                    markup=False,
                )
            by_turn: dict[int, list[dict[str, Any]]] = {}
            for a in self.actions:
                by_turn.setdefault(int(a.get("after_turn", 0)), []).append(a)
            shown = self.turns[-MAX_SHOWN:]
            for turn in shown:
                for a in by_turn.pop(turn.index - 1, []):  # after turn N-1, before N
                    yield self._action(a)
                yield self._entry(
                    Content.assemble(
                        (clean_line(turn.speaker), "bold $accent"),
                        (f" ({shorten(turn.model, 30)})  ", "$text-muted"),
                        *turn_heading(turn),
                        *turn_body(turn, SCREEN_LIMIT, full=True),
                    ),
                    "entry",
                )
            for rest in by_turn.values():
                for a in rest:
                    yield self._action(a)
        yield Static("", id="search-status", markup=False)
        yield Input(placeholder="search the transcript (Enter: first match)", id="search")
        yield KeyFooter()

    def _entry(self, content: Content, kind: str) -> Static:
        """A turn or an action, remembered with its text for the search."""
        widget = Static(content, classes=kind, markup=False)
        self.searchable.append((widget, content.plain.casefold()))
        return widget

    def _action(self, a: dict[str, Any]) -> Static:
        text = f"operator {clean_line(a.get('action', ''))}"
        for key in ("vote", "text", "rationale", "speaker", "model"):
            if a.get(key):
                text += f" · {key}: {shorten(str(a[key]), 200)}"
        return self._entry(Content(text), "action")

    def on_mount(self) -> None:
        if self.start_searching:
            self.action_search()
        else:
            self.query_one("#transcript").focus()

    # ----------------------------------------------------------------- search
    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.add_class("-open")
        search.focus()

    def action_back(self) -> None:
        """Esc leaves the search field first, then the transcript."""
        search = self.query_one("#search", Input)
        if search.has_focus:
            search.remove_class("-open")
            self.query_one("#transcript").focus()
        else:
            self.app.pop_screen()

    @on(Input.Changed, "#search")
    def find(self, event: Input.Changed) -> None:
        """Mark every turn or action whose text holds the query (case-insensitive)."""
        query = event.value.strip().casefold()
        self.matches = []
        for entry, text in self.searchable:
            hit = bool(query) and query in text
            entry.set_class(hit, "-match")
            entry.remove_class("-current")
            if hit:
                self.matches.append(entry)
        self.match_at = -1
        status = "" if not query else f"{len(self.matches)} matching (n/N: next/previous)"
        self.query_one("#search-status", Static).update(Content(status))

    @on(Input.Submitted, "#search")
    def first_match(self) -> None:
        self.query_one("#transcript").focus()
        self.action_next_match(1)

    def action_next_match(self, step: int) -> None:
        if not self.matches:
            return
        if 0 <= self.match_at < len(self.matches):
            self.matches[self.match_at].remove_class("-current")
        self.match_at = (self.match_at + step) % len(self.matches)
        current = self.matches[self.match_at]
        current.add_class("-current")
        self.query_one("#transcript", VerticalScroll).scroll_to_widget(current, animate=False)
        self.query_one("#search-status", Static).update(
            Content(f"match {self.match_at + 1} of {len(self.matches)} (n/N: next/previous)")
        )

    def action_top(self) -> None:
        self.query_one("#transcript", VerticalScroll).scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.query_one("#transcript", VerticalScroll).scroll_end(animate=False)

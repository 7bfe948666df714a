"""Command palette: operator actions, themes, export, opening sessions."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher
from textual.markup import escape

from tui.render.textsafe import clean_line, shorten


class MootCommands(Provider):
    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        from tui.app.app import MootApp
        from tui.app.screens.live import LiveScreen
        from tui.app.screens.replay import ReplayScreen

        app = self.app
        if not isinstance(app, MootApp):
            return []
        screen = app.debate_screen()
        out: list[tuple[str, Callable[[], object], str]] = []
        if isinstance(screen, LiveScreen):
            out += [
                ("Debate: pause / resume", screen.action_pause, "p — stops at the next turn"),
                ("Debate: escalate to the operator", screen.action_escalate, "e"),
                ("Debate: decide", screen.action_decide, "d — a vote and a rationale"),
                ("Debate: add an operator note", screen.action_note, "n"),
                ("Debate: cut the speaking turn", partial(screen.action_cut, False), "x"),
                ("Debate: cut every turn of the phase", partial(screen.action_cut, True), "X"),
            ]
        if isinstance(screen, ReplayScreen):
            out += [
                ("Replay: play / stop", screen.action_play, "space"),
                ("Replay: jump to a turn", screen.action_jump, "g"),
                ("Replay: fork after this turn", screen.action_fork, "k — goes on live"),
            ]
        if screen is not None:
            out += [
                ("Debate: transcript", screen.action_transcript, "t"),
                ("Copy transcript", app.copy_transcript, "every turn, as plain text"),
                ("Copy turn", screen.action_copy_turn, "c — the focused debater's newest turn"),
            ]
        if app.current_session_path() is not None:
            out += [
                (
                    "Export: Markdown report",
                    partial(app.export, "markdown"),
                    "written next to the session file",
                ),
                (
                    "Export: JSON (result and turns)",
                    partial(app.export, "json"),
                    "written next to the session file",
                ),
                (
                    "Export ADR (architecture decision record)",
                    partial(app.export, "adr"),
                    "MADR 4, as moot export --format adr; written next to the session file",
                ),
            ]
        for name in app.moot_theme_names():
            out.append((f"Theme: {name}", partial(app.switch_theme, name), "remembered"))
        out.append(("Home: examples and saved sessions", app.go_home, ""))
        for row in app.recent_sessions(12):
            label = f"Open session: {shorten(row.title, 50)} · {row.date}"
            out.append((label, partial(app.open_path, "replay", str(row.path)), row.decision))
            out.append(
                (
                    f"Resume session: {shorten(row.title, 50)} · {row.date}",
                    partial(app.open_path, "resume", str(row.path)),
                    row.decision,
                )
            )
        return out

    async def discover(self) -> Hits:
        for text, command, help_text in self._commands():
            if text.startswith(("Open session", "Resume session")):
                continue
            yield DiscoveryHit(Content(text), command, text=text, help=_literal(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, command, help_text in self._commands():
            score = matcher.match(text)
            if score > 0:
                yield Hit(
                    score, _highlight(matcher, text), command, text=text, help=_literal(help_text)
                )


def _literal(text: str) -> str:
    """Textual renders a hit's help as markup: escape it (it may come from a session file)."""
    return escape(clean_line(text))


def _highlight(matcher: Matcher, text: str) -> Content:
    """Like ``Matcher.highlight`` but never parses the (untrusted) text as markup."""
    content = Content(text)
    _, offsets = matcher.fuzzy_search.match(matcher.query, text)
    for offset in offsets:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content

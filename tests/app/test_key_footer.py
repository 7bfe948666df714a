"""The key footer composes again when the keys it shows change, and only then."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Button, Input
from textual.widgets._footer import FooterKey

from tests.app.app_support import make_app, wait_until
from tui.app.components.key_footer import KeyFooter
from tui.app.screens.home import HomeScreen


class Keys(App[None]):
    BINDINGS = [("f2", "pause", "Pause"), ("f3", "resume", "Resume"), ("f4", "save", "Save")]
    paused = False
    saving = True

    def compose(self) -> ComposeResult:
        yield Input(id="first")
        yield Button("second", id="second")
        yield KeyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pause":
            return not self.paused  # shown only while running
        if action == "resume":
            return self.paused
        if action == "save":
            return True if self.saving else None  # None: shown, disabled
        return True


def _shown(app: App[None]) -> list[tuple[str, bool]]:
    """The footer's keys but the command palette's, which every app shows."""
    return [
        (key.description, key.has_class("-disabled"))
        for key in app.query(FooterKey)
        if not key.has_class("-command-palette")
    ]


@pytest.fixture
def compositions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    made: list[int] = []
    real = KeyFooter.compose

    def counted(self: KeyFooter) -> Any:
        if self._bindings_ready:
            made.append(1)
        return real(self)

    monkeypatch.setattr(KeyFooter, "compose", counted)
    return made


async def test_a_focus_change_showing_the_same_keys_composes_nothing(
    compositions: list[int],
) -> None:
    app = Keys()
    async with app.run_test(size=(80, 12)) as pilot:
        await wait_until(pilot, lambda: _shown(app))
        assert _shown(app) == [("Pause", False), ("Save", False)]
        before = len(compositions)
        for _ in range(4):  # Input, Button, Input, Button: each says its bindings changed
            await pilot.press("tab")
        assert app.focused is not None and app.focused.id == "first"
        assert _shown(app) == [("Pause", False), ("Save", False)]
        # A change after them is composed after them, in order: once it shows, any
        # composition the focus changes had asked for would have run before it.
        app.paused = True
        app.refresh_bindings()
        await wait_until(pilot, lambda: _shown(app) == [("Resume", False), ("Save", False)])
        assert len(compositions) == before + 1


async def test_keys_that_change_are_shown_at_once(compositions: list[int]) -> None:
    app = Keys()
    async with app.run_test(size=(80, 12)) as pilot:
        await wait_until(pilot, lambda: _shown(app))
        before = len(compositions)
        app.paused, app.saving = True, False
        app.refresh_bindings()
        await wait_until(pilot, lambda: _shown(app) == [("Resume", False), ("Save", True)])
        assert len(compositions) == before + 1
        await pilot.press("f2")  # hidden now: its action is not offered
        assert _shown(app) == [("Resume", False), ("Save", True)]


async def test_the_home_screen_footer_shows_its_keys_once_composed(tmp_path, moot_dirs):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        footer = app.screen.query_one(KeyFooter)
        await wait_until(pilot, lambda: footer.query(FooterKey))
        shown = [key.description for key in footer.query(FooterKey)]
        await pilot.press("tab")
        await pilot.pause()
        assert [key.description for key in footer.query(FooterKey)] == shown
        assert "Quit" in shown or "quit" in " ".join(shown).lower()

"""The console's size limits, and the screen shown while the terminal is below the minimum."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

MIN_WIDTH = 60
MIN_HEIGHT = 16
NARROW_BELOW = 120  # columns: below this the screens use their narrow layout


def too_small(width: int, height: int) -> bool:
    return width < MIN_WIDTH or height < MIN_HEIGHT


class TooSmallScreen(Screen[None]):
    """A clear message in place of a broken layout; it leaves when the terminal grows."""

    BINDINGS = [Binding("q", "app.quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Static(id="too-small", markup=False)

    def on_mount(self) -> None:
        self.show(*self.app.size)

    def on_screen_resume(self) -> None:
        """Uncovered again (the screens above it closed) after the terminal grew: go."""
        if not too_small(*self.app.size):
            self.dismiss()

    def show(self, width: int, height: int) -> None:
        self.query_one("#too-small", Static).update(
            Content.assemble(
                ("terminal too small", "bold $warning"),
                f"\nneed at least {MIN_WIDTH}×{MIN_HEIGHT}, have {width}×{height}",
                ("\nenlarge the window (q quits)", "$text-muted"),
            )
        )

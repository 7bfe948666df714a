"""The key footer: Textual's ``Footer``, composed again only when the keys it shows change.

Textual's footer removes and mounts a widget per key each time a screen says its bindings
were updated, which it says on every focus change and every ``refresh_bindings``; most
of those leave the same keys shown. That was over half the CPU of opening the home
screen (four compositions of ten keys, three of them alike) and a share of every key
press after. What it shows and how, and a click on a key, are Textual's own.
"""

from __future__ import annotations

from collections.abc import Iterator

from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer


class KeyFooter(Footer):
    """A footer that skips a composition showing the keys it already shows."""

    _shown: object = None

    def _keys(self) -> object:
        """What a composition would show now: each shown key, its label, state and tip."""
        active = self.screen.active_bindings
        keys = tuple(
            (binding.key, binding.action, binding.description, binding.group, enabled, tip)
            for (_node, binding, enabled, tip) in active.values()
            if binding.show
        )
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        return keys, palette[1:] if palette else None, self.show_command_palette, self.compact

    def compose(self) -> Iterator[Widget]:
        if self._bindings_ready:
            self._shown = self._keys()
        yield from super().compose()

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self.call_after_refresh(self._compose_if_changed)

    async def _compose_if_changed(self) -> None:
        if self.is_attached and self._keys() != self._shown:
            await self.recompose()

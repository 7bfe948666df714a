"""The keys screen (``?``): every key the screen underneath answers, and what it does."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Label, Static

from tui.app.screens.modals import _Modal

# Keys Textual itself binds that are not the console's own (focus moves, copy, palette).
_TEXTUAL_KEYS = {"app.focus_next", "app.focus_previous", "screen.copy_text", "app.command_palette"}


def describe(
    active: Mapping[str, ActiveBinding], display: Callable[[Binding], str]
) -> list[tuple[str, str]]:
    """(keys, description) per action, hidden keys included, moot's own first.

    Textual's focus, copy and palette keys are left out; the keys Textual's
    widgets bring (scrolling, lists) follow moot's, which are what a reader looks for.
    """
    keys: dict[tuple[bool, str], list[str]] = {}  # one line per description: q is one Quit
    for active_binding in active.values():
        binding = active_binding.binding
        if binding.action in _TEXTUAL_KEYS or not binding.description:
            continue
        shown = display(binding)
        ours = _declared_by_moot(active_binding.node, binding)
        wanted = keys.setdefault((ours, binding.description), [])
        if shown not in wanted:
            wanted.append(shown)
    ordered = sorted(keys.items(), key=lambda item: not item[0][0])  # stable: moot's first
    return [(" ".join(k), description) for (_ours, description), k in ordered]


def _declared_by_moot(node: object, binding: Binding) -> bool:
    """Whether a class of moot's own (not one it inherits from Textual) binds this action."""
    for cls in type(node).__mro__:
        if not cls.__module__.startswith("tui."):
            continue
        for declared in cls.__dict__.get("BINDINGS", ()):
            action = declared.action if isinstance(declared, Binding) else declared[1]
            if action == binding.action:
                return True
    return False


def key_lines(bindings: list[tuple[str, str]]) -> Content:
    """``key  description`` lines, keys padded to one column."""
    width = max((len(key) for key, _ in bindings), default=0)
    parts: list[tuple[str, str] | str] = []
    for key, description in bindings:
        parts += [(key.ljust(width), "bold $accent"), "  ", description, "\n"]
    return Content.assemble(*parts)


class HelpScreen(_Modal[None]):
    """Every key of the screen it was opened over, from that screen's live bindings."""

    BINDINGS = [Binding("escape,question_mark,q", "cancel", "Close")]

    def __init__(self, bindings: list[tuple[str, str]]) -> None:
        super().__init__()
        self.bindings = bindings

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Label(Content("Keys"), classes="title")
            with VerticalScroll():
                yield Static(key_lines(self.bindings), markup=False, id="help-keys")
            yield Label(Content("Esc, ? or q: close"), classes="hint")

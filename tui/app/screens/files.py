"""Home's file dialogs: a new spec (protocol and file name), renaming and deleting a session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from tui.app.screens.modals import _Modal
from tui.render.textsafe import clean_line, shorten


class NewSpecModal(_Modal[tuple[str, str] | None]):
    """Pick a protocol and name the file; ``moot new`` writes it, then the editor opens."""

    AUTO_FOCUS = "#protocols"

    def __init__(self, protocols: dict[str, str], directory: Path) -> None:
        super().__init__()
        self.protocols = protocols  # name: one line on what it does
        self.directory = directory
        self.named = False  # the operator typed a name: a new protocol no longer renames it

    def compose(self) -> ComposeResult:
        with Vertical(id="new-spec-box"):
            yield Label(Content("New spec"), classes="title")
            yield OptionList(
                *(
                    Option(Content.assemble((name, "bold"), f"  {clean_line(doc)}"), id=name)
                    for name, doc in self.protocols.items()
                ),
                id="protocols",
            )
            yield Input(self._default(next(iter(self.protocols))), id="spec-name")
            yield Static(
                Content(f"written in {shorten(str(self.directory), 60)}, never over a file"),
                classes="hint",
                markup=False,
            )
            yield Label(Content("Enter: write it and open $EDITOR · Esc: cancel"), classes="hint")

    def _default(self, protocol: str) -> str:
        name, n = f"{protocol}.toml", 2
        while (self.directory / name).exists():
            name, n = f"{protocol}-{n}.toml", n + 1
        return name

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if not self.named and event.option.id:
            self.query_one("#spec-name", Input).value = self._default(event.option.id)

    @on(Input.Changed, "#spec-name")
    def _typed(self, event: Input.Changed) -> None:
        protocols = self.query_one("#protocols", OptionList)
        option = protocols.highlighted_option
        self.named = option is None or event.value != self._default(str(option.id))

    @on(OptionList.OptionSelected)
    @on(Input.Submitted)
    def _chosen(self) -> None:
        option = self.query_one("#protocols", OptionList).highlighted_option
        name = self.query_one("#spec-name", Input).value.strip()
        if option is not None and name:
            self.dismiss((str(option.id), name))


class RenameModal(_Modal[str | None]):
    """A session's new file name (in the same folder). A refused name keeps the dialog
    open with the name as typed and the reason, to be corrected."""

    AUTO_FOCUS = "#new-name"

    def __init__(self, path: Path, rename: Callable[[str], str | None]) -> None:
        super().__init__()
        self.path = path
        self.rename = rename  # renames the file; what is wrong with the name, or None

    def compose(self) -> ComposeResult:
        with Vertical(id="rename-box"):
            yield Label(Content(f"Rename {shorten(self.path.name, 60)}"), classes="title")
            yield Input(self.path.name, id="new-name")
            yield Static(Content(""), classes="error", id="rename-error", markup=False)
            yield Label(Content("Enter: rename · Esc: cancel"), classes="hint")

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        name = event.value.strip()
        problem = self.rename(name)
        if problem is None:
            self.dismiss(name)
        else:
            self.show_error(shorten(problem, 400))

    def show_error(self, message: str) -> None:
        self.query_one("#rename-error", Static).update(Content(message))


class DeleteModal(_Modal[bool]):
    """Asks before a session file is deleted: letters do nothing, Enter keeps it."""

    BINDINGS = [
        Binding("escape,n", "answer(False)", "Keep"),
        Binding("left,right,tab,shift+tab", "app.focus_next", "Switch", show=False),
    ]

    def __init__(self, path: Path, title: str) -> None:
        super().__init__()
        self.path = path
        self.session_title = title

    def compose(self) -> ComposeResult:
        with Vertical(id="delete-box"):
            yield Label(Content(f"Delete {shorten(self.path.name, 60)}?"), classes="title")
            yield Static(
                Content(f"{shorten(self.session_title, 80)}\nThe file cannot be brought back."),
                classes="hint",
                markup=False,
            )
            yield Label(Content("Tab, then Enter: delete · Enter or Esc: keep it"), classes="hint")
            with Horizontal(classes="buttons"):
                yield Button(Content("Keep"), id="no", variant="primary")
                yield Button(Content("Delete"), id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

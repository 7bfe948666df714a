"""Modal screens: decide, note, provider failure, jump to a turn."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from tui.engine.turns import FailureAction, FailureChoice
from tui.textsafe import clean_line, shorten

R = TypeVar("R")


@dataclass(frozen=True)
class DecideResult:
    """The decide modal's answer: a decision the engine has accepted, or one more round."""

    vote: str = ""
    rationale: str = ""
    extend: bool = False


class _Modal(ModalScreen[R]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def action_cancel(self) -> None:
        self.dismiss(None)


class DecideModal(_Modal[DecideResult | None]):
    """The operator's call: one of the spec's votes and a rationale (required)."""

    AUTO_FOCUS = "#rationale"  # always start in the rationale (not the first focusable)

    def __init__(
        self,
        votes: list[str],
        *,
        unresolved: bool = False,
        allow_extend: bool = False,
        summary: str = "",
        apply: Callable[[str, str], str | None],
    ) -> None:
        super().__init__()
        self.refused: str | None = None
        self.apply = apply  # applies the decision; returns the engine's refusal, if any
        self.votes = list(votes)
        self.unresolved = unresolved
        self.allow_extend = allow_extend
        self.summary = summary

    def compose(self) -> ComposeResult:
        with Vertical(id="decide"):
            title = "Unresolved: the operator decides" if self.unresolved else "Decide the debate"
            yield Label(Content(title), classes="title")
            if self.summary:
                yield Static(Content(shorten(self.summary, 600)), classes="hint", markup=False)
            with RadioSet(id="votes"):
                for i, vote in enumerate(self.votes):
                    yield RadioButton(Content(clean_line(vote)), value=i == 0, id=f"vote-{i}")
            yield Label(Content("Rationale (required, recorded in the session)"), classes="hint")
            yield Input(placeholder="why this decision", id="rationale")
            yield Static("", classes="error", id="decide-error", markup=False)
            with Horizontal(classes="buttons"):
                if self.allow_extend:
                    yield Button(Content("Add a round"), id="extend", variant="warning")
                yield Button(Content("Cancel"), id="cancel")
                yield Button(Content("Decide"), id="confirm", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#rationale", Input).focus()

    def chosen_vote(self) -> str:
        radio = self.query_one("#votes", RadioSet)
        index = radio.pressed_index
        return self.votes[index if index >= 0 else 0]

    @on(Input.Submitted, "#rationale")
    @on(Button.Pressed, "#confirm")
    def confirm(self) -> None:
        rationale = self.query_one("#rationale", Input).value.strip()
        if not rationale:
            self.query_one("#decide-error", Static).update(
                Content("A rationale is required: say why.")
            )
            self.query_one("#rationale", Input).focus()
            return
        vote = self.chosen_vote()
        refusal = self.apply(vote, rationale)
        if refusal:  # e.g. blocking mode vetoes release: say why, keep the modal open
            self.refused = refusal
            self.query_one("#decide-error", Static).update(Content(shorten(refusal, 400)))
            return
        self.dismiss(DecideResult(vote, rationale))

    @on(Button.Pressed, "#extend")
    def extend(self) -> None:
        self.dismiss(DecideResult(extend=True))

    @on(Button.Pressed, "#cancel")
    def cancel(self) -> None:
        self.dismiss(None)


class NoteModal(_Modal[str | None]):
    """A note the debaters see from their next turn on."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Content("Operator note"), classes="title")
            yield Label(Content("Shown to every debater from the next turn on."), classes="hint")
            yield Input(placeholder="note", id="note")
            with Horizontal(classes="buttons"):
                yield Button(Content("Cancel"), id="cancel")
                yield Button(Content("Add note"), id="confirm", variant="primary")

    @on(Input.Submitted, "#note")
    @on(Button.Pressed, "#confirm")
    def confirm(self) -> None:
        text = self.query_one("#note", Input).value.strip()
        self.dismiss(text or None)

    @on(Button.Pressed, "#cancel")
    def cancel(self) -> None:
        self.dismiss(None)


class FailureModal(_Modal[FailureChoice]):
    """A provider call failed: retry, skip the turn, replace the model, or escalate."""

    BINDINGS = [Binding("escape", "cancel", "Escalate")]

    def __init__(self, speaker: str, model: str, kind: str, message: str) -> None:
        super().__init__()
        self.speaker = speaker
        self.model = model
        self.kind = kind
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(id="failure"):
            yield Label(
                Content.assemble(
                    ("Provider failure: ", "bold $error"),
                    (clean_line(self.speaker), "bold"),
                    (f" ({shorten(self.model, 40)})", "$text-muted"),
                ),
                classes="title",
            )
            yield Static(
                Content.assemble(
                    (f"{clean_line(self.kind)}: ", "bold"), shorten(self.message, 600)
                ),
                markup=False,
            )
            yield Label(Content("Replace with model (for Replace):"), classes="hint")
            yield Input(
                value="", placeholder="e.g. scripted, local, openai/gpt-4o-mini", id="model"
            )
            with Horizontal(classes="buttons"):
                yield Button(Content("Retry"), id="retry", variant="primary")
                yield Button(Content("Skip turn"), id="skip")
                yield Button(Content("Replace model"), id="replace", variant="warning")
                yield Button(Content("Escalate"), id="escalate", variant="error")

    def on_mount(self) -> None:
        self.query_one("#retry", Button).focus()

    def action_cancel(self) -> None:
        self.dismiss(FailureChoice(FailureAction.ESCALATE))

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        action = FailureAction(str(event.button.id))
        if action == FailureAction.REPLACE:
            model = self.query_one("#model", Input).value.strip()
            if not model:
                self.query_one("#model", Input).focus()
                self.notify("Type the model to use first.", severity="warning", markup=False)
                return
            self.dismiss(FailureChoice(action, model))
            return
        self.dismiss(FailureChoice(action))


class JumpModal(_Modal[int | None]):
    """Replay: go to turn N."""

    def __init__(self, total: int) -> None:
        super().__init__()
        self.total = total

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Content(f"Jump to turn (0–{self.total})"), classes="title")
            yield Input(placeholder="turn number", id="turn", type="integer")
            with Horizontal(classes="buttons"):
                yield Button(Content("Cancel"), id="cancel")
                yield Button(Content("Go"), id="confirm", variant="primary")

    @on(Input.Submitted, "#turn")
    @on(Button.Pressed, "#confirm")
    def confirm(self) -> None:
        value = self.query_one("#turn", Input).value.strip()
        try:
            n = int(value)
        except ValueError:
            self.dismiss(None)
            return
        self.dismiss(max(0, min(self.total, n)))

    @on(Button.Pressed, "#cancel")
    def cancel(self) -> None:
        self.dismiss(None)

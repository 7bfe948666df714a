"""Modal screens: decide, a guard before a destructive key, note, provider failure, cut turn,
budget raise, jump to a turn."""

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

from tui.engine.run.turns import CutAction, CutChoice, FailureAction, FailureChoice
from tui.render.textsafe import clean_line, shorten

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
    """The operator's call: one of the spec's votes and a rationale (both required).

    Nothing is pre-selected, so Enter never decides a vote the operator did not
    pick; votes the protocol would refuse are shown disabled with the reason.
    """

    AUTO_FOCUS = "#value, #votes"  # the first there is: a value to type, else the votes

    def __init__(
        self,
        votes: list[str],
        *,
        unresolved: bool = False,
        allow_extend: bool = False,
        summary: str = "",
        vetoes: dict[str, str] | None = None,
        apply: Callable[[str, str], str | None],
        value_prompt: str | None = None,
    ) -> None:
        super().__init__()
        # A protocol whose decision is a value (a number) is typed in, not picked.
        self.value_prompt = value_prompt
        self.refused: str | None = None
        self.apply = apply  # applies the decision; returns the engine's refusal, if any
        self.votes = list(votes)
        self.vetoes = dict(vetoes or {})
        self.unresolved = unresolved
        self.allow_extend = allow_extend
        self.summary = summary

    def _title(self) -> Content:
        return Content(
            "Unresolved: the operator decides" if self.unresolved else "Decide the debate"
        )

    @staticmethod
    def _vote_label(vote: str, refused: bool) -> Content:
        return Content(clean_line(vote) + (" — refused now (why: below)" if refused else ""))

    def _veto_lines(self) -> list[Static]:
        return [
            Static(
                Content(f"{clean_line(vote)}: {shorten(veto, 240)}"),
                classes="hint veto",
                markup=False,
            )
            for vote, veto in self.vetoes.items()
        ]

    def compose(self) -> ComposeResult:
        with Vertical(id="decide"):
            yield Label(self._title(), classes="title", id="decide-title")
            yield Static(
                Content(shorten(self.summary, 300)), classes="hint", id="summary", markup=False
            )
            # Compact widgets (no borders): the modal fits 80×24 with a summary and vetoes.
            if self.value_prompt is not None:
                yield Label(Content(shorten(self.value_prompt, 120)), classes="hint")
                yield Input(placeholder=self.value_prompt, id="value", compact=True)
            with RadioSet(id="votes", compact=True) as votes:
                votes.display = self.value_prompt is None
                for i, vote in enumerate(self.votes):
                    refused = vote in self.vetoes
                    yield RadioButton(
                        self._vote_label(vote, refused),
                        value=False,
                        id=f"vote-{i}",
                        disabled=refused,
                    )
            yield from self._veto_lines()
            yield Label(Content("Rationale (required, recorded in the session)"), classes="hint")
            yield Input(
                placeholder="why this decision", id="rationale", select_on_focus=False, compact=True
            )
            yield Static("", classes="error", id="decide-error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button(Content("Decide"), id="confirm", variant="primary", compact=True)
                if self.allow_extend:
                    yield Button(
                        Content("Add a round"), id="extend", variant="warning", compact=True
                    )
                yield Button(Content("Cancel"), id="cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#summary", Static).display = bool(self.summary)
        if self.focused is None:  # AUTO_FOCUS waits while the terminal reports focus lost,
            for widget in self.query("#value, #votes"):  # yet keys reach the app: they go here
                widget.focus()
                break

    async def escalated(self, summary: str, vetoes: dict[str, str]) -> None:
        """The debate ended unresolved while this modal was open: become the unresolved
        one in place (summary, refused votes, "Add a round"), keeping the operator's words."""
        self.unresolved = self.allow_extend = True
        self.summary, self.vetoes = summary, dict(vetoes)
        self.query_one("#decide-title", Label).update(self._title())
        shown = self.query_one("#summary", Static)
        shown.update(Content(shorten(summary, 300)))
        shown.display = bool(summary)
        for i, vote in enumerate(self.votes):
            button = self.query_one(f"#vote-{i}", RadioButton)
            button.label = self._vote_label(vote, vote in self.vetoes)
            button.disabled = vote in self.vetoes
        await self.query(".veto").remove()
        await self.query_one("#decide", Vertical).mount_all(
            self._veto_lines(), after=self.query_one("#votes", RadioSet)
        )
        if not self.query("#extend"):
            await self.query_one(".buttons", Horizontal).mount(
                Button(Content("Add a round"), id="extend", variant="warning", compact=True),
                before=self.query_one("#cancel", Button),
            )

    def chosen_vote(self) -> str | None:
        """The vote the operator picked (or the value typed), or None: none is chosen for them."""
        if self.value_prompt is not None:
            return self.query_one("#value", Input).value.strip() or None
        index = self.query_one("#votes", RadioSet).pressed_index
        return self.votes[index] if index >= 0 else None

    def _say(self, problem: str) -> None:
        self.query_one("#decide-error", Static).update(Content(shorten(problem, 400)))

    @on(Input.Submitted, "#rationale")
    @on(Button.Pressed, "#confirm")
    def confirm(self, event: Input.Submitted | Button.Pressed) -> None:
        event.stop()
        rationale = self.query_one("#rationale", Input).value.strip()
        vote = self.chosen_vote()
        if vote is None or not rationale:
            what = "a value (type it above)" if self.value_prompt else "a vote (pick one above)"
            missing = [what] if vote is None else []
            missing += [] if rationale else ["a rationale"]
            self._say("Still needed: " + " and ".join(missing) + ".")
            if vote is None and isinstance(event, Button.Pressed):
                self.query_one("#value" if self.value_prompt else "#votes").focus()
            return
        refusal = self.apply(vote, rationale)
        if refusal:  # the engine refused after all: say why, keep the modal and the words
            self.refused = refusal
            self._say(refusal)
            return
        self.dismiss(DecideResult(vote, rationale))

    @on(Button.Pressed, "#extend")
    def extend(self, event: Button.Pressed) -> None:
        """Asks first, as escalate and cut do: a round runs every debater again (minutes
        on the embedded model), and a stray Space on this button must not start one."""
        event.stop()

        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss(DecideResult(extend=True))

        self.app.push_screen(
            GuardModal(
                "Add a round?",
                "Every debater speaks again before the debate ends; you decide after.",
                "Add a round",
                stay="Back",
            ),
            answered,
        )

    @on(Button.Pressed, "#cancel")
    def cancel(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)


class _YesNoModal(_Modal[bool]):
    """A question answered by a button: ``#no`` has the focus first, ``#yes`` acts."""

    def __init__(self, question: str, detail: str) -> None:
        super().__init__()
        self.question = question
        self.detail = detail

    def on_mount(self) -> None:
        for button in self.query("#no").results(Button):  # none if the app closed first
            button.focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")


class ConfirmModal(_YesNoModal):
    """A yes/no question before something that cannot be undone here (quit, leave).

    y or q says yes (q twice quits); n or Esc stays.
    """

    BINDINGS = [
        Binding("y,q", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, detail: str = "", yes: str = "Quit") -> None:
        super().__init__(question, detail)
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Label(Content(self.question), classes="title")
            if self.detail:
                yield Static(Content(self.detail), classes="hint", markup=False)
            yield Label(Content(f"y/q: {self.yes.lower()} · n/Esc: stay"), classes="hint")
            with Horizontal(classes="buttons"):
                yield Button(Content(self.yes), id="yes", variant="error")
                yield Button(Content("Stay"), id="no", variant="primary")


class GuardModal(_YesNoModal):
    """Asks before a key that cannot be taken back (escalate, cut, a round added) acts.

    A sentence typed into the wrong place must not confirm it: letters do
    nothing here, Enter presses the focused button (``stay``, "Keep running", at first),
    and only a deliberate move to the action's button (Tab or arrows, then Enter)
    or a click confirms. Esc keeps running.
    """

    BINDINGS = [
        Binding("escape", "answer(False)", "Keep running"),
        Binding("left,right,tab,shift+tab", "app.focus_next", "Switch", show=False),
    ]

    def __init__(self, question: str, detail: str, act: str, stay: str = "Keep running") -> None:
        super().__init__(question, detail)
        self.act = act
        self.stay = stay  # the answer that acts on nothing, focused first

    def compose(self) -> ComposeResult:
        with Vertical(id="guard-box"):
            yield Label(Content(self.question), classes="title")
            yield Static(Content(self.detail), classes="hint", markup=False)
            yield Label(
                Content(f"Tab, then Enter: {self.act.lower()} · Enter or Esc: {self.stay.lower()}"),
                classes="hint",
            )
            with Horizontal(classes="buttons"):
                yield Button(Content(self.stay), id="no", variant="primary")
                yield Button(Content(self.act), id="yes", variant="error")


class PreflightWaitModal(_Modal[None]):
    """A spec started from home while ``moot run``'s preflight checks its models: on screen
    until the result takes its place, so a key pressed meanwhile lands here (and starts no
    second check) instead of dismissing the result unseen. Esc stops waiting."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name_shown = name
        self.seconds = 0

    def compose(self) -> ComposeResult:
        with Vertical(id="preflight-wait"):
            yield Label(Content(shorten(self.name_shown, 60)), classes="title")
            yield Static(Content(self._progress()), id="progress", markup=False)
            yield Static(
                Content("A provider or a model server may take a while to answer."),
                classes="hint",
                markup=False,
            )
            yield Label(Content("Esc: stop waiting (nothing is written)"), classes="hint")

    def on_mount(self) -> None:
        self.set_interval(1, self._tick)

    def _progress(self) -> str:
        return f"checking the models of {shorten(self.name_shown, 60)}… {self.seconds} s"

    def _tick(self) -> None:
        self.seconds += 1
        self.query_one("#progress", Static).update(Content(self._progress()))


class PreflightModal(_Modal[None]):
    """A spec started from home failed ``moot run``'s preflight: each line, and that
    nothing was written."""

    BINDINGS = [Binding("escape,enter", "cancel", "Close")]

    def __init__(self, name: str, lines: list[str]) -> None:
        super().__init__()
        self.name_shown = name
        self.lines = lines

    def compose(self) -> ComposeResult:
        with Vertical(id="preflight"):
            yield Label(
                Content.assemble(
                    ("Cannot start ", "bold $error"), (shorten(self.name_shown, 60), "bold")
                ),
                classes="title",
            )
            for line in self.lines:
                yield Static(Content(shorten(line, 400)), classes="preflight-line", markup=False)
            yield Static(
                Content("No session file was written. Set what is missing, then run it again."),
                classes="hint",
                markup=False,
            )
            with Horizontal(classes="buttons"):
                yield Button(Content("Close"), id="close", variant="primary")

    @on(Button.Pressed, "#close")
    def close(self, event: Button.Pressed) -> None:
        event.stop()
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

    BINDINGS = [
        Binding("escape", "cancel", "Escalate"),
        Binding("m", "focus_model", "Type a model", show=False),
    ]

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
            yield Label(
                Content("Replace with model (m: type it here, Enter: replace):"), classes="hint"
            )
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

    def action_focus_model(self) -> None:
        self.query_one("#model", Input).focus()

    @on(Input.Submitted, "#model")
    def replace(self) -> None:
        self.choose(FailureAction.REPLACE)

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        self.choose(FailureAction(str(event.button.id)))

    def choose(self, action: FailureAction) -> None:
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


@dataclass(frozen=True)
class CutResult:
    """The cut modal's answer: redo (with an optional note), skip, or another model."""

    action: CutAction
    model: str | None = None
    note: str | None = None

    def choice(self) -> CutChoice:
        """The engine's form of this answer."""
        return CutChoice(self.action, self.model, self.note)


class CutModal(_Modal[CutResult | None]):
    """A cut turn waits: redo it (after an optional note), skip it, or replace the model.

    Esc leaves the choice for later (``x`` asks again); the turn waits meanwhile.
    """

    BINDINGS = [Binding("escape", "cancel", "Later")]
    AUTO_FOCUS = "#note"  # a note typed at once is the note: letters type, none is a key

    def __init__(self, speakers: list[str], partial_words: int) -> None:
        super().__init__()
        self.speakers = speakers
        self.partial_words = partial_words

    def compose(self) -> ComposeResult:
        with Vertical(id="cut"):
            who = ", ".join(clean_line(s) for s in self.speakers)
            yield Label(
                Content.assemble(("Turn cut: ", "bold $warning"), (shorten(who, 60), "bold")),
                classes="title",
            )
            yield Static(
                Content(f"Recorded with the words spoken so far ({self.partial_words})."),
                classes="hint",
                markup=False,
            )
            yield Input(
                placeholder="note for the redo (optional; Enter: redo)", id="note", compact=True
            )
            yield Input(
                placeholder="model to use instead (Tab here, then Enter)", id="model", compact=True
            )
            with Horizontal(classes="buttons"):
                yield Button(Content("Redo"), id="redo", variant="primary", compact=True)
                yield Button(Content("Skip"), id="skip", compact=True)
                yield Button(Content("Replace"), id="replace", variant="warning", compact=True)

    @on(Input.Submitted, "#note")
    def redo_with_note(self, event: Input.Submitted) -> None:
        event.stop()
        self.choose(CutAction.REDO)

    @on(Input.Submitted, "#model")
    def replace(self, event: Input.Submitted) -> None:
        event.stop()
        self.choose(CutAction.REPLACE)

    @on(Button.Pressed)
    def chosen(self, event: Button.Pressed) -> None:
        event.stop()
        self.choose(CutAction(str(event.button.id)))

    def choose(self, action: CutAction) -> None:
        if action == CutAction.REPLACE:
            model = self.query_one("#model", Input).value.strip()
            if not model:
                self.query_one("#model", Input).focus()
                self.notify("Type the model to use first.", severity="warning", markup=False)
                return
            self.dismiss(CutResult(action, model=model))
        elif action == CutAction.REDO:
            note = self.query_one("#note", Input).value.strip()
            self.dismiss(CutResult(action, note=note or None))
        else:
            self.dismiss(CutResult(action))


@dataclass(frozen=True)
class RaiseResult:
    """The budget modal's answer: a new value for the cap that ended the debate."""

    value: float


class BudgetModal(_Modal[RaiseResult | None]):
    """A spending cap ended the debate: raise it and go on, or decide (None)."""

    AUTO_FOCUS = "#cap"

    def __init__(self, key: str, spent: float, cap: float) -> None:
        super().__init__()
        self.key = key
        self.spent = spent
        self.cap = cap

    def compose(self) -> ComposeResult:
        with Vertical(id="budget"):
            yield Label(Content("Budget reached"), classes="title")
            yield Static(
                Content(f"{clean_line(self.key)}: spent {self.spent:g} of {self.cap:g}."),
                classes="hint",
                markup=False,
            )
            yield Label(Content("New cap (Enter: raise and go on)"), classes="hint")
            yield Input(value=f"{self.cap * 2:g}", id="cap", type="number", compact=True)
            yield Static("", classes="error", id="budget-error", markup=False)
            with Horizontal(classes="buttons"):
                yield Button(Content("Raise"), id="raise", variant="primary", compact=True)
                yield Button(Content("Decide"), id="decide", compact=True)

    @on(Input.Submitted, "#cap")
    @on(Button.Pressed, "#raise")
    def confirm(self, event: Input.Submitted | Button.Pressed) -> None:
        event.stop()
        try:
            value = float(self.query_one("#cap", Input).value)
        except ValueError:
            value = 0.0
        if value <= self.cap:
            self.query_one("#budget-error", Static).update(
                Content(f"A raise must be higher than {self.cap:g}.")
            )
            return
        self.dismiss(RaiseResult(value))

    @on(Button.Pressed, "#decide")
    def decide(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

"""Headless runs: each turn printed with Rich as it lands, then the final report."""

from __future__ import annotations

import asyncio
import os
import sys
from collections import deque
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tui.engine.basics.errors import MootInputError
from tui.engine.basics.vocab import ESCALATE, RunStatus
from tui.engine.core.ports import ToolFailure
from tui.engine.core.records import Turn
from tui.engine.protocols import PROTOCOLS
from tui.engine.record.live import LiveSession
from tui.engine.run.events import (
    DecisionReached,
    Event,
    LookupsRan,
    ProviderFailed,
    StatusChanged,
    TurnCompleted,
)
from tui.engine.specs.spec import spec_warnings
from tui.exitcodes import ExitCode
from tui.notify import notify_session
from tui.plural import counted
from tui.render.present import Emphasis, Section, Tone, lookup_item, present
from tui.render.textsafe import bound, clean, clean_line, json_text, shorten
from tui.sigterm import sigterm_as_interrupt
from tui.telemetry import flush, trace_session

SHOWN_CHARS = 4000
RESUMED_SHOWN = 6  # the recorded turns a resume prints before going on: the rest are counted
TEXT_INDENT = "    "  # deeper than any line moot starts itself, which begin at column 0 or 2


def printable(text: str, limit: int) -> str:
    """Model or tool text, bounded, every line after its first indented: a line of it can
    never start at column 0 and pass for one of moot's own (``decision:``, ``saved:``)."""
    return bound(clean(text), limit).replace("\n", "\n" + TEXT_INDENT)


TONE_STYLE = {
    Tone.PLAIN: "",
    Tone.STRONG: "bold",
    Tone.MUTED: "dim",
    Tone.GOOD: "green",
    Tone.WARN: "yellow",
    Tone.BAD: "red",
    Tone.ACCENT: "cyan",
}


def turn_text(turn: Turn) -> Text:
    """One turn as Rich Text; model text is appended as plain text, never as markup."""
    out = Text()
    out.append(f"r{turn.round} {clean_line(turn.phase):<9} ", style="dim")
    out.append(clean_line(turn.speaker), style="bold")
    if turn.target:
        out.append(f" → {clean_line(turn.target)}", style="dim")
    out.append(f"  ({clean_line(turn.model)})", style="dim")
    if turn.invalid:
        out.append("  INVALID", style="bold red")
    elif turn.vote:
        out.append("  vote: ", style="dim")
        out.append(clean_line(turn.vote), style="bold cyan")
    for section in present(turn):
        _section(out, section)
    if turn.tokens_in or turn.tokens_out or turn.cost:
        out.append(
            f"\n  tokens {turn.tokens_in}/{turn.tokens_out}  cost ${turn.cost:.4f}", style="dim"
        )
    return out


def _section(out: Text, section: Section) -> None:
    if section.emphasis is Emphasis.FACTS:
        out.append("\n")
        for fact in section.facts:
            out.append(f"  {clean_line(fact.label)}: ", style="dim")
            out.append(clean_line(fact.value), style=TONE_STYLE[fact.tone] or "bold")
    elif section.emphasis is Emphasis.LEAD:
        out.append("\n  " + printable(section.text, SHOWN_CHARS), style="bold")
    elif section.emphasis is Emphasis.TEXT:
        out.append(f"\n  {clean_line(section.label)}: ", style="dim")
        out.append(printable(section.text, SHOWN_CHARS), style=TONE_STYLE[section.tone])
    else:
        out.append(f"\n  {clean_line(section.label)}:", style="dim")
        for item in section.items:
            out.append("\n  - ", style=TONE_STYLE[section.tone])
            if item.tag:
                out.append(clean_line(item.tag) + " ", style="bold")
            if item.status:
                out.append(clean_line(item.status) + " ", style=TONE_STYLE[item.tone] or "bold")
            if item.text:
                out.append(
                    ("— " if item.tag or item.status else "") + printable(item.text, SHOWN_CHARS)
                )
            for fact in item.details:
                out.append(f"\n      {clean_line(fact.label)}: ", style="dim")
                out.append(printable(fact.value, SHOWN_CHARS), style=TONE_STYLE[fact.tone])


def report_table(result: Mapping[str, Any]) -> Table:
    """The ``[result]`` as rows; ``moot watch`` reads it from a file, keys and all, so every
    cell is plain text (a key as a str would be read as Rich markup)."""
    table = Table(title=Text("Result", style="bold"), show_header=False)
    table.add_column(style="dim", no_wrap=True)
    table.add_column()
    protocol = PROTOCOLS.get(str(result.get("protocol")))
    for key, value in result.items():
        if key in ("vote_tally", "final_votes") and not any(_table(value).values()):
            continue  # no vote was cast (an estimate panel's): zeros would say nothing
        if protocol is not None and (summary := protocol.result_summary(key, value)) is not None:
            value = summary
        elif key in ("rubric", "rubric_turns"):
            value = _summary(key, value)
        if key == "speaker_schedule":
            value = " ".join(value)
        elif isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        elif isinstance(value, list):
            value = ", ".join(map(str, value))
        table.add_row(Text(shorten(str(key), 80)), Text(printable(str(value), 400)))
    return table


def _table(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _summary(key: str, value: Any) -> str:
    """The rubric's verdicts, which any protocol's result may carry."""
    if key == "rubric":
        return ", ".join(f"{p['property']}={p['verdict']}" for p in value)
    return "; ".join(
        f"t{r['turn']} {r['speaker']} {'pass' if r['pass'] else 'fail'}" for r in value
    )


class HeadlessPrinter:
    """Prints each event as it lands; a resume's recorded turns only as the last few of them
    (printing all 10,000 of a long session took longer than reading it)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._resumed: deque[Turn] = deque(maxlen=RESUMED_SHOWN)
        self._resumed_count = 0

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnCompleted) and event.replayed:
            self._resumed.append(event.turn)
            self._resumed_count += 1
            return
        if isinstance(event, TurnCompleted | LookupsRan | ProviderFailed | DecisionReached):
            self._show_resumed()  # before the next line printed, whatever it is
        if isinstance(event, TurnCompleted):
            self.console.print(turn_text(event.turn))
        elif isinstance(event, LookupsRan):
            for lookup in event.lookups:
                item = lookup_item(lookup)
                shown = Text(f"  lookup {clean_line(item.tag)} ", style="dim")
                shown.append(printable(item.text, 200) + " ")
                shown.append(clean_line(item.status)[:300], style=TONE_STYLE[item.tone])
                self.console.print(shown)
        elif isinstance(event, ProviderFailed):
            self.console.print(
                Text(
                    clean_line(f"provider failure for {event.slot.speaker} ({event.kind}): "),
                    style="red",
                )
                + Text(printable(event.message, 1000))
            )
        elif isinstance(event, DecisionReached):
            style = "bold yellow" if event.decision == ESCALATE else "bold green"
            line = f"decision: {event.decision}  ({event.rule}, by {event.decided_by})"
            self.console.print(Text("\n" + clean_line(line), style))

    def _show_resumed(self) -> None:
        """The recorded turns held back, before whatever comes next: the last few in full."""
        if not self._resumed_count:
            return
        hidden = self._resumed_count - len(self._resumed)
        if hidden:
            earlier = counted(hidden, "earlier turn")
            self.console.print(Text(f"(resumed) {earlier} not shown", style="dim"))
        for turn in self._resumed:
            self.console.print(Text("(resumed) ", style="dim") + turn_text(turn))
        self._resumed.clear()
        self._resumed_count = 0


def _ask_operator(session: LiveSession, console: Console) -> bool:
    """``--on-unresolved prompt``: decide or add a round. True to keep running."""
    debate = session.spec.debate
    votes = debate.vote_options or sorted(set(session.engine.state.latest_vote.values()))
    console.print(
        Text(
            "The debate is unresolved. Choose a vote, 'extend' for one more round, "
            "or 'quit' to leave it unresolved.",
            style="bold",
        )
    )
    while True:
        console.print(Text(clean_line(f"votes: {', '.join(votes)}")))
        try:
            choice = input("decision> ").strip()
        except EOFError:
            return False
        if choice == "quit":
            return False
        if choice == "extend":
            session.engine.extend()
            return True
        if choice in votes or (debate.open_votes and debate.accepts(choice)):
            try:
                rationale = input("rationale> ").strip()
            except EOFError:
                return False
            try:
                session.engine.decide(choice, rationale)
                return False
            except ValueError as refused:  # no rationale, or a blocking-mode veto
                console.print(Text(clean(refused), style="red"))
        else:
            console.print(Text(clean_line(f"unknown choice {choice!r}"), style="red"))


async def _drive(session: LiveSession, console: Console, on_unresolved: str) -> None:
    while True:
        decision = await session.engine.run()
        if decision.decision != ESCALATE or on_unresolved != "prompt":
            return
        if not await asyncio.to_thread(_ask_operator, session, console):
            return


class _PipeConsole(Console):
    """Rich output that a closed pipe (``moot run … | head``) silences instead of ending."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        silence_stdout()


def silence_stdout() -> None:
    """The reader is gone: further output goes nowhere, so the run can finish on record."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def headless_console(*, stderr: bool = False) -> Console:
    """Lines are never wrapped by Rich (soft wrap), so paths and ids stay whole in a pipe."""
    return _PipeConsole(highlight=False, soft_wrap=True, stderr=stderr)


RUN_STATUS = {
    ExitCode.DECIDED: "decided",
    ExitCode.UNRESOLVED: "unresolved",
    ExitCode.INTERRUPTED: "interrupted",
}


def result_json(session: LiveSession, code: int) -> str:
    """``--json``: the session, the exit code, its status and the ``[result]`` as one JSON
    object; an interrupted run has no result yet (null) and says so in ``status``."""
    result: object = session.store.result
    if result is None and code != ExitCode.INTERRUPTED:
        result = dict(session.engine.result())
    status = RUN_STATUS.get(ExitCode(code), "failed")
    doc = {"session": str(session.path), "exit_code": int(code), "status": status}
    return json_text({**doc, "result": result})


class _ResumeIfLeftPaused:
    """Headless, nobody can press resume: a session the operator left paused goes on.

    Replaying the journal may pause the run; once the replay has settled (the
    next loop step) a run still paused is resumed, and the resume is journalled.
    """

    def __init__(self, session: LiveSession, console: Console) -> None:
        self.session = session
        self.console = console

    def __call__(self, event: Event) -> None:
        if isinstance(event, StatusChanged) and event.status == RunStatus.PAUSED:
            asyncio.get_running_loop().call_soon(self._resume)

    def _resume(self) -> None:
        engine = self.session.engine
        if engine.paused and engine.decision is None:
            self.console.print(
                Text("the operator left this session paused; resuming it headless", "yellow")
            )
            engine.resume()


def run_headless(
    session: LiveSession,
    on_unresolved: str = "end",
    console: Console | None = None,
    *,
    extend_first: bool = False,
) -> int:
    """Run to a decision, printing as it goes; returns the exit code docs/commands.md lists.

    ``extend_first``: the session ended unresolved; replay it to that end, add a
    round (journalled), and go on (``moot decide --extend``).
    """
    console = console or headless_console()
    session.engine.subscribe(HeadlessPrinter(console))
    session.engine.subscribe(_ResumeIfLeftPaused(session, console))
    console.print(Text(clean_line(f"session: {session.path}"), style="dim"))
    for warning in spec_warnings(session.spec):
        console.print(Text(clean(f"warning: {warning}"), style="yellow"))
    if session.resumed_from is not None:
        for warning in session.resumed_from.warnings:
            Console(stderr=True).print(Text(clean(f"warning: {warning}"), style="yellow"))
    from tui.providers.registry import close_all

    async def main() -> None:
        try:
            if session.tools is not None:  # a tool that cannot start stops the run at once
                try:
                    await session.tools.start()
                except ToolFailure as err:
                    raise MootInputError(f"{session.path}: tools", [err.message]) from None
            if extend_first:
                await session.engine.run()
                session.engine.extend()
            await _drive(session, console, on_unresolved)
        finally:
            if session.tools is not None:
                await session.tools.aclose()
            await close_all()

    finish = trace_session(session)
    notified = notify_session(session, "headless")
    try:
        with sigterm_as_interrupt():  # cancelled, saved, the way back named
            asyncio.run(main())
    finally:
        if finish is not None:
            finish()
        flush()
        if notified is not None:
            notified()
    result = session.engine.result()
    # A pipe gets the table at a readable width; a terminal gets its own width.
    console.print(
        report_table(result), width=None if console.is_terminal else max(console.width, 100)
    )
    console.print(Text(clean_line(f"saved: {session.path}"), style="dim"))
    return ExitCode.UNRESOLVED if result.get("decision") == ESCALATE else ExitCode.DECIDED

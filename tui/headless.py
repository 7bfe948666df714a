"""Headless runs: each turn printed with Rich as it lands, then the final report."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tui.engine.events import DecisionReached, Event, ProviderFailed, TurnCompleted
from tui.engine.live import LiveSession
from tui.engine.records import Turn
from tui.engine.spec import spec_warnings
from tui.exitcodes import ExitCode
from tui.textsafe import bound, clean

SHOWN_CHARS = 4000


def printable(text: str, limit: int) -> str:
    return bound(clean(text), limit)


def turn_text(turn: Turn) -> Text:
    """One turn as Rich Text; model text is appended as plain text, never as markup."""
    head = Text()
    head.append(f"r{turn.round} {turn.phase:<9} ", style="dim")
    head.append(turn.speaker, style="bold")
    if turn.target:
        head.append(f" → {turn.target}", style="dim")
    head.append(f"  ({turn.model})", style="dim")
    if turn.invalid:
        head.append("  INVALID", style="bold red")
    elif turn.vote:
        head.append("  vote: ", style="dim")
        head.append(turn.vote, style="bold cyan")
    body = Text()
    c = turn.content
    if turn.invalid:
        body.append("\n  " + printable(turn.error or "", SHOWN_CHARS), style="red")
        if turn.raw:
            body.append("\n  raw: " + printable(turn.raw, SHOWN_CHARS), style="dim")
    elif turn.kind == "position":
        body.append("\n  " + printable(str(c.get("stance", "")), SHOWN_CHARS))
        body.append("\n  why: " + printable(str(c.get("rationale", "")), SHOWN_CHARS), style="dim")
    elif turn.kind == "candidate":
        body.append("\n  " + printable(str(c.get("candidate", "")), SHOWN_CHARS))
    elif turn.kind == "judgment":
        picked = turn.derived.get("picked", "?")
        body.append(f"\n  picked {c.get('pick')} = {picked} ({turn.variant}): ", style="yellow")
        body.append(printable(str(c.get("reason", "")), SHOWN_CHARS))
    elif turn.kind == "challenge_report":
        body.append(
            f"\n  verdict: {c.get('verdict')}  convergence: {c.get('convergence')}", style="yellow"
        )
        for a in c.get("assessments", []):
            body.append(f"\n  {a.get('challenge_id')}: {a.get('status')}", style="dim")
        ids = turn.derived.get("challenge_ids", [])
        for cid, ch in zip(ids, c.get("challenges", []), strict=False):
            body.append(f"\n  [{cid}] {ch.get('severity')} / ", style="bold")
            body.append(printable(f"{ch.get('category')}: {ch.get('concern')}", SHOWN_CHARS))
            body.append(
                "\n      evidence: " + printable(str(ch.get("evidence")), SHOWN_CHARS), style="dim"
            )
    elif turn.kind == "defense":
        for r in c.get("responses", []):
            body.append(f"\n  {r.get('challenge_id')} {r.get('status')}: ", style="bold")
            body.append(printable(str(r.get("answer", "")), SHOWN_CHARS))
        body.append(
            "\n  revised: " + printable(str(c.get("revised_artifact", "")), SHOWN_CHARS),
            style="dim",
        )
    else:
        body.append(f"\n  verdict: {c.get('verdict', '')}", style="yellow")
        if "score" in c:
            body.append(f"  score: {c['score']}  routing: {c.get('routing', '')}", style="yellow")
        for w in c.get("weaknesses", []):
            body.append("\n  - " + printable(str(w), SHOWN_CHARS))
        for s in c.get("suggestions", []):
            body.append("\n  + " + printable(str(s), SHOWN_CHARS), style="dim")
    rubric = turn.derived.get("rubric")
    if rubric:
        verdicts = ", ".join(f"{p['property']}={p['verdict']}" for p in rubric["properties"])
        body.append(
            f"\n  rubric: {'pass' if rubric['pass'] else 'fail'} ({verdicts}; "
            f"{rubric['missing_evidence']} without admitted evidence)",
            style="magenta",
        )
        for prop in rubric["properties"]:
            body.append_text(rubric_lines(prop))
    if turn.tokens_in or turn.tokens_out or turn.cost:
        body.append(
            f"\n  tokens {turn.tokens_in}/{turn.tokens_out}  cost ${turn.cost:.4f}", style="dim"
        )
    return head + body


def rubric_lines(prop: dict[str, Any]) -> Text:
    """One property: evidence first, then rationale, then the verdict the engine gave."""
    out = Text(f"\n    {prop['property']}:", style="magenta")
    for ev in prop.get("evidence", []):
        mark = "admitted" if ev["admitted"] else f"refused: {ev['why']}"
        out.append(f"\n      evidence {ev['kind']}: ", style="dim")
        out.append(printable(str(ev["quote"]), 400))
        out.append(f" ({mark})", style="green" if ev["admitted"] else "red")
    if not prop.get("evidence"):
        out.append("\n      evidence: none", style="dim")
    out.append("\n      rationale: ", style="dim")
    out.append(printable(str(prop.get("rationale", "")), 600))
    forced = prop["claimed"] == "yes" and prop["verdict"] == "no"
    out.append(
        f"\n      verdict: {prop['verdict']}" + (" (claimed yes: forced)" if forced else ""),
        style="bold",
    )
    return out


def report_table(result: Mapping[str, Any]) -> Table:
    table = Table(title="Result", show_header=False, title_style="bold")
    table.add_column(style="dim")
    table.add_column()
    for key, value in result.items():
        if key in (
            "challenges",
            "judge_rounds",
            "rubric",
            "rubric_turns",
            "final_artifact",
            "winning_candidate",
        ):
            value = _summary(key, value)
        if key == "speaker_schedule":
            value = " ".join(value)
        elif isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        elif isinstance(value, list):
            value = ", ".join(map(str, value))
        table.add_row(key, Text(printable(str(value), 400)))
    return table


def _summary(key: str, value: Any) -> str:
    if key == "challenges":
        return "; ".join(f"{c['id']} {c['severity']} {c['status']}" for c in value)
    if key == "judge_rounds":
        return "; ".join(f"r{r['round']} {r['winner']} (streak {r['streak']})" for r in value)
    if key == "rubric":
        return ", ".join(f"{p['property']}={p['verdict']}" for p in value)
    if key == "rubric_turns":
        return "; ".join(
            f"t{r['turn']} {r['speaker']} {'pass' if r['pass'] else 'fail'}" for r in value
        )
    text = str(value)
    return text if len(text) < 300 else text[:300] + "…"


class HeadlessPrinter:
    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnCompleted):
            prefix = "(resumed) " if event.replayed else ""
            self.console.print(Text(prefix, style="dim") + turn_text(event.turn))
        elif isinstance(event, ProviderFailed):
            self.console.print(
                Text(f"provider failure for {event.slot.speaker} ({event.kind}): ", style="red")
                + Text(printable(event.message, 1000))
            )
        elif isinstance(event, DecisionReached):
            style = "bold yellow" if event.decision == "escalate" else "bold green"
            self.console.print(
                Text(f"\ndecision: {event.decision}  ({event.rule}, by {event.decided_by})", style)
            )


def _ask_operator(session: LiveSession, console: Console) -> bool:
    """``--on-unresolved prompt``: decide or add a round. True to keep running."""
    votes = list(session.spec.debate.votes)
    console.print(
        Text(
            "The debate is unresolved. Choose a vote, 'extend' for one more round, "
            "or 'quit' to leave it unresolved.",
            style="bold",
        )
    )
    while True:
        console.print(Text(f"votes: {', '.join(votes)}"))
        try:
            choice = input("decision> ").strip()
        except EOFError:
            return False
        if choice == "quit":
            return False
        if choice == "extend":
            session.engine.extend()
            return True
        if choice in votes:
            try:
                rationale = input("rationale> ").strip()
            except EOFError:
                return False
            try:
                session.engine.decide(choice, rationale)
                return False
            except ValueError as refused:  # no rationale, or a blocking-mode veto
                console.print(Text(str(refused), style="red"))
        else:
            console.print(Text(f"unknown choice {choice!r}", style="red"))


async def _drive(session: LiveSession, console: Console, on_unresolved: str) -> None:
    while True:
        decision = await session.engine.run()
        if decision.decision != "escalate" or on_unresolved != "prompt":
            return
        if not await asyncio.to_thread(_ask_operator, session, console):
            return


def run_headless(
    session: LiveSession, on_unresolved: str = "end", console: Console | None = None
) -> int:
    """Run to a decision, printing as it goes; returns DESIGN.md's exit code."""
    console = console or Console(highlight=False, soft_wrap=False, stderr=False)
    session.engine.subscribe(HeadlessPrinter(console))
    console.print(Text(f"session: {session.path}", style="dim"))
    for warning in spec_warnings(session.spec):
        console.print(Text(f"warning: {warning}", style="yellow"))
    if session.resumed_from is not None:
        for warning in session.resumed_from.warnings:
            Console(stderr=True).print(Text(f"warning: {warning}", style="yellow"))
    from tui.providers.registry import close_all

    async def main() -> None:
        try:
            await _drive(session, console, on_unresolved)
        finally:
            await close_all()

    asyncio.run(main())
    result = session.engine.result()
    console.print(report_table(result))
    console.print(Text(f"saved: {session.path}", style="dim"))
    return ExitCode.UNRESOLVED if result.get("decision") == "escalate" else ExitCode.DECIDED

"""``moot batch``: many specs run headless in one process, N at a time.

Debates are light (a few coroutines and one open file each); the model calls
are what take time, so one event loop holds hundreds of debates while the
providers spread their calls. A bad spec is reported and skipped, never a
reason to stop the others; each debate writes its own session file exactly as
``moot run --headless`` would, so every one of them passes ``moot verify``.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console, JustifyMethod
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from tui.engine.basics.errors import MootInputError
from tui.engine.basics.redact import Redactor
from tui.engine.basics.safeio import FileRefused, write_new
from tui.engine.basics.vocab import ESCALATE
from tui.engine.core.ports import Provider, ToolFailure
from tui.engine.core.records import Turn
from tui.engine.record.live import LiveSession
from tui.engine.record.trust import spec_tools_refusal
from tui.engine.run.events import Event, TurnCompleted
from tui.engine.specs.spec import Debater, Spec, read_spec_file
from tui.exitcodes import ExitCode
from tui.filekind import refuse_wrong_kind
from tui.notify import notify_session
from tui.plural import counted
from tui.render.textsafe import clean_line, shorten
from tui.telemetry import batch_trace, flush, trace_session
from tui.tools.toolbox import run_tools

DEFAULT_CONCURRENCY = 4
PREFLIGHTS_AT_ONCE = 8
Preflight = Callable[[Spec], list[str]]


class Status(StrEnum):
    PENDING = "pending"
    DECIDED = "decided"
    UNRESOLVED = "unresolved"
    BAD = "bad"  # the spec (or its session file) could not be used: nothing ran
    FAILED = "failed"  # the run stopped on an error (a write that failed, say)


@dataclass
class Item:
    """One spec given to the batch, and what became of it."""

    spec_path: str
    spec: Spec | None = None
    raw: dict[str, Any] | None = None
    status: Status = Status.PENDING
    problems: list[str] = field(default_factory=list)
    session: Path | None = None
    result: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    allow_read: tuple[str, ...] = ()  # --allow-read: for its documents and its tools' roots
    allow_tools: bool = False  # --allow-tools: its [[tools]] may start the programs they name
    writes: bool = False  # --allow-tool-writes: its tools' listed calls that may write

    @property
    def name(self) -> str:
        return clean_line(self.spec_path)

    @property
    def said(self) -> list[str]:
        """The problems as shown and summarised: a message may quote a key, never kept."""
        redact = Redactor.for_spec(self.raw or {})
        return [redact(p) for p in self.problems]

    def summary(self) -> dict[str, Any]:
        r = self.result
        return {
            "spec": self.spec_path,
            "status": str(self.status),
            "problems": self.said,
            "decision": r.get("decision"),
            "decision_rule": r.get("decision_rule"),
            "decided_by": r.get("decided_by"),
            "vote_tally": r.get("vote_tally"),
            "turns": r.get("turns", 0),
            "tokens": r.get("tokens", 0),
            "cost": r.get("cost", 0.0),
            "seconds": round(self.seconds, 3),
            "session": str(self.session) if self.session else None,
        }


# ----------------------------------------------------------------- the specs
def _spec_files(paths: Iterable[str]) -> list[str]:
    """Files as given, folders as their ``*.toml`` (sorted, hidden files left out)."""
    out: list[str] = []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            out += [str(f) for f in sorted(p.glob("*.toml")) if not f.name.startswith(".")]
        else:
            out.append(given)
    return list(dict.fromkeys(out))


def collect(
    paths: Iterable[str],
    preflight: Preflight | None = None,
    allow_read: Sequence[str] = (),
    *,
    allow_tools: bool = False,
    writes: bool = False,
) -> list[Item]:
    """Every spec named by ``paths``, read and validated; bad ones carry their problems.

    Each spec's documents come from its own folder tree and ``allow_read`` only, as
    with ``moot run``; a spec naming an MCP command is refused unless ``allow_tools``.
    """
    items: list[Item] = []
    for path in _spec_files(paths):
        item = Item(path, allow_read=tuple(allow_read), allow_tools=allow_tools, writes=writes)
        try:
            refuse_wrong_kind(str(path), "spec")  # a session file: named, not 8 schema errors
            item.spec, item.raw = read_spec_file(path, allow_read)
            if why := spec_tools_refusal(item.spec, allow_tools=allow_tools):
                raise MootInputError(str(path), [why])
        except MootInputError as err:
            item.status, item.problems = Status.BAD, list(err.problems)
        items.append(item)
    if preflight is not None:  # network checks: many specs at once, not one after another
        checked = [(i, i.spec) for i in items if i.spec is not None]
        with ThreadPoolExecutor(max_workers=PREFLIGHTS_AT_ONCE) as pool:
            found = pool.map(preflight, [spec for _, spec in checked])
            for (item, _), problems in zip(checked, found, strict=True):
                if problems:
                    item.status, item.problems = Status.BAD, [f"preflight: {p}" for p in problems]
    return items


# ------------------------------------------------------------ the reporters
class Reporter(Protocol):
    def started(self, item: Item) -> None: ...

    def turn(self, item: Item, turn: Turn) -> None: ...

    def finished(self, item: Item) -> None: ...


class Silent:
    """No output (benchmarks, tests)."""

    def started(self, item: Item) -> None:
        return None

    def turn(self, item: Item, turn: Turn) -> None:
        return None

    def finished(self, item: Item) -> None:
        return None


def _outcome(item: Item) -> Text:
    if item.status in (Status.BAD, Status.FAILED):
        first = item.said[0] if item.problems else "failed"
        return Text(f"{item.status}: {shorten(first, 160)}", style="red")
    r = item.result
    style = "yellow" if item.status == Status.UNRESOLVED else "green"
    return Text(
        f"{clean_line(r.get('decision'))} ({clean_line(r.get('decision_rule'))}) "
        f"{counted(int(r.get('turns', 0)), 'turn')} {item.seconds:.1f}s",
        style=style,
    )


class PlainLines:
    """One line per start and end: for logs and pipes (no cursor movement)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def started(self, item: Item) -> None:
        self.console.print(
            Text(clean_line(f"start  {item.name} -> {item.session}")), soft_wrap=True
        )

    def turn(self, item: Item, turn: Turn) -> None:
        return None

    def finished(self, item: Item) -> None:
        self.console.print(Text(f"end    {item.name}: ") + _outcome(item), soft_wrap=True)


class LiveProgress:
    """A line per running debate (round, phase, speaker, turns) under an overall bar."""

    def __init__(self, console: Console, total: int) -> None:
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        self.overall = self.progress.add_task("all debates", total=total)
        self._tasks: dict[int, TaskID] = {}

    def __enter__(self) -> LiveProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def started(self, item: Item) -> None:
        self._tasks[id(item)] = self.progress.add_task(shorten(item.spec_path, 40), total=None)

    def turn(self, item: Item, turn: Turn) -> None:
        task = self._tasks.get(id(item))
        if task is not None:
            what = f"r{turn.round} {turn.phase} {turn.speaker}"
            self.progress.update(
                task,
                advance=1,
                description=f"{shorten(item.spec_path, 40)}  {shorten(what, 40)}",
            )

    def finished(self, item: Item) -> None:
        task = self._tasks.pop(id(item), None)
        if task is not None:
            self.progress.remove_task(task)
        self.progress.console.print(Text(f"{item.name}: ") + _outcome(item), soft_wrap=True)
        self.progress.advance(self.overall)


# ------------------------------------------------------------------ running
async def _run_one(
    item: Item,
    directory: str | Path | None,
    provider_for: Callable[[Debater], Provider],
    reporter: Reporter,
    trace_parent: object = None,
) -> None:
    assert item.spec is not None and item.raw is not None
    started = time.monotonic()
    tools = run_tools(
        item.spec,
        item.spec_path,
        item.allow_read,
        allow_tools=item.allow_tools,
        writes=item.writes,
    )
    try:
        if tools is not None:  # a tool that cannot start refuses the spec, before any file
            try:
                await tools.start()
            except ToolFailure as err:
                raise MootInputError("tools", [f"tools: {err.message}"]) from None
        session = LiveSession.start(
            item.spec,
            item.raw,
            provider_for,
            directory=directory,
            spec_source=item.spec_path,
            tools=tools,
        )
    except MootInputError as err:  # the sessions folder or file cannot be used
        if tools is not None:
            await tools.aclose()
        item.status, item.problems = Status.BAD, list(err.problems)
        reporter.finished(item)
        return
    item.session = session.path
    reporter.started(item)

    def on_event(event: Event) -> None:
        if isinstance(event, TurnCompleted):
            reporter.turn(item, event.turn)

    session.engine.subscribe(on_event)
    finish = trace_session(session, trace_parent)
    notified = notify_session(session, "batch")
    try:
        decision = await session.engine.run()
        item.result = dict(session.engine.result())
        item.status = Status.UNRESOLVED if decision.decision == ESCALATE else Status.DECIDED
    except MootInputError as err:  # a write that failed: the file keeps what was committed
        item.status, item.problems = Status.FAILED, list(err.problems)
    except Exception as err:  # one broken run must not end the others
        item.status = Status.FAILED
        item.problems = [f"internal error: {type(err).__name__}: {err}"]
    finally:
        if finish is not None:
            finish()
        if session.tools is not None:
            await session.tools.aclose()
        session.close()
        item.seconds = time.monotonic() - started
        if notified is not None:  # a target that is down waits its bounded retries, off the loop
            await asyncio.to_thread(notified)
    reporter.finished(item)


async def run_items(
    items: Sequence[Item],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    directory: str | Path | None = None,
    provider_for: Callable[[Debater], Provider],
    reporter: Reporter | None = None,
) -> None:
    """Run every good item, at most ``concurrency`` at once."""
    gate = asyncio.Semaphore(max(1, concurrency))
    out = reporter or Silent()

    pending = [i for i in items if i.status == Status.PENDING]
    with batch_trace(len(pending)) as parent:  # one trace for the batch, when tracing is on

        async def one(item: Item) -> None:
            async with gate:
                await _run_one(item, directory, provider_for, out, parent)

        await asyncio.gather(*(one(i) for i in pending))


def exit_code(items: Sequence[Item]) -> ExitCode:
    statuses = {i.status for i in items}
    if statuses & {Status.BAD, Status.FAILED}:
        return ExitCode.BAD_INPUT
    if Status.UNRESOLVED in statuses:
        return ExitCode.UNRESOLVED
    return ExitCode.DECIDED


def summary(items: Sequence[Item]) -> dict[str, Any]:
    """The ``--summary`` document: every spec given, bad ones included, and the counts."""
    counts = {str(s): sum(1 for i in items if i.status == s) for s in Status if s != "pending"}
    return {
        "specs": [i.summary() for i in items],
        "counts": counts,
        "exit_code": int(exit_code(items)),
    }


def results_table(items: Sequence[Item], width: int | None = None) -> Table:
    """The final table; in a terminal ``width`` wide the paths share what the figures leave."""
    spec_width = None if width is None else max(16, (width - 75) // 3)
    session_width = None if width is None else max(16, width - 75 - (spec_width or 0))
    table = Table(title="Batch", title_style="bold")
    # Paths never wrap: a narrow terminal shortens them with an ellipsis (the summary and
    # piped output keep them whole); the other columns keep room for their figures.
    columns: tuple[tuple[str, JustifyMethod, int], ...] = (
        ("spec", "left", 12),
        ("decision", "left", 8),
        ("rule", "left", 14),
        ("turns", "right", 5),
        ("tokens", "right", 6),
        ("cost", "right", 7),
        ("time", "right", 5),
        ("session", "left", 12),
    )
    for label, justify, least in columns:
        path = label in ("spec", "session")
        table.add_column(
            label,
            justify=justify,
            min_width=least,
            max_width={"spec": spec_width, "session": session_width}.get(label),
            no_wrap=path,
            overflow="ellipsis",
        )
    for item in items:
        r = item.result
        if item.status in (Status.BAD, Status.FAILED):
            decision = Text(str(item.status), style="red")
            rule = Text(shorten(item.said[0] if item.problems else "", 60), style="red")
        else:
            style = "yellow" if item.status == Status.UNRESOLVED else "green"
            decision = Text(clean_line(r.get("decision", "")), style=style)
            rule = Text(clean_line(r.get("decision_rule", "")))
        table.add_row(
            Text(item.name),
            decision,
            rule,
            str(r.get("turns", "")),
            str(r.get("tokens", "")),
            f"${r['cost']:.4f}" if "cost" in r else "",
            f"{item.seconds:.1f}s" if item.seconds else "",
            Text(clean_line(item.session) if item.session else ""),
        )
    return table


def check_summary_path(path: str | None) -> None:
    """Refuse an existing ``--summary`` file before anything runs (never overwritten)."""
    if path and os.path.lexists(path):
        raise MootInputError(path, ["a file (or link) already exists there; not overwriting it"])


def write_summary(path: str, items: Sequence[Item]) -> None:
    try:
        write_new(path, (json.dumps(summary(items), indent=2) + "\n").encode("utf-8"))
    except FileRefused as err:
        raise MootInputError(path, [str(err)]) from None


def run_batch(
    paths: Sequence[str],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    directory: str | Path | None = None,
    summary_path: str | None = None,
    preflight: Preflight | None = None,
    console: Console | None = None,
    errors: Console | None = None,
    allow_read: Sequence[str] = (),
    allow_tools: bool = False,
    writes: bool = False,
) -> int:
    """Run every spec named by ``paths``; print progress and the table; return the exit code.

    With ``preflight``, each runnable spec's files and the servers they go to are
    printed before any debate starts.
    """
    from tui.providers.preflight import document_routes, tool_calls
    from tui.providers.registry import close_all, provider_for

    check_summary_path(summary_path)
    console = console or Console(highlight=False)
    errors = errors or Console(stderr=True, highlight=False)
    items = collect(paths, preflight, allow_read, allow_tools=allow_tools, writes=writes)
    if not items:
        raise MootInputError(" ".join(paths), ["no spec files found (a folder's *.toml are run)"])
    for item in items:
        if item.status == Status.BAD:
            _print_problems(errors, item)
        elif item.spec is not None:
            said = document_routes(item.spec) if preflight is not None else []
            for line in said + tool_calls(item.spec, writes):  # tools: always said
                errors.print(Text(f"moot: {item.name}: {clean_line(line)}"), soft_wrap=True)
    runnable = sum(1 for i in items if i.status == Status.PENDING)

    async def main(reporter: Reporter) -> None:
        try:
            await run_items(
                items,
                concurrency=concurrency,
                directory=directory,
                provider_for=provider_for,
                reporter=reporter,
            )
        finally:
            await close_all()

    try:
        if console.is_terminal:
            with LiveProgress(console, runnable) as live:
                asyncio.run(main(live))
        else:
            asyncio.run(main(PlainLines(console)))
        flush()
    except KeyboardInterrupt:  # every file keeps its committed turns: say how to go on
        for item in items:
            if item.session is not None and item.status == Status.PENDING:
                errors.print(
                    Text(f"moot: unfinished: moot resume {clean_line(item.session)} --headless"),
                    soft_wrap=True,
                )
        raise
    for item in items:
        if item.status == Status.FAILED:
            _print_problems(errors, item)
    if console.is_terminal:  # the figures keep their room; long paths end in an ellipsis
        console.print(results_table(items, console.width))
    else:  # a log or a pipe: paths whole, never wrapped
        console.width = max(console.width, _table_width(items))
        console.print(results_table(items))
    if summary_path:
        write_summary(summary_path, items)
        console.print(Text(f"summary: {clean_line(summary_path)}", style="dim"), soft_wrap=True)
    return exit_code(items)


def _table_width(items: Sequence[Item]) -> int:
    longest = max((len(i.name) + len(str(i.session or "")) for i in items), default=0)
    return longest + 120


def _print_problems(errors: Console, item: Item) -> None:
    errors.print(
        Text(
            f"moot: {item.name}: {item.status}, {counted(len(item.problems), 'problem')}",
            style="red",
        ),
        soft_wrap=True,
    )
    for problem in item.said:
        errors.print(Text(f"  - {clean_line(problem)}"), soft_wrap=True)

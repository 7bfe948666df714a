"""``moot bench``: run the arms over the items, N at a time, then report and plot.

Progress is a Rich bar in a terminal and one plain line per finished item arm
otherwise (on stderr under ``--json``, whose stdout is the one JSON object).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from tui.bench.arms import ARMS, DEBATES, Setup, arm_spec, play
from tui.bench.oracle import Oracle, OracleOdds, oracle_odds
from tui.bench.plot import drawing, write_svg
from tui.bench.recheck import Recheck
from tui.bench.report import summary, table
from tui.bench.store import PLOT, Store, session_path
from tui.bench.tasks import Item, task_named
from tui.engine.basics.errors import MootInputError
from tui.engine.core.ports import Provider, TokenSink, TurnReply, TurnRequest
from tui.engine.specs.spec import Debater, validate_spec
from tui.exitcodes import ExitCode
from tui.render.textsafe import clean_line
from tui.sigterm import sigterm_as_interrupt
from tui.telemetry import bench_trace, flush

if TYPE_CHECKING:
    from tui.telemetry.bench import BenchTrace

MAX_ITEMS = 100_000  # the records of a run are held in memory for the report


@dataclass
class Calls:
    """Model calls made by this run (a rerun over finished items makes none)."""

    made: int = 0


class Counted:
    """A provider that counts the calls it passes on; closing is left to their owner."""

    def __init__(self, inner: Provider, calls: Calls) -> None:
        self.inner, self.calls = inner, calls

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        self.calls.made += 1
        return await self.inner.complete(request, on_token)

    async def aclose(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Options:
    """The command line of ``moot bench``."""

    task: str = "arithmetic"
    items: int = 20
    seed: int = 0
    model: str = "local"
    api_base: str | None = None
    arms: Sequence[str] = ("single", "vote", "debate")
    agents: int = 3
    rounds: int = 2
    samples: int = 3
    out: str | None = None
    as_json: bool = False
    concurrency: int = 4

    def config(self) -> dict[str, Any]:
        """What an ``--out`` folder holds: a rerun must ask for the same bench."""
        return {
            "task": self.task,
            "seed": self.seed,
            "model": self.model,
            "api_base": self.api_base,
            "agents": self.agents,
            "rounds": self.rounds,
            "samples": self.samples,
        }


class _Lines:
    """One plain line per finished item arm: for logs and pipes."""

    def __init__(self, console: Console, total: int) -> None:
        self.console, self.total, self.count = console, total, 0

    def done(self, record: dict[str, Any]) -> None:
        self.count += 1
        verdict = "right" if record["correct"] else "wrong"
        answer = clean_line(record.get("answer") or "no answer")
        self.console.print(
            Text(
                f"[{self.count}/{self.total}] item {record['item']} {record['arm']}: "
                f"{verdict} ({answer}; {record['calls']} calls)"
            ),
            soft_wrap=True,
            highlight=False,
        )


class _Bar:
    def __init__(self, console: Console, total: int) -> None:
        self.progress = Progress(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self.task = self.progress.add_task("bench", total=total)

    def done(self, record: dict[str, Any]) -> None:
        self.progress.update(
            self.task, advance=1, description=f"item {record['item']} {record['arm']}"
        )


def run_bench(
    options: Options, console: Console | None = None, errors: Console | None = None
) -> int:
    """Run (or finish) the bench and print its report; the exit code."""
    console = console or Console(highlight=False)
    errors = errors or Console(stderr=True, highlight=False)
    _check(options)
    task = task_named(options.task, options.seed)
    odds = oracle_odds(options.model)
    setup = Setup(
        task, options.model, options.agents, options.rounds, options.samples, options.api_base
    )
    if odds is None:  # a model that cannot start is named now, not after N silent failures
        _preflight(setup, task.item(0))
    store = None
    if options.out:
        folder = Path(options.out)
        store = Store(folder, options.config(), Recheck(setup, partial(session_path, folder)))
    run = _Run(options, setup, odds, store)
    shown = errors if options.as_json else console
    total = len(run.todo)
    progress = _Bar(shown, total) if shown.is_terminal else _Lines(shown, total)
    about = {**options.config(), "items": options.items, "arms": list(options.arms)}
    stopped = False
    try:
        # one trace, when tracing is on; SIGTERM stops the run as Ctrl+C does
        with bench_trace(about, options.model) as trace, sigterm_as_interrupt():
            try:
                run.play(progress, trace)
            except KeyboardInterrupt:  # Ctrl+C or SIGTERM: what finished is said, not lost
                errors.print(Text(_interrupted(options)), soft_wrap=True)
                stopped = True
            finally:
                if store is not None:
                    store.close()
            result = summary(
                run.records.values(), list(options.arms), options.items, run.calls.made
            )
            if trace is not None and not stopped:
                trace.report(result)
    finally:  # what was traced is sent, an interrupted bench's included
        flush()
    if stopped:
        return _stopped(options, result, store)
    _report(options, result, store, console)
    return ExitCode.DECIDED


def _check(options: Options) -> None:
    """Bad options are named before any model is asked."""
    if options.items > MAX_ITEMS:
        raise MootInputError("--items", [f"{options.items}: at most {MAX_ITEMS:,} items a run"])
    unknown = [a for a in options.arms if a not in ARMS]
    if unknown or not options.arms:
        raise MootInputError("--arms", [f"expected some of {', '.join(ARMS)}; got {options.arms}"])


def _interrupted(options: Options) -> str:
    if not options.out:
        return "moot bench: interrupted (with --out, finished items are kept for a rerun)"
    return (
        f"moot bench: interrupted; finished items are kept in {clean_line(options.out)}"
        " (the same command goes on from there)"
    )


def _stopped(options: Options, result: dict[str, Any], store: Store | None) -> int:
    """An interrupted bench: under ``--json`` stdout still holds its one object, saying so."""
    if options.as_json:
        if store is not None:
            result["out"] = str(store.folder)
        print(json.dumps({**result, "status": "interrupted"}))
    return ExitCode.INTERRUPTED


class _Run:
    """One bench run: the item arms it has still to play, and the records and calls so far."""

    def __init__(
        self, options: Options, setup: Setup, odds: OracleOdds | None, store: Store | None
    ) -> None:
        self.options, self.setup, self.odds, self.store = options, setup, odds, store
        self.records: dict[tuple[int, str], dict[str, Any]] = dict(store.done) if store else {}
        self.todo = [
            (i, arm)
            for i in range(options.items)
            for arm in options.arms
            if (i, arm) not in self.records
        ]
        self.calls = Calls()

    def play(self, progress: _Bar | _Lines, trace: BenchTrace | None) -> None:
        if isinstance(progress, _Bar):
            with progress.progress:
                asyncio.run(self._all(progress, trace))
        else:
            asyncio.run(self._all(progress, trace))

    async def _all(self, progress: _Bar | _Lines, trace: BenchTrace | None) -> None:
        gate = asyncio.Semaphore(max(1, self.options.concurrency))
        try:
            await asyncio.gather(
                *(self._one(gate, i, arm, progress, trace) for i, arm in self.todo)
            )
        finally:
            if self.odds is None:
                from tui.providers.registry import close_all

                await close_all()

    async def _one(
        self,
        gate: asyncio.Semaphore,
        index: int,
        arm: str,
        progress: _Bar | _Lines,
        trace: BenchTrace | None,
    ) -> None:
        async with gate:
            item = self.setup.task.item(index)
            store = self.store
            session = store.session(index, arm) if store is not None and arm in DEBATES else None
            if trace is not None:
                trace.run(index, arm, item.question)
            record = await play(self.setup, arm, item, self._providers(item), session)
            if trace is not None:
                trace.ran(record)
            self.records[(index, arm)] = record
            if store is not None:
                store.add(record)
            progress.done(record)

    def _providers(self, item: Item) -> Callable[[Debater], Provider]:
        calls = self.calls
        if self.odds is not None:
            oracle = Oracle(self.setup.task, item, self.odds, self.options.seed)
            return lambda d: Counted(oracle, calls)
        from tui.providers.registry import provider_for

        return lambda d: Counted(provider_for(d), calls)


def _preflight(setup: Setup, item: Item) -> None:
    from tui.providers.preflight import preflight

    problems = preflight(validate_spec(arm_spec(setup, "single", item)))
    if problems:
        raise MootInputError(f"--model {setup.model}", problems)


def _report(
    options: Options, result: dict[str, Any], store: Store | None, console: Console
) -> None:
    title = f"moot bench: {options.task} · {options.model} · {options.items} items"
    picture = drawing(result)
    if store is not None:
        write_svg(picture, store.folder / PLOT, title)
        result["out"] = str(store.folder)
    if options.as_json:
        print(json.dumps({**result, "status": "complete"}))  # the one object, never wrapped
        return
    if not console.is_terminal:  # a log or a pipe: the figures whole, never squeezed
        console.width = max(console.width, 120)
    console.print(table(result, clean_line(title)))
    console.print(picture)
    console.print(Text(f"new calls: {result['new_calls']}", style="dim"))
    if store is not None:
        console.print(
            Text(
                f"kept in {clean_line(store.folder)} (items.jsonl, sessions/, {PLOT})", style="dim"
            ),
            soft_wrap=True,
        )

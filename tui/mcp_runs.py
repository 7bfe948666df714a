"""The debates ``moot mcp`` runs and reads, and what its tools answer, without the MCP SDK.

An agent hands a spec (a path, or TOML text) and names sessions; this module
turns those into files, runs debates in the background in the usual sessions
folder (so the console's home screen and ``moot inbox`` list them like any
other), and answers with plain pydantic models the server gives as structured
output. It reads only what it is given: a session named without a folder is
looked up in the sessions folder and nowhere else, and a spec given as text may
not name files, since it has no folder of its own. An agent may be steered by
what it read, so every path it gives must lie (symlinks followed) in the sessions
folder or a folder the person named with ``--allow-read``, and a spec's MCP
commands start only when they said ``--allow-tools``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from tui.commands.inbox import awaits_a_person
from tui.engine.basics.bounded import SPEC_BYTES, TomlRefused, toml_document
from tui.engine.basics.errors import MootInputError, SpecError
from tui.engine.basics.safeio import FileRefused
from tui.engine.basics.vocab import DecisionChannel
from tui.engine.core.ports import Provider, ToolFailure
from tui.engine.core.records import Turn
from tui.engine.grounding.context import read_documents
from tui.engine.grounding.readroots import ReadRoots, real
from tui.engine.protocols import protocol_class
from tui.engine.record.live import LiveSession
from tui.engine.record.session import SessionData, load_session
from tui.engine.run.events import DecisionReached, Event, PhaseStarted, TurnCompleted
from tui.engine.specs.spec import Debater, Spec, read_spec_file, validate_spec
from tui.filekind import refuse_wrong_kind
from tui.notify import Notifier, notifier
from tui.telemetry import trace_session
from tui.tools.toolbox import run_tools

Status = Literal["running", "unfinished", "awaiting_decision", "decided", "failed"]
Asked = Literal["accepted", "declined", "cancelled", "unsupported"]
TEXT_SOURCE = "(TOML text given over MCP)"


# ------------------------------------------------------------------ answers
class SessionStatus(BaseModel):
    """Where one session stands, read from its file (and the live run, while one goes on)."""

    session: str = Field(description="the session file's path")
    title: str
    protocol: str
    status: Status = Field(
        description="running (in this server), unfinished (no result yet: stopped, "
        "`moot resume` continues it, or running in another process), awaiting_decision "
        "(escalated to a person), decided, or failed"
    )
    round: int = Field(description="the round of the latest turn (0 before the first)")
    phase: str | None = Field(description="the phase of the latest turn, or the one under way")
    turns: int
    votes: list[str] = Field(description="the votes the spec allows, for `decide`")
    value: str | None = Field(
        default=None,
        description="set when the protocol decides a value, not one of votes: "
        "what `decide`'s vote must be (a number in the spec's unit, say)",
    )
    tally: dict[str, int] = Field(description="the latest valid vote of each debater, counted")
    decision: str | None = None
    decision_rule: str | None = None
    decided_by: str | None = Field(default=None, description="rule or operator")
    decided_via: str | None = Field(
        default=None, description="set when an MCP client relayed the operator's decision"
    )
    rationale: str | None = None
    error: str | None = Field(default=None, description="why a run here failed")
    result: dict[str, Any] | None = Field(default=None, description="the whole [result] table")


class RunOutcome(SessionStatus):
    """``run``'s answer: the status, and what came of asking the client's user, if asked."""

    asked_user: Asked | None = Field(
        default=None,
        description="with wait, on an escalation: whether the client's user was asked for "
        "the decision (elicitation) and what they did",
    )


class InboxEntry(BaseModel):
    session: str
    title: str
    protocol: str
    decision_rule: str
    tally: dict[str, int]
    votes: list[str] = Field(description="the votes the spec allows, for `decide`")
    value: str | None = Field(
        default=None,
        description="set when the protocol decides a value, not one of votes: "
        "what `decide`'s vote must be",
    )
    turns: int
    rationale: str


class Inbox(BaseModel):
    """The sessions in the sessions folder that ended unresolved and wait for a person."""

    sessions: list[InboxEntry]


class Claim(BaseModel):
    where: str
    field: str
    ok: bool
    detail: str


class Verification(BaseModel):
    """Every claim the session file makes, re-checked from the file alone."""

    session: str
    ok: bool = Field(description="true when every claim holds")
    claims: list[Claim]
    failures: list[Claim]
    notes: list[str]


class Export(BaseModel):
    session: str
    format: Literal["markdown", "json", "adr"]
    text: str


# ------------------------------------------------------------------- inputs
def is_path(given: str) -> bool:
    """A session or spec named with a folder (or a leading dot) is given by path."""
    return "/" in given or os.sep in given or given.startswith(".")


def confined(given: str | Path, folder: Path, allow_read: Sequence[str] = ()) -> Path:
    """The real file ``given`` names, when it lies in the sessions folder or an
    ``--allow-read`` path; MootInputError naming it and the rule otherwise, before any read."""
    try:
        target = real(given)
    except FileRefused as err:
        raise MootInputError(str(given), [str(err)]) from None
    roots = ReadRoots.of(folder, allow_read)
    try:
        return roots.resolve(target)
    except FileRefused:  # its words are about a spec's documents; these are about the agent's
        points = "" if str(target) == str(given) else f"it leads to {target}, "
        beyond = " and every --allow-read path" if roots.allowed else ""
        raise MootInputError(
            str(given),
            [
                f"{points}outside the sessions folder ({roots.spec_folder}){beyond}, and "
                "moot mcp reads and writes nothing else (start it with --allow-read FOLDER "
                "to add a folder)"
            ],
        ) from None


def session_path(given: str, folder: Path, allow_read: Sequence[str] = ()) -> Path:
    """The real file ``given`` names: a bare name is looked up only in the sessions folder,
    and a path must lie there or in ``allow_read``."""
    given = given.strip()
    if not given:
        raise MootInputError("session", ["name a session: its path, or its file name"])
    if not is_path(given):
        given = str(folder / (given if given.endswith(".toml") else f"{given}.toml"))
    return confined(given, folder, allow_read)


def read_session(path: Path) -> SessionData:
    refuse_wrong_kind(str(path), "session")
    return load_session(path)


def read_spec(
    given: str, folder: Path, allow_read: Sequence[str] = ()
) -> tuple[Spec, dict[str, Any], str]:
    """The spec, its raw table and its source: a path, or TOML text (which names no files).

    A path must lie in the sessions folder ``folder`` or ``allow_read`` (``moot mcp
    --allow-read``); its files come from its own folder tree and ``allow_read`` only,
    as with ``moot run``.
    """
    if "\n" not in given and not given.lstrip().startswith("["):
        path = str(confined(given, folder, allow_read))
        refuse_wrong_kind(path, "spec")
        spec, raw = read_spec_file(path, allow_read)
        return spec, raw, path
    data = given.encode("utf-8")
    if len(data) > SPEC_BYTES:
        raise SpecError("spec", [f"the TOML text passes the limit of {SPEC_BYTES:,} bytes"])
    try:
        raw = toml_document(data)
    except TomlRefused as err:
        raise SpecError("spec", [str(err)]) from None
    spec = validate_spec(raw, "spec")
    named = [f"context[{i}]" for i, c in enumerate(spec.context) if c.file or c.glob]
    if spec.debate.artifact_file is not None:
        named.insert(0, "debate.artifact_file")
    if named:
        raise SpecError(
            "spec",
            [
                f"{key}: a spec given as text has no folder to read files from; "
                "give the spec's path instead, or put the text inline"
                for key in named
            ],
        )
    documents, problems = read_documents(spec, Path.cwd())  # inline text only, checked above
    if problems:
        raise SpecError("spec", problems)
    return spec.with_documents(documents), raw, TEXT_SOURCE


# --------------------------------------------------------------- snapshots
def _tally(data: SessionData) -> dict[str, int]:
    latest: dict[str, str] = {}
    for turn in data.turns:
        if not turn.invalid and turn.vote:
            latest[turn.speaker] = turn.vote
    tally = dict.fromkeys(data.spec.debate.vote_options, 0)
    for vote in latest.values():
        tally[vote] = tally.get(vote, 0) + 1
    return tally


def snapshot(data: SessionData, live: Running | None = None) -> SessionStatus:
    """The status of a loaded session; ``live`` is this server's run of it, if any."""
    result = data.result
    last: Turn | None = data.turns[-1] if data.turns else None
    status: Status
    if live is not None and live.error:
        status = "failed"
    elif live is not None and not live.ended:
        status = "running"
    elif result is None:
        status = "unfinished"
    elif awaits_a_person(data.result, data.actions):
        status = "awaiting_decision"
    else:
        status = "decided"
    r = result or {}
    value = protocol_class(data.spec).value_prompt(data.spec)
    return SessionStatus(
        session=str(data.path),
        title=data.spec.debate.title,
        protocol=data.spec.debate.protocol,
        status=status,
        round=live.round if live is not None and live.round else (last.round if last else 0),
        phase=live.phase if live is not None and live.phase else (last.phase if last else None),
        turns=len(data.turns),
        votes=[] if value is not None else data.spec.debate.vote_options,
        value=value,
        tally=_tally(data),
        decision=r.get("decision"),
        decision_rule=r.get("decision_rule"),
        decided_by=r.get("decided_by"),
        decided_via=r.get("decided_via"),
        rationale=r.get("rationale"),
        error=live.error if live is not None else None,
        result=result,
    )


# ------------------------------------------------------------ running here
@dataclass
class Running:
    """One debate this server started: its live session and the task running it."""

    session: LiveSession
    task: asyncio.Task[None] | None = None
    round: int = 0
    phase: str | None = None
    ended: bool = False
    error: str | None = None
    held: bool = False  # a `run` with wait keeps it open to ask its client for a decision
    closed: bool = False
    finish_trace: Callable[[], None] | None = None
    notifier: Notifier | None = None
    watchers: list[asyncio.Queue[Turn | None]] = field(default_factory=list)

    def on_event(self, event: Event) -> None:
        if isinstance(event, PhaseStarted):
            self.round, self.phase = event.round, event.phase
        elif isinstance(event, TurnCompleted) and not event.replayed:
            for queue in self.watchers:
                queue.put_nowait(event.turn)
        elif isinstance(event, DecisionReached):
            self.ended = True

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.finish_trace is not None:
                self.finish_trace()
            self.session.close()
            if self.notifier is not None:  # after any decision its client's user gave
                self.notifier.fire()


class Runs:
    """The debates this server runs, keyed by their file; each one's lock is released at its end."""

    def __init__(
        self,
        folder: Path,
        provider_for: Callable[[Debater], Provider],
        allow_read: Sequence[str] = (),
        *,
        allow_tools: bool = False,
        writes: bool = False,
    ) -> None:
        self.folder = folder
        self.provider_for = provider_for
        self.allow_read = tuple(allow_read)  # ``moot mcp --allow-read``: the only way out
        self.allow_tools = allow_tools  # ``moot mcp --allow-tools``: a spec's commands may start
        self.writes = writes  # ``moot mcp --allow-tool-writes``: listed calls that may write
        self._runs: dict[Path, Running] = {}

    def get(self, path: Path) -> Running | None:
        return self._runs.get(Path(os.path.realpath(path)))

    async def start(self, spec: Spec, raw: dict[str, Any], source: str, *, hold: bool) -> Running:
        """A new session file in the sessions folder, its debate started in the background.

        The spec's tools start first: one that cannot (a root outside the spec's folder
        and ``--allow-read``, an MCP command without ``--allow-tools``, an MCP server that
        will not run) refuses the run, naming it.
        """
        path = None if source == TEXT_SOURCE else source  # text has no folder to root tools in
        tools = run_tools(
            spec, path, self.allow_read, allow_tools=self.allow_tools, writes=self.writes
        )
        if tools is not None:
            try:
                await tools.start()
            except ToolFailure as err:
                await tools.aclose()
                raise MootInputError(f"{source}: tools", [err.message]) from None
        try:
            session = LiveSession.start(
                spec,
                raw,
                self.provider_for,
                directory=self.folder,
                spec_source=source,
                tools=tools,
            )
        except BaseException:
            if tools is not None:
                await tools.aclose()
            raise
        running = Running(session, held=hold)
        session.engine.subscribe(running.on_event)
        running.finish_trace = trace_session(session)
        running.notifier = notifier(session, "mcp")
        self._runs[Path(os.path.realpath(session.path))] = running
        running.task = asyncio.get_running_loop().create_task(self._drive(running))
        return running

    async def _drive(self, running: Running) -> None:
        try:
            await running.session.engine.run()
        except Exception as err:  # a write that failed, say: named in status, never raised
            running.error = f"{type(err).__name__}: {err}"
        finally:
            if running.session.tools is not None:  # stops the MCP servers the run started
                await running.session.tools.aclose()
            running.ended = True
            for queue in running.watchers:
                queue.put_nowait(None)
            if not running.held:
                running.close()

    def decide_live(
        self, running: Running, vote: str, rationale: str, via: DecisionChannel
    ) -> None:
        """Decide a run this server still holds open (its file is locked by it); ValueError
        names a refusal, exactly as the console's modal would."""
        running.session.engine.decide(vote, rationale, via)

    async def shutdown(self) -> None:
        """Stop every run still going (each file keeps its committed turns) and close them."""
        tasks = [r.task for r in self._runs.values() if r.task is not None and not r.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for running in self._runs.values():
            running.close()

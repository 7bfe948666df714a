"""``moot mcp``: moot's debates as MCP tools over stdio, on the official MCP Python SDK.

An agent that meets a decision it should not make alone convenes a debate with
``run``, leaves it in a person's inbox, and picks the decision up later with
``status``; ``decide``, ``verify`` and ``export`` work as their commands do.
Each tool has an input schema and structured output (the models in
``tui.mcp_runs``); a refusal is a tool error naming the reason, never a
traceback. A ``run`` with ``wait`` reports each turn as a progress notification
and, on an escalation, may ask the client's user for the decision (elicitation),
recorded as an operator decision relayed through MCP.

The SDK is the optional extra ``moot[mcp]``; nothing else imports this module.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.elicitation import render_elicitation_schema
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ToolAnnotations,
)
from pydantic import BaseModel, Field, create_model

from tui import __version__
from tui.commands.inbox import Awaiting, tally_text
from tui.engine.basics.errors import MootInputError, SessionError
from tui.engine.basics.vocab import DecisionChannel
from tui.engine.core.ports import Provider
from tui.engine.core.records import Turn
from tui.engine.record.session import SessionData, load_session
from tui.engine.specs.spec import Debater, Spec
from tui.mcp_runs import (
    Asked,
    Claim,
    Export,
    Inbox,
    InboxEntry,
    Running,
    RunOutcome,
    Runs,
    SessionStatus,
    Verification,
    read_session,
    read_spec,
    session_path,
    snapshot,
)
from tui.render.textsafe import clean_line

T = TypeVar("T")
ASKS = 3  # times the client's user is asked, a refused decision shown each time
ANSWER = "decision"  # the key of the one question a `run` may return
OUTCOMES: dict[str, Asked] = {"decline": "declined", "cancel": "cancelled"}
INSTRUCTIONS = (
    "moot runs structured debates between models and escalates to a person when they "
    "do not agree. Start one with run (a spec path or TOML text); a debate that ends "
    "awaiting_decision waits in the inbox until someone decides it (decide, or the "
    "person in moot's console). status, verify and export read a session by its path "
    "or its file name in the sessions folder. Paths must lie in the sessions folder or a "
    "folder the server was given with --allow-read; a spec's MCP commands start only when "
    "the server was started with --allow-tools."
)

SessionArg = Annotated[
    str,
    Field(
        description="the session file: its path (in the sessions folder or an --allow-read "
        "folder), or its file name in the sessions folder (looked up there and nowhere else)"
    ),
]


async def _read_status(
    path: Path, running: Running | None, reader: Callable[[Path], SessionData]
) -> SessionStatus:
    """The file read off the loop, beside this server's run of it: a run that ended while
    the file was read wrote its result before it ended, so the file is read again."""
    while True:
        was_running = running is not None and not running.ended
        data = await _off_loop(reader, path)
        if not (was_running and running is not None and running.ended):
            return snapshot(data, running)


async def _off_loop(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Blocking file work (reads, verify, exports) in a thread, off the protocol's loop."""
    return await anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))


def _refusals_as_errors(tool: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Bad input anywhere in a tool is a tool error naming it (as exit 2 would), never a crash."""

    @functools.wraps(tool)
    async def guarded(*args: Any, **kwargs: Any) -> T:
        try:
            return await tool(*args, **kwargs)
        except MootInputError as err:
            raise ToolError(clean_line(f"{err.source}: " + "; ".join(err.problems))) from None

    return guarded


def _turn_line(turn: Turn) -> str:
    vote = " INVALID" if turn.invalid else (f" vote {turn.vote}" if turn.vote else "")
    return clean_line(f"turn {turn.index}: r{turn.round} {turn.phase} {turn.speaker}{vote}")


def _decision_form(status: SessionStatus) -> type[BaseModel]:
    """The elicitation form: one of the spec's votes (else the value or answer), and why."""
    vote_type: Any = Literal[tuple(status.votes)] if status.votes else str
    what = "the decision" if status.votes else (status.value or "the answer")
    return create_model(
        "OperatorDecision",
        vote=(vote_type, Field(description=what)),
        rationale=(str, Field(description="why, in words (recorded with the decision)")),
    )


def _can_ask(ctx: Context) -> bool:
    """The client said it can put a form to its user (elicitation, form mode)."""
    caps = ctx.client_capabilities
    return caps is not None and caps.elicitation is not None


def _first_question(status: SessionStatus) -> str:
    return clean_line(
        f"moot: '{status.title}' ended unresolved ({status.decision_rule}; "
        f"{tally_text(status.tally)}). Decide it, or decline to leave it in the inbox."
    )


def _question(status: SessionStatus, message: str, *, asked: int) -> InputRequiredResult:
    """The decision form as a question the client answers by calling ``run`` again."""
    form = ElicitRequestFormParams(
        message=message, requested_schema=render_elicitation_schema(_decision_form(status))
    )
    return InputRequiredResult(
        input_requests={ANSWER: ElicitRequest(params=form)},
        request_state=json.dumps({"session": status.session, "asked": asked}),
    )


class MootServer:
    """The six tools over one sessions folder, and the debates this process runs."""

    def __init__(
        self,
        folder: Path,
        provider_for: Callable[[Debater], Provider],
        preflight: Callable[[Spec], list[str]] | None = None,
        allow_read: Sequence[str] = (),
        *,
        allow_tools: bool = False,
        tool_writes: bool = False,
    ) -> None:
        self.folder = folder
        self.runs = Runs(
            folder, provider_for, allow_read, allow_tools=allow_tools, writes=tool_writes
        )
        self.preflight = preflight
        self.mcp: MCPServer = MCPServer(
            "moot", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
        )
        read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
        writes = ToolAnnotations(destructive_hint=False, open_world_hint=False)
        for tool, hints in (
            (self.run, ToolAnnotations(destructive_hint=False)),
            (self.status, read_only),
            (self.inbox, read_only),
            (self.decide, writes),
            (self.verify, read_only),
            (self.export, read_only),
        ):
            description = inspect.cleandoc(tool.__doc__ or "")
            self.mcp.add_tool(_refusals_as_errors(tool), description=description, annotations=hints)

    # ------------------------------------------------------------------ run
    async def run(
        self,
        spec: Annotated[
            str,
            Field(
                description="the debate spec: the TOML text, or a path to its TOML file in "
                "the sessions folder or an --allow-read folder"
            ),
        ],
        ctx: Context,
        wait: Annotated[
            bool,
            Field(
                description="return when the debate ends or escalates (with progress "
                "notifications); otherwise return at once while it runs"
            ),
        ] = False,
    ) -> RunOutcome | InputRequiredResult:
        """Start a debate headless in the sessions folder; returns its session and status.

        With wait, an escalated debate may ask you (the client's user) for the decision.
        """
        if ctx.request_state is not None:  # the client's answer to the question asked below
            return await self._answered(ctx.request_state, ctx.input_responses or {})
        parsed, raw, source = await _off_loop(read_spec, spec, self.folder, self.runs.allow_read)
        if self.preflight is not None:
            problems = await anyio.to_thread.run_sync(self.preflight, parsed)
            if problems:
                raise ToolError(clean_line("preflight: " + "; ".join(problems)))
        running = await self.runs.start(parsed, raw, source, hold=wait)
        if not wait:
            return RunOutcome(**(await self._status_of(running)).model_dump())
        try:
            await self._follow(running, ctx)
            asked = None
            status = await self._status_of(running)
            if status.status == "awaiting_decision":
                if not _can_ask(ctx):
                    asked = "unsupported"
                elif not ctx.session.can_send_request:  # 2026-07-28 on: ask by returning
                    running.close()
                    return _question(status, _first_question(status), asked=1)
                else:
                    asked = await self._ask(running, ctx, status)
                status = await self._status_of(running)
            return RunOutcome(**status.model_dump(), asked_user=asked)
        finally:  # a wait the client gave up on leaves the debate running, as without wait
            running.held = False
            if running.task is None or running.task.done():
                running.close()

    async def _follow(self, running: Running, ctx: Context) -> None:
        """Wait for the run's end, one progress notification per completed turn."""
        queue: asyncio.Queue[Turn | None] = asyncio.Queue()
        running.watchers.append(queue)
        try:
            done = 0
            while not running.ended or not queue.empty():  # the run's end queues None
                turn = await queue.get()
                if turn is None:
                    break
                done += 1
                await ctx.report_progress(done, None, _turn_line(turn))
            if running.task is not None:
                await asyncio.shield(running.task)
        finally:
            running.watchers.remove(queue)

    async def _ask(self, running: Running, ctx: Context, status: SessionStatus) -> str:
        """Ask the client's user, mid-call, to decide an escalated run; a refusal is shown
        and asked again."""
        form = _decision_form(status)
        message = _first_question(status)
        for _ in range(ASKS):
            answer = await ctx.elicit(message, form)
            if answer.action != "accept":
                return OUTCOMES[answer.action]
            data = answer.data
            try:
                self.runs.decide_live(
                    running,
                    str(data.vote),  # type: ignore[attr-defined]
                    str(data.rationale),  # type: ignore[attr-defined]
                    DecisionChannel.MCP_ELICITATION,
                )
                return "accepted"
            except ValueError as refused:
                message = clean_line(f"moot refused that decision: {refused}. Decide again.")
        return "declined"

    async def _answered(
        self, state: str, responses: dict[str, Any]
    ) -> RunOutcome | InputRequiredResult:
        """The client's user answered the question a ``run`` returned (2026-07-28 on).

        The state is sealed by the SDK, and it must name a session this server ran.
        """
        try:
            asked_state = json.loads(state)
            path = Path(str(asked_state["session"]))
            asked = int(asked_state["asked"])
        except (ValueError, TypeError, KeyError):
            raise ToolError("that question was not asked by this server") from None
        if self.runs.get(path) is None:
            raise ToolError("that question was not asked by this server")
        answer = responses.get(ANSWER)
        data = await _off_loop(load_session, path)
        status = snapshot(data)
        if not isinstance(answer, ElicitResult) or answer.action != "accept":
            action = answer.action if isinstance(answer, ElicitResult) else "cancel"
            return RunOutcome(**status.model_dump(), asked_user=OUTCOMES[action])
        from tui.commands.decide import decide_session

        content = answer.content or {}
        try:
            await anyio.to_thread.run_sync(
                lambda: decide_session(
                    path,
                    str(content.get("vote", "")),
                    str(content.get("rationale", "")),
                    via=DecisionChannel.MCP_ELICITATION,
                    flag="",
                )
            )
        except MootInputError as refused:
            if asked >= ASKS:
                return RunOutcome(**status.model_dump(), asked_user="declined")
            again = clean_line(
                "moot refused that decision: " + "; ".join(refused.problems) + ". Decide again."
            )
            return _question(status, again, asked=asked + 1)
        data = await _off_loop(load_session, path)
        return RunOutcome(**snapshot(data).model_dump(), asked_user="accepted")

    async def _status_of(self, running: Running) -> SessionStatus:
        return await _read_status(running.session.path, running, load_session)

    # -------------------------------------------------------------- readers
    async def status(self, session: SessionArg) -> SessionStatus:
        """Where a session stands: status, round, phase, tally, the result and who decided."""
        path = session_path(session, self.folder, self.runs.allow_read)
        return await _read_status(path, self.runs.get(path), read_session)

    async def inbox(self) -> Inbox:
        """The sessions in the sessions folder that ended unresolved and await a person."""
        from tui.commands.inbox import awaiting

        found = await anyio.to_thread.run_sync(awaiting, self.folder)
        return Inbox(sessions=[await _off_loop(_inbox_entry, a) for a in found])

    async def verify(self, session: SessionArg) -> Verification:
        """Re-check every claim of a session from its file alone; ok when all hold."""
        from tui.engine.record.verify import verify_file

        path = session_path(session, self.folder, self.runs.allow_read)
        await _off_loop(read_session, path)  # the wrong kind of file is named, as moot verify does
        report = await _off_loop(verify_file, path)
        return Verification(
            session=str(path),
            ok=report.ok,
            claims=[Claim(**c.as_dict()) for c in report.claims],
            failures=[Claim(**c.as_dict()) for c in report.failures],
            notes=report.notes,
        )

    async def export(
        self,
        session: SessionArg,
        format: Annotated[
            Literal["markdown", "json", "adr"],
            Field(description="markdown (a report), json (machine-readable), adr (MADR layout)"),
        ] = "markdown",
    ) -> Export:
        """A session as a Markdown report, JSON, or an architecture decision record."""
        from tui.render.adr import to_adr
        from tui.render.export import to_json, to_markdown

        path = session_path(session, self.folder, self.runs.allow_read)
        data = await _off_loop(read_session, path)
        render = {"markdown": to_markdown, "json": to_json, "adr": to_adr}[format]
        text = await anyio.to_thread.run_sync(render, data)
        return Export(session=str(path), format=format, text=text)

    # --------------------------------------------------------------- decide
    async def decide(
        self,
        session: SessionArg,
        vote: Annotated[
            str,
            Field(description="one of the spec's votes, or the value status asks for"),
        ],
        rationale: Annotated[str, Field(description="why, in words; recorded with the vote")],
    ) -> SessionStatus:
        """Record the operator decision on a session awaiting one, by moot decide's rules.

        A refused decision (not awaiting, a vote the spec lacks, no rationale, a protocol
        veto) is an error naming the reason, and leaves the file as it was.
        """
        from tui.commands.decide import decide_session

        path = session_path(session, self.folder, self.runs.allow_read)
        running = self.runs.get(path)
        if running is not None and not running.closed:
            if not running.ended:
                raise ToolError(clean_line(f"{path}: not awaiting a decision: it is running"))
            try:
                self.runs.decide_live(running, vote, rationale, DecisionChannel.MCP)
            except ValueError as refused:
                raise ToolError(clean_line(f"{path}: {refused}")) from None
        else:
            await _off_loop(read_session, path)
            await _off_loop(decide_session, path, vote, rationale, via=DecisionChannel.MCP, flag="")
        data = await _off_loop(load_session, path)
        return snapshot(data, running)


def _inbox_entry(waiting: Awaiting) -> InboxEntry:
    """What ``decide`` takes for this session, from its spec as ``status`` gives it
    (an estimate asks for a value; a spec without ``votes`` has the default ones)."""
    try:
        status = snapshot(load_session(waiting.path))
        votes, value = status.votes, status.value
    except SessionError:  # listed all the same; decide names what is wrong with it
        votes, value = waiting.votes, None
    return InboxEntry(
        session=str(waiting.path),
        title=waiting.title,
        protocol=waiting.protocol,
        decision_rule=waiting.decision_rule,
        tally=waiting.vote_tally,
        votes=votes,
        value=value,
        turns=waiting.turns,
        rationale=waiting.rationale,
    )


async def stop(server: MootServer) -> None:
    """The end of serving: runs still going are stopped (their turns kept), providers closed."""
    from tui.providers.registry import close_all
    from tui.telemetry import flush

    await server.runs.shutdown()
    await close_all()
    flush()


async def serve_stdio(server: MootServer) -> None:
    """Serve until the client closes stdin."""
    try:
        await server.mcp.run_stdio_async()
    finally:
        await stop(server)

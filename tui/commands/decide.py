"""``moot decide``: an operator decision on an escalated session, without the console.

The same rules as the console's decide modal hold (a vote from the spec, a
rationale in words, the protocol's vetoes with their reason), and they are
checked on the file before anything is written, so a refused decision leaves
the file exactly as it was. An accepted one goes through the engine, which
journals it and rewrites the ``[result]`` as ``decided_by = "operator"``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tui.engine.basics.errors import MootInputError
from tui.engine.basics.vocab import ESCALATE, DecisionChannel
from tui.engine.core.ports import ProviderError, TokenSink, TurnReply, TurnRequest
from tui.engine.core.state import DebateState
from tui.engine.core.substance import rationale_problem
from tui.engine.protocols import protocol_class
from tui.engine.record.live import LiveSession
from tui.engine.record.replay import protocol_at
from tui.engine.record.session import SessionData, load_session
from tui.engine.specs.spec import Spec


class NoCalls:
    """The provider while deciding: replaying the record must never reach a model."""

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        raise ProviderError("internal", "moot decide makes no model calls")

    async def aclose(self) -> None:
        return None


def not_awaiting(data: SessionData) -> str | None:
    """Why this session is not waiting for an operator decision, or None if it is."""
    result = data.result
    if result is None:
        return (
            f"not awaiting a decision: it has no result yet (running, or interrupted: "
            f"`moot resume {data.path} --headless` continues it)"
        )
    if result.get("decision") != ESCALATE:
        return (
            f"already decided: {result.get('decision')} ({result.get('decision_rule')}, "
            f"by {result.get('decided_by')})"
        )
    return None


def answer_flag(spec: Spec) -> str:
    """The command line's flag for the decision: ``--value`` where it is a number."""
    return "--vote" if protocol_class(spec).value_prompt(spec) is None else "--value"


def flag_problem(spec: Spec, used: str) -> str | None:
    """``--vote`` given where a number is decided, or ``--value`` where a vote is: refused,
    since either passed the other's check (``--vote 8`` decided an estimate of 8)."""
    wanted = answer_flag(spec)
    if used == wanted:
        return None
    prompt = protocol_class(spec).value_prompt(spec)
    what = prompt if prompt is not None else f"a vote ({', '.join(spec.debate.vote_options)})"
    return f"{used}: this session decides {what}; give {wanted}"


def refusal(data: SessionData, vote: str, rationale: str, flag: str = "--") -> str | None:
    """Why the operator may not decide ``vote`` with ``rationale`` here, or None.

    ``flag`` prefixes the argument names in the reason: ``--vote`` (``--value`` for a
    protocol deciding a number) on the command line, ``vote`` for a tool call.
    """
    why = not_awaiting(data)
    if why:
        return why
    debate = data.spec.debate
    name = answer_flag(data.spec) if flag else "vote"
    if problem := protocol_class(data.spec).decision_problem(data.spec, vote):
        return f"{name}: {problem}"
    problem = rationale_problem(rationale, votes=debate.vote_options, motion=debate.motion)
    if problem:
        return f"{flag}rationale: {problem}"
    state = DebateState(data.spec, data.spec.max_rounds)
    for turn in data.turns:
        state.add(turn)
    veto = protocol_at(data.spec, data.turns).operator_veto(state, vote)
    return f"{name}: {vote!r} is refused: {veto}" if veto else None


async def _apply(
    session: LiveSession, vote: str, rationale: str, via: DecisionChannel | None
) -> None:
    await session.engine.run()  # replays the record back to its escalation; no calls
    try:
        session.engine.decide(vote, rationale, via)
    except ValueError as err:  # checked above; the engine has the last word
        raise MootInputError(str(session.path), [str(err)]) from None


def decide_session(
    path: str | Path,
    vote: str,
    rationale: str,
    *,
    via: DecisionChannel | None = None,
    flag: str = "--",
) -> dict[str, Any]:
    """Record the operator's decision in the session file; returns the new ``[result]``.

    MootInputError (exit 2) names the reason when the decision is refused.
    ``via`` records the channel (an MCP client) when it is not moot's own.
    """
    why = refusal(load_session(path), vote, rationale, flag)
    if why:
        raise MootInputError(str(path), [why])
    no_calls = NoCalls()
    session = LiveSession.resume(path, lambda _: no_calls)
    try:
        asyncio.run(_apply(session, vote, rationale, via))
        result = session.store.result
    finally:
        session.close()
    assert result is not None
    return result

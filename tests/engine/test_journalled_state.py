"""Every state change is journalled, and the state a resumed run shows comes from the journal.

The reported case: press ``p``, then ``e``, then "Add a round". The debate ran on
(escalating released the pause) but no ``resume`` was journalled, so a resumed
run replayed ``pause`` and showed PAUSED while turns 7 and 8 were written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import SCRIPTED, sequential_raw, until
from tui.engine import Engine, validate_spec
from tui.engine.basics.vocab import ESCALATE, DecidedBy, DecisionRule, OperatorAction, RunStatus
from tui.engine.core.state import Decision
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.run.events import Event, TurnStarted

sequential = partial(sequential_raw, consensus_threshold=3, turn_delay_ms=5)
Steps = Callable[[Engine], Awaitable[None]]


def status_at_each_live_turn(engine: Engine) -> list[tuple[int, str]]:
    """(turn number, status) as each live turn starts: what the header says while it runs."""
    seen: list[tuple[int, str]] = []

    def listen(event: Event) -> None:
        if isinstance(event, TurnStarted):
            seen.append((event.slot.index, str(engine.status)))

    engine.subscribe(listen)
    return seen


async def pause_escalate_extend(engine: Engine) -> None:
    """The issue's steps: p, e, then "Add a round"; turns go on after it."""
    task = asyncio.create_task(engine.run())
    await until(lambda: len(engine.state.turns) >= 2)
    engine.pause()
    engine.escalate()
    assert (await task).rule == "operator_escalation"
    engine.extend()
    await engine.run()


async def pause_then_decide(engine: Engine) -> None:
    task = asyncio.create_task(engine.run())
    await until(lambda: len(engine.state.turns) >= 2)
    engine.pause()
    engine.decide("revise", "The rollback plan is missing.")
    assert (await task).rule == "operator_decision"


async def paused_as_it_ended_then_extend(engine: Engine) -> None:
    """A pause pressed during the last turn: the rule ends the run with the gate shut."""
    task = asyncio.create_task(engine.run())
    await until(lambda: len(engine.state.turns) >= len(engine.spec.debaters) - 1)
    engine.pause()
    assert (await task).rule == "max_rounds_exhausted"
    engine.extend()  # "Add a round": the operator chose to go on
    await engine.run()


CASES: dict[str, tuple[dict[str, Any], Steps, list[str]]] = {
    "pause-escalate-extend": (
        sequential(max_rounds=1),
        pause_escalate_extend,
        ["pause", "resume", "escalate", "extend"],
    ),
    "pause-decide": (sequential(max_rounds=2), pause_then_decide, ["pause", "resume", "decide"]),
    "paused-at-end-extend": (
        sequential(max_rounds=1, phases=["proposal"]),
        paused_as_it_ended_then_extend,
        ["pause", "resume", "extend"],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_an_implicit_resume_is_journalled_and_turns_never_run_paused(name: str) -> None:
    raw, steps, journal = CASES[name]
    live = Engine(validate_spec(raw), lambda d: SCRIPTED)
    shown = status_at_each_live_turn(live)
    asyncio.run(asyncio.wait_for(steps(live), 20))
    assert [a["action"] for a in live.actions] == journal
    assert shown and all(status == RunStatus.LIVE for _, status in shown), shown


@pytest.mark.parametrize("name", list(CASES))
def test_resumed_after_any_turn_the_status_shown_is_the_status_running(name: str) -> None:
    """Quit after each turn and resume: no turn starts while the status says PAUSED, and
    the resumed run ends where the live one did, with the same journal."""
    raw, steps, journal = CASES[name]
    spec = validate_spec(raw)
    live = Engine(spec, lambda d: SCRIPTED)
    asyncio.run(asyncio.wait_for(steps(live), 20))
    last_action = max(a["after_turn"] for a in live.actions)
    for kept in range(last_action, len(live.state.turns) + 1):
        resumed = Engine(
            spec,
            lambda d: SCRIPTED,
            recorded_turns=live.state.turns[:kept],
            recorded_actions=[dict(a) for a in live.actions],
        )
        shown = status_at_each_live_turn(resumed)
        asyncio.run(asyncio.wait_for(resumed.run(), 10))
        assert all(status == RunStatus.LIVE for _, status in shown), (kept, shown)
        assert resumed.result()["decision_rule"] == live.result()["decision_rule"]
        assert len(resumed.state.turns) == len(live.state.turns)
        assert [a["action"] for a in resumed.actions] == journal


def test_a_file_journalled_before_the_fix_resumes_live_not_paused(tmp_path: Path) -> None:
    """pause, escalate, extend with no resume (what 0.2 wrote): the escalate released the
    pause, so the resumed run shows LIVE, runs its turns, and a p pauses (not resumes)."""
    raw = sequential(max_rounds=1)
    path = tmp_path / "s.toml"

    async def old_console() -> int:
        session = LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=path)
        engine, log = session.engine, session.engine.operator
        task = asyncio.create_task(engine.run())
        await until(lambda: len(engine.state.turns) >= 2)
        # As 0.2 did it: the pause, then an escalate that opened the gate unjournalled.
        log.record(OperatorAction.PAUSE)
        log.gate.clear()
        log.record(OperatorAction.ESCALATE)
        log.gate.set()
        log.halt(Decision(ESCALATE, DecisionRule.OPERATOR_ESCALATION, DecidedBy.OPERATOR))
        await task
        log.record(OperatorAction.EXTEND, max_rounds=2)
        session.close()
        return len(engine.state.turns)

    recorded = asyncio.run(old_console())
    assert [a["action"] for a in load_session(path).actions] == ["pause", "escalate", "extend"]

    async def reopen() -> None:
        session = LiveSession.resume(path, lambda d: SCRIPTED)
        shown = status_at_each_live_turn(session.engine)
        task = asyncio.create_task(session.engine.run())
        await until(lambda: len(session.engine.state.turns) > recorded)
        session.engine.pause()  # p on a running debate pauses it
        assert session.engine.status == RunStatus.PAUSED
        session.engine.resume()
        await asyncio.wait_for(task, 10)
        session.close()
        assert shown and all(status == RunStatus.LIVE for _, status in shown), shown

    asyncio.run(reopen())
    assert [a["action"] for a in load_session(path).actions][3:] == ["pause", "resume"]

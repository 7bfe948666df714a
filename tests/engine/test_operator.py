"""Operator controls on the engine: pause, resume, note, escalate, decide, extend."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

import pytest

from tests.helpers import SCRIPTED, sequential_raw, until, with_script
from tui.engine import Engine, validate_spec
from tui.engine.core.ports import ProviderError, TurnReply, TurnRequest
from tui.engine.core.schedule import Slot
from tui.engine.run.events import TurnCompleted, TurnStarted
from tui.engine.run.turns import FailureAction, FailureChoice


class Recording:
    """Wraps the scripted provider and keeps every prompt it was sent."""

    def __init__(self) -> None:
        self.requests: list[TurnRequest] = []

    async def complete(self, request: TurnRequest, on_token: Any) -> TurnReply:
        self.requests.append(request)
        return await SCRIPTED.complete(request, on_token)

    async def aclose(self) -> None:
        return None


# Short runs: a stuck wait fails after 5 s.
wait_until = partial(until, timeout=5.0)
sequential = partial(sequential_raw, consensus_threshold=2, turn_delay_ms=20)


async def test_pause_stops_the_next_turn_from_starting() -> None:
    engine = Engine(validate_spec(sequential(max_rounds=1)), lambda d: SCRIPTED)
    started: list[int] = []
    engine.subscribe(lambda e: started.append(e.slot.index) if isinstance(e, TurnStarted) else None)
    task = asyncio.create_task(engine.run())
    await wait_until(lambda: len(engine.state.turns) >= 1)
    engine.pause()
    assert engine.status == "PAUSED"
    in_flight = set(started)
    # The turn already in flight may finish; then nothing new may start.
    await wait_until(lambda: len(engine.state.turns) == len(in_flight))
    for _ in range(200):
        await asyncio.sleep(0)
    assert set(started) == in_flight and not task.done()
    engine.resume()
    decision = await asyncio.wait_for(task, 5)
    assert decision.rule == "max_rounds_exhausted"
    assert len(engine.state.turns) == 12
    assert [a["action"] for a in engine.actions] == ["pause", "resume"]


async def test_note_reaches_the_next_turn_prompt() -> None:
    rec = Recording()
    engine = Engine(validate_spec(sequential(max_rounds=1)), lambda d: rec)
    task = asyncio.create_task(engine.run())
    await wait_until(lambda: len(engine.state.turns) >= 1)
    engine.note("Consider the on-call load.")
    await asyncio.wait_for(task, 5)
    later = [t for t in engine.state.turns if "note:1" in t.saw]
    assert later and later[0].index >= 1
    assert "note:1" not in engine.state.turns[0].saw
    noted = [r for r in rec.requests if "Consider the on-call load." in r.messages[1]["content"]]
    assert len(noted) == len(later)
    assert engine.actions[0]["action"] == "note" and engine.actions[0]["text"]


async def test_decide_mid_debate_records_operator_decision() -> None:
    engine = Engine(validate_spec(sequential(max_rounds=3)), lambda d: SCRIPTED)
    task = asyncio.create_task(engine.run())
    await wait_until(lambda: len(engine.state.turns) >= 2)
    engine.decide("revise", "The backfill risk is real.")
    decision = await asyncio.wait_for(task, 5)
    r = engine.result()
    assert (decision.decision, r["decision_rule"], r["decided_by"]) == (
        "revise",
        "operator_decision",
        "operator",
    )
    assert r["rationale"] == "The backfill risk is real."
    assert len(engine.state.turns) < 12


async def test_decide_requires_known_vote_and_rationale() -> None:
    engine = Engine(validate_spec(sequential(max_rounds=1)), lambda d: SCRIPTED)
    with pytest.raises(ValueError, match="rationale"):
        engine.decide("release", "   ")
    with pytest.raises(ValueError, match="not one of"):
        engine.decide("maybe", "because")


async def test_escalate_stops_unresolved_then_operator_decides() -> None:
    engine = Engine(validate_spec(sequential(max_rounds=3)), lambda d: SCRIPTED)
    task = asyncio.create_task(engine.run())
    await wait_until(lambda: len(engine.state.turns) >= 1)
    engine.escalate()
    decision = await asyncio.wait_for(task, 5)
    assert (decision.decision, decision.rule) == ("escalate", "operator_escalation")
    assert engine.status == "AWAITING_OPERATOR"
    engine.decide("release", "Ship with the flag.")
    assert engine.result()["decided_by"] == "operator"
    assert engine.status == "ENDED"


async def test_extend_adds_one_round_and_continues() -> None:
    engine = Engine(
        validate_spec(sequential(max_rounds=1, phases=["proposal"])), lambda d: SCRIPTED
    )
    first = await engine.run()
    assert first.rule == "max_rounds_exhausted" and len(engine.state.turns) == 3
    engine.extend()
    second = await engine.run()
    assert second.rule == "max_rounds_exhausted"
    assert len(engine.state.turns) == 6 and engine.state.max_rounds == 2
    assert [t.round for t in engine.state.turns] == [1, 1, 1, 2, 2, 2]


async def test_provider_failure_choices() -> None:
    raw = with_script(sequential(max_rounds=1, phases=["proposal"]), "b", fail=[1])
    spec = validate_spec(raw)

    async def escalate(slot: Slot, err: ProviderError) -> FailureChoice:
        return FailureChoice(FailureAction.ESCALATE)

    engine = Engine(spec, lambda d: SCRIPTED, on_failure=escalate)
    d = await engine.run()
    assert (d.decision, d.rule) == ("escalate", "provider_failure")
    assert engine.result()["failed_speaker"] == "b"
    assert len(engine.state.turns) == 1  # the failed turn is not recorded; resume retries it

    async def skip(slot: Slot, err: ProviderError) -> FailureChoice:
        return FailureChoice(FailureAction.SKIP)

    engine = Engine(spec, lambda d: SCRIPTED, on_failure=skip)
    await engine.run()
    assert engine.state.turns[1].invalid and "provider failure" in (
        engine.state.turns[1].error or ""
    )

    calls = []

    async def replace(slot: Slot, err: ProviderError) -> FailureChoice:
        calls.append(slot.speaker)
        return FailureChoice(FailureAction.REPLACE, "scripted")

    engine = Engine(spec, lambda d: SCRIPTED, on_failure=replace)
    seen: list[str] = []
    engine.subscribe(
        lambda e: seen.append(e.turn.speaker) if isinstance(e, TurnCompleted) else None
    )
    await engine.run()
    assert calls == ["b"] and seen == ["a", "b", "c"]
    assert not engine.state.turns[1].invalid
    assert engine.actions[-1]["action"] == "replace_model"


def test_a_failure_choice_names_a_model_only_to_replace() -> None:
    assert FailureChoice(FailureAction.REPLACE, "local").model == "local"
    with pytest.raises(ValueError):
        FailureChoice(FailureAction.REPLACE)
    with pytest.raises(ValueError):
        FailureChoice(FailureAction.RETRY, "local")

"""Resume replays every recorded operator action, so the run goes on where the operator left it.

The reported case: escalate, "Add a round", let turns pass, quit; resuming stopped
at the escalation and wrote ``turns = 6`` while 15 turns were in the file.
"""

from __future__ import annotations

import asyncio
import shutil
import tomllib
from collections.abc import Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import SCRIPTED, adversary_raw, sequential_raw, until, with_script
from tui.cli import main
from tui.engine import Engine, validate_spec
from tui.engine.core.ports import ProviderError
from tui.engine.core.schedule import Slot
from tui.engine.core.tally import count
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.run.events import Event, TurnStarted
from tui.engine.run.turns import FailureAction, FailureChoice
from tui.engine.specs.spec import Spec
from tui.exitcodes import ExitCode

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AGREE = (
    "decision",
    "decision_rule",
    "decided_by",
    "rationale",
    "turns",
    "rounds_run",
    "max_rounds",
    "vote_tally",
    "final_votes",
    "speaker_schedule",
    "phase_sequence",
    "invalid_turns",
)


def exhausted_example(delay_ms: int = 20) -> dict[str, Any]:
    raw = tomllib.loads((ROOT / "sessions/examples/scripted-exhausted.toml").read_text())
    for d in raw["debaters"]:
        d["script"]["turn_delay_ms"] = delay_ms
    return raw


def assert_result_matches_turns(path: Path) -> dict[str, Any]:
    """``[result]`` agrees with the turns in the same file."""
    data = load_session(path)
    result = data.result
    assert result is not None
    turns = data.turns
    assert result["turns"] == len(turns)
    assert result["rounds_run"] == max(t.round for t in turns)
    assert result["speaker_schedule"] == [t.speaker for t in turns]
    latest: dict[str, str] = {}
    for t in turns:
        if t.vote and not t.invalid:
            latest[t.speaker] = t.vote
    assert result["vote_tally"] == count(latest, data.spec.debate.votes)
    assert result["max_rounds"] >= result["rounds_run"]
    return result


async def _kill(task: asyncio.Task[Any]) -> None:
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass


def test_escalate_then_add_a_round_then_quit_resumes_past_the_escalation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = exhausted_example()
    path = tmp_path / "s.toml"

    async def operator() -> int:
        session = LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=path)
        engine = session.engine
        task = asyncio.create_task(engine.run())
        await until(lambda: len(engine.state.turns) >= 4)
        engine.escalate()
        assert (await task).rule == "operator_escalation"
        escalated_at = len(engine.state.turns)
        engine.extend()  # "Add a round"
        task = asyncio.create_task(engine.run())
        await until(lambda: len(engine.state.turns) >= escalated_at + 6)
        await _kill(task)  # quit mid-run
        session.close()
        return escalated_at

    escalated_at = asyncio.run(operator())
    before = load_session(path)
    assert before.result is None and len(before.turns) >= escalated_at + 6

    assert main(["resume", str(path), "--headless"]) == ExitCode.UNRESOLVED
    capsys.readouterr()
    result = assert_result_matches_turns(path)
    assert (result["decision_rule"], result["max_rounds"], result["rounds_run"]) == (
        "max_rounds_exhausted",
        3,
        3,
    )
    reference = Engine(
        validate_spec({**raw, "debate": {**raw["debate"], "max_rounds": 3}}), lambda d: SCRIPTED
    )
    asyncio.run(reference.run())
    assert result["speaker_schedule"] == [t.speaker for t in reference.state.turns]
    assert [t.index for t in load_session(path).turns][: len(before.turns)] == [
        t.index for t in before.turns
    ]


def test_opening_such_a_file_writes_no_result_before_the_run_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    shutil.copyfile(FIXTURES / "session-0.1.0-escalate-extend.toml", path)
    recorded = len(load_session(path).turns)
    session = LiveSession.resume(path, lambda d: SCRIPTED)  # what the console does
    seen: list[object] = []

    def first_live_turn(event: Event) -> None:
        if isinstance(event, TurnStarted) and not seen:
            seen.append(session.store.result)

    session.engine.subscribe(first_live_turn)
    try:
        asyncio.run(session.engine.run())
    finally:
        session.close()
    assert seen == [None]  # nothing was written while the recorded turns replayed
    result = assert_result_matches_turns(path)
    assert result["turns"] > recorded


def test_a_0_1_0_file_with_escalate_and_extend_resumes_headless(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.toml"
    shutil.copyfile(FIXTURES / "session-0.1.0-escalate-extend.toml", path)
    old = load_session(path)
    assert old.upgraded_from == "0.1.0" and len(old.turns) == 12
    assert [a["action"] for a in old.actions] == ["note", "escalate", "extend"]
    assert main(["resume", str(path), "--headless"]) == ExitCode.UNRESOLVED
    capsys.readouterr()
    result = assert_result_matches_turns(path)
    assert (result["decision_rule"], result["max_rounds"], result["rounds_run"]) == (
        "max_rounds_exhausted",
        3,
        3,
    )
    assert [a["action"] for a in load_session(path).actions] == ["note", "escalate", "extend"]


# ------------------------------------------------ every action, killed at every turn

Scenario = Callable[[Engine], Coroutine[Any, Any, None]]


sequential = partial(sequential_raw, consensus_threshold=3, turn_delay_ms=5)


async def escalate_mid_phase_then_extend(engine: Engine) -> None:
    task = asyncio.create_task(engine.run())
    await until(lambda: len(engine.state.turns) >= 2)
    engine.note("Count the on-call pages.")
    await until(lambda: len(engine.state.turns) >= 4)
    engine.escalate()
    await task
    engine.extend()
    await engine.run()


async def exhausted_then_extend_twice(engine: Engine) -> None:
    await engine.run()
    engine.extend()
    await engine.run()
    engine.extend()
    await engine.run()


async def escalate_then_decide(engine: Engine) -> None:
    task = asyncio.create_task(engine.run())
    await until(lambda: len(engine.state.turns) >= 5)
    engine.escalate()
    await task
    engine.decide("revise", "The rollback plan is missing.")


async def pause_resume_swap_and_note(engine: Engine) -> None:
    await engine.run()  # exhausted; the operator steers, then adds a round
    engine.pause()
    engine.replace_model("b", "scripted-b2")
    engine.note("Mind the budget.")
    engine.resume()
    engine.extend()
    await engine.run()


async def gate_escalates_then_extend(engine: Engine) -> None:
    first = await engine.run()  # the critic never releases: the release gate escalates
    assert first.rule == "release_gate"
    engine.extend()
    assert (await engine.run()).rule == "critic_release"


async def skip_a_failed_turn(engine: Engine) -> None:
    await engine.run()


async def _skip(slot: Slot, error: ProviderError) -> FailureChoice:
    return FailureChoice(FailureAction.SKIP)


SCENARIOS: dict[str, tuple[dict[str, Any], Scenario]] = {
    "escalate-extend": (sequential(max_rounds=2), escalate_mid_phase_then_extend),
    "exhausted-extend": (
        sequential(max_rounds=1, phases=["proposal"]),
        exhausted_then_extend_twice,
    ),
    "escalate-decide": (sequential(max_rounds=3), escalate_then_decide),
    "pause-swap-note": (sequential(max_rounds=1), pause_resume_swap_and_note),
    "gate-extend": (
        adversary_raw(
            ["release"],
            weaknesses=[["No rollback is named."]] * 3 + [[]],
            verdicts=["defects_found"] * 3 + ["no_defect_found"],
            scores=[10, 10, 10, 90],
        ),
        gate_escalates_then_extend,
    ),
    "skip": (with_script(sequential(max_rounds=1), "b", fail=[1]), skip_a_failed_turn),
}


def _facts(engine: Engine) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    result = engine.result()
    turns = [
        (t.index, t.speaker, t.model, t.vote, t.invalid, "note:1" in t.saw)
        for t in engine.state.turns
    ]
    return {k: result.get(k) for k in AGREE}, turns


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_run_killed_after_any_turn_resumes_to_the_same_end(name: str) -> None:
    raw, scenario = SCENARIOS[name]
    spec: Spec = validate_spec(raw)
    live = Engine(spec, lambda d: SCRIPTED, on_failure=_skip)
    asyncio.run(scenario(live))
    assert live.actions, "the scenario journals at least one action"
    expected = _facts(live)
    # A skip is written with the invalid turn it stands for, so that turn is kept too.
    last_action = max(a["after_turn"] + (a["action"] == "skip") for a in live.actions)
    for kept in range(last_action, len(live.state.turns) + 1):
        resumed = Engine(
            spec,
            lambda d: SCRIPTED,
            recorded_turns=live.state.turns[:kept],
            recorded_actions=[dict(a) for a in live.actions],
            on_failure=_skip,
        )
        asyncio.run(resumed.run())
        assert _facts(resumed) == expected, f"killed after turn {kept}"
        assert [a["action"] for a in resumed.actions] == [a["action"] for a in live.actions]


def _left_paused(path: Path) -> Path:
    """A session paused after two turns, then killed: what quitting a paused console leaves."""
    raw = sequential(max_rounds=1)

    async def pause_and_quit() -> None:
        session = LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=path)
        task = asyncio.create_task(session.engine.run())
        await until(lambda: len(session.engine.state.turns) >= 2)
        session.engine.pause()
        await _kill(task)
        session.close()

    asyncio.run(pause_and_quit())
    return path


def test_a_session_left_paused_resumes_paused_until_the_operator_resumes(tmp_path: Path) -> None:
    path = _left_paused(tmp_path / "p.toml")
    recorded = len(load_session(path).turns)

    async def reopen() -> None:
        session = LiveSession.resume(path, lambda d: SCRIPTED)
        started: list[int] = []
        session.engine.subscribe(
            lambda e: started.append(e.slot.index) if isinstance(e, TurnStarted) else None
        )
        task = asyncio.create_task(session.engine.run())
        await until(lambda: session.engine.status == "PAUSED")
        for _ in range(100):
            await asyncio.sleep(0)
        assert started == [] and len(session.engine.state.turns) == recorded
        session.engine.resume()
        await asyncio.wait_for(task, 10)
        session.close()

    asyncio.run(reopen())
    assert_result_matches_turns(path)
    assert [a["action"] for a in load_session(path).actions] == ["pause", "resume"]


def test_headless_resume_of_a_paused_session_continues_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _left_paused(tmp_path / "p.toml")
    code = main(["resume", str(path), "--headless"])
    out = capsys.readouterr().out
    assert code in (ExitCode.DECIDED, ExitCode.UNRESOLVED)
    assert "paused" in out
    assert_result_matches_turns(path)
    assert [a["action"] for a in load_session(path).actions] == ["pause", "resume"]

"""protocol_at: the protocol state a replay shows is the one the engine had at that turn."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import run_engine
from tui.engine.protocols.challenge import ChallengeProtocol
from tui.engine.protocols.refine import RefineProtocol
from tui.engine.record.replay import protocol_at
from tui.engine.specs.spec import read_spec_file

EXAMPLES = Path(__file__).resolve().parents[2] / "sessions" / "examples"


def test_refine_judge_rounds_rebuilt_from_the_recorded_turns() -> None:
    spec, _ = read_spec_file(EXAMPLES / "scripted-refine.toml")
    engine, _ = run_engine(spec)
    live = engine.protocol
    assert isinstance(live, RefineProtocol) and len(live.rounds) == 3
    rebuilt = protocol_at(spec, engine.state.turns)
    assert isinstance(rebuilt, RefineProtocol)
    assert rebuilt.rounds == live.rounds
    assert rebuilt.incumbent is not None and live.incumbent is not None
    assert rebuilt.incumbent.index == live.incumbent.index


def test_a_cursor_inside_a_phase_leaves_that_phase_open() -> None:
    spec, _ = read_spec_file(EXAMPLES / "scripted-refine.toml")
    engine, _ = run_engine(spec)
    turns = engine.state.turns
    first_judgment = next(i for i, t in enumerate(turns) if t.kind == "judgment")
    judges = len(spec.debate.judges or [])
    mid = protocol_at(spec, turns[: first_judgment + judges - 1])  # one judge still to speak
    done = protocol_at(spec, turns[: first_judgment + judges])
    assert isinstance(mid, RefineProtocol) and isinstance(done, RefineProtocol)
    assert mid.rounds == [] and len(done.rounds) == 1
    assert done.rounds[0]["incumbent_turn"] == turns[0].index  # author A's candidate


def test_challenges_rebuilt_match_the_engine() -> None:
    spec, _ = read_spec_file(EXAMPLES / "scripted-challenge.toml")
    engine, _ = run_engine(spec)
    live = engine.protocol
    rebuilt = protocol_at(spec, engine.state.turns)
    assert isinstance(live, ChallengeProtocol) and isinstance(rebuilt, ChallengeProtocol)
    assert live.challenges and rebuilt.challenges == live.challenges
    assert rebuilt.unresolved() == live.unresolved()

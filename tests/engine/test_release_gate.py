"""Code owns the release gate: a model's word is a request, never the decision."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tests.helpers import adversary_raw, run_engine
from tui.engine import SpecError, validate_spec
from tui.engine.record.session import load_session

WEAKNESS = "The plan never says how a failed token switch is rolled back."


def reported_case(**debate: Any) -> dict[str, Any]:
    """The critic asks for release while it finds defects and scores the plan 10."""
    raw = adversary_raw(
        ["release"],
        weaknesses=[[WEAKNESS]],
        verdicts=["defects_found"],
        scores=[10],
    )
    raw["debate"].update(debate)
    return raw


def test_a_release_request_on_a_defective_plan_is_refused_then_escalated() -> None:
    engine, _ = run_engine(reported_case())
    r: dict[str, Any] = dict(engine.result())
    assert (r["decision"], r["decision_rule"]) == ("escalate", "release_gate")
    assert r["rounds_run"] == 3 and r["turns"] == 6  # revised while rounds remained
    critiques = [t for t in engine.state.turns if t.phase == "critique"]
    assert [t.derived["routing_requested"] for t in critiques] == ["release"] * 3
    assert [t.derived["routing_decision"] for t in critiques] == ["revise", "revise", "escalate"]
    assert critiques[0].derived["release_gate"] == {
        "pass": False,
        "reasons": ["1 weakness left open", "score 10 is below release_score 80"],
    }
    assert r["routing_requested"] == "release" and r["routing_decision"] == "escalate"
    assert r["release_refused"] == critiques[-1].derived["release_gate"]["reasons"]


def test_no_defect_found_below_release_score_is_not_released() -> None:
    raw = adversary_raw(["release"], scores=[50])
    engine, _ = run_engine(raw)
    r: dict[str, Any] = dict(engine.result())
    assert (r["decision"], r["decision_rule"]) == ("escalate", "release_gate")
    assert r["release_refused"] == ["score 50 is below release_score 80"]


def test_release_score_is_the_specs_to_set() -> None:
    raw = adversary_raw(["release"], scores=[50])
    raw["debate"]["release_score"] = 50
    engine, _ = run_engine(raw)
    r: dict[str, Any] = dict(engine.result())
    assert (r["decision"], r["decision_rule"]) == ("release", "critic_release")
    assert engine.state.turns[1].derived["release_gate"] == {"pass": True, "reasons": []}
    assert r["routing_requested"] == r["routing_decision"] == "release"


def test_a_clean_critique_at_the_score_is_released() -> None:
    engine, _ = run_engine(adversary_raw(["release"], scores=[80]))
    r = engine.result()
    assert (r["decision"], r["decision_rule"], r["rounds_run"]) == ("release", "critic_release", 1)


def test_a_revise_request_is_kept_even_when_the_gate_would_pass() -> None:
    clean = {"weaknesses": [[], []], "verdicts": ["no_defect_found"] * 2, "scores": [90, 90]}
    engine, _ = run_engine(adversary_raw(["revise", "release"], **clean))
    r: dict[str, Any] = dict(engine.result())
    assert r["revisions"] == 1 and r["decision"] == "release"
    assert engine.state.turns[1].derived["routing_decision"] == "revise"


def test_an_extra_round_after_a_refused_release_is_played() -> None:
    import asyncio

    engine, _ = run_engine(reported_case(max_rounds=1))
    assert engine.decision is not None and engine.decision.rule == "release_gate"
    engine.extend()
    asyncio.run(engine.run())
    r = engine.result()
    assert (r["decision_rule"], r["rounds_run"]) == ("release_gate", 2)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (101, "debate.release_score: Input should be less than or equal to 100"),
        (-1, "debate.release_score: Input should be greater than or equal to 0"),
        ("high", "debate.release_score: Input should be a valid integer"),
    ],
)
def test_release_score_is_checked_by_key_path(value: Any, problem: str) -> None:
    raw = adversary_raw(["release"])
    raw["debate"]["release_score"] = value
    with pytest.raises(SpecError) as info:
        validate_spec(raw)
    assert any(p.startswith(problem) for p in info.value.problems), info.value.problems


def test_release_score_belongs_to_the_adversary_protocol() -> None:
    raw = {
        "debate": {"title": "t", "motion": "Ship the plan?", "release_score": 90},
        "debaters": [{"id": "a", "model": "scripted"}, {"id": "b", "model": "scripted"}],
    }
    with pytest.raises(SpecError) as info:
        validate_spec(raw)
    assert "debate.release_score: not used by the debate protocol" in info.value.problems


def test_the_reported_case_through_the_cli(tmp_path: Path) -> None:
    spec, out = tmp_path / "gate.toml", tmp_path / "gate-session.toml"
    spec.write_text(tomli_w.dumps(reported_case(max_rounds=2)))
    r = subprocess.run(
        [sys.executable, "-m", "tui", "run", str(spec), "--headless", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 3, r.stdout + r.stderr  # unresolved: the operator decides
    result = load_session(out).result
    assert result is not None
    assert (result["decision"], result["decision_rule"]) == ("escalate", "release_gate")
    assert tomllib.loads(out.read_text())["result"]["routing_requested"] == "release"


# ---------------------------------------------------------------- challenge
def _challenge(second: dict[str, Any], **debate: Any) -> dict[str, Any]:
    """Round 1 raises C1.1; round 2's report is ``second``."""
    from tests.engine.test_challenge import C_CRIT, spec_raw

    first = {"challenges": [C_CRIT], "verdict": "objections", "convergence": "continue"}
    return spec_raw([first, second], **debate)


NO_OBJECTIONS_BUT_OPEN = {
    "challenges": [],
    "verdict": "no_objections",
    "convergence": "converging",
    "assessments": [{"challenge_id": "C1.1", "status": "unaddressed"}],
}


def test_no_objections_with_a_challenge_left_open_is_not_a_release() -> None:
    engine, _ = run_engine(_challenge(NO_OBJECTIONS_BUT_OPEN, max_rounds=2))
    r: dict[str, Any] = dict(engine.result())
    assert (r["decision"], r["decision_rule"]) == ("escalate", "release_gate")
    assert r["unresolved_challenges"] == ["C1.1"]
    report = engine.state.turns[2]
    assert report.derived["release_gate"] == {
        "pass": False,
        "reasons": ["C1.1 is still unaddressed"],
    }


def test_no_objections_with_every_challenge_closed_releases() -> None:
    closed = {
        **NO_OBJECTIONS_BUT_OPEN,
        "assessments": [{"challenge_id": "C1.1", "status": "addressed"}],
    }
    engine, _ = run_engine(_challenge(closed, max_rounds=2))
    r = engine.result()
    assert (r["decision"], r["decision_rule"]) == ("release", "no_objections")
    assert engine.state.turns[2].derived["release_gate"] == {"pass": True, "reasons": []}

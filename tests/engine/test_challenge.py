"""The challenge protocol: evidence-backed challenges, defense, assessments, modes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.helpers import run_engine
from tui.engine import validate_spec
from tui.engine.protocols.challenge import CHALLENGE_REPORT, ChallengeReport, Defense

ARTIFACT = "Deploy on Friday at 17:00. Rollback: restore last night's backup."

C_CRIT = {
    "category": "reliability",
    "concern": "Restoring a backup loses a day of writes.",
    "evidence": "restore last night's backup",
    "severity": "critical",
    "recommendation": "Use a reversible migration instead.",
}
C_MINOR = {
    "category": "process",
    "concern": "Friday 17:00 leaves no staff for the weekend.",
    "evidence": "Deploy on Friday at 17:00",
    "severity": "minor",
    "recommendation": "Deploy Tuesday morning.",
}


def spec_raw(
    adversary_turns: list[dict[str, Any]],
    defender_turns: list[dict[str, Any]] | None = None,
    **debate: Any,
) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "debate": {
            "title": "Challenge",
            "motion": "Deployment plan for the billing service.",
            "protocol": "challenge",
            "artifact": ARTIFACT,
            "defender": "owner",
            "adversary": "red",
            **debate,
        },
        "debaters": [
            {"id": "owner", "model": "scripted", "script": {"turns": defender_turns or []}},
            {
                "id": "red",
                "model": "scripted",
                "family": "other",
                "script": {"turns": adversary_turns},
            },
        ],
    }
    return raw


def test_defaults_and_validation() -> None:
    spec = validate_spec(spec_raw([{}]))
    assert spec.max_rounds == 3 and spec.debate.mode == "blocking"
    bad = spec_raw([{}])
    bad["debate"]["adversary"] = "owner"
    del bad["debate"]["artifact"]
    with pytest.raises(Exception) as info:
        validate_spec(bad)
    text = str(info.value)
    assert "self-critique is refused" in text and "debate.artifact: required" in text


def test_challenge_defense_assessment_then_release() -> None:
    adversary = [
        {"challenges": [C_CRIT, C_MINOR], "verdict": "objections", "convergence": "continue"},
        {
            "challenges": [],
            "verdict": "no_objections",
            "convergence": "converging",
            "assessments": [
                {"challenge_id": "C1.1", "status": "addressed"},
                {"challenge_id": "C1.2", "status": "rejected", "note": "fair"},
            ],
        },
    ]
    defender = [
        {
            "responses": [
                {
                    "challenge_id": "C1.1",
                    "status": "addressed",
                    "answer": "Reversible migration now.",
                },
                {
                    "challenge_id": "C1.2",
                    "status": "rejected",
                    "answer": "Weekend traffic is lowest.",
                },
            ],
            "revised_artifact": "Deploy Friday 17:00 with a reversible migration.",
        }
    ]
    engine, _ = run_engine(spec_raw(adversary, defender))
    r: dict[str, Any] = dict(engine.result())
    assert (r["decision"], r["decision_rule"]) == ("release", "no_objections")
    assert [t.phase for t in engine.state.turns] == ["challenge", "defense", "challenge"]
    assert engine.state.turns[0].derived["challenge_ids"] == ["C1.1", "C1.2"]
    status = {c["id"]: c["status"] for c in r["challenges"]}
    assert status == {"C1.1": "addressed", "C1.2": "rejected"}
    assert r["challenges_by_severity"]["critical"] == 1
    assert r["final_artifact"].startswith("Deploy Friday 17:00 with a reversible")
    # The second challenge round saw the revised artifact and the defense, not the original.
    assert engine.state.turns[2].saw[:3] == ["motion", "artifact:r1", "responses:r1"]
    assert r["weak_adversarial_pass"] is False


def test_no_objections_in_round_one() -> None:
    engine, _ = run_engine(spec_raw([{"challenges": [], "verdict": "no_objections"}]))
    r = engine.result()
    assert (r["decision"], r["decision_rule"], len(engine.state.turns)) == (
        "release",
        "no_objections",
        1,
    )


def test_challenge_without_evidence_is_refused() -> None:
    no_evidence = dict(C_MINOR, evidence="  ")
    engine, _ = run_engine(spec_raw([{"challenges": [no_evidence], "verdict": "objections"}]))
    t = engine.state.turns[0]
    assert t.invalid and t.attempts == 2 and "evidence" in (t.error or "")
    assert engine.result()["decision_rule"] == "invalid_turn"


def test_assessment_of_every_earlier_challenge_is_required() -> None:
    adversary = [
        {"challenges": [C_CRIT, C_MINOR], "verdict": "objections"},
        {
            "challenges": [],
            "verdict": "no_objections",
            "assessments": [{"challenge_id": "C1.1", "status": "addressed"}],
        },
    ]
    engine, _ = run_engine(spec_raw(adversary))
    second = engine.state.turns[2]
    assert second.invalid and "missing C1.2" in (second.error or "")


def test_blocking_mode_keeps_critical_from_release_and_hands_over() -> None:
    adversary = [
        {"challenges": [C_CRIT], "verdict": "objections"},
        {
            "challenges": [],
            "verdict": "no_objections",
            "assessments": [{"challenge_id": "C1.1", "status": "unaddressed"}],
        },
    ]
    engine, _ = run_engine(spec_raw(adversary, max_rounds=2))
    r: dict[str, Any] = dict(engine.result())
    # The last no_objections left C1.1 unaddressed: the gate, not the round count, refused it.
    assert (r["decision"], r["decision_rule"]) == ("escalate", "release_gate")
    assert r["unresolved_critical"] == ["C1.1"]
    with pytest.raises(ValueError, match="blocking mode"):
        engine.decide("release", "ship anyway")
    engine.decide("revise", "The rollback must be reversible first.")
    assert engine.result()["decided_by"] == "operator"
    assert engine.result()["rationale"].startswith("The rollback")


def test_advisory_mode_leaves_the_decision_to_the_operator() -> None:
    engine, _ = run_engine(
        spec_raw([{"challenges": [], "verdict": "no_objections"}], mode="advisory")
    )
    r: dict[str, Any] = dict(engine.result())
    assert (r["decision"], r["decision_rule"]) == ("escalate", "advisory_review")
    assert r["adversary_recommendation"] == "release"
    engine.decide("release", "Adversary found nothing; shipping.")
    assert engine.result()["decision_rule"] == "operator_decision"


def test_deadlock_escalates() -> None:
    adversary = [{"challenges": [C_MINOR], "verdict": "objections", "convergence": "deadlock"}]
    engine, _ = run_engine(spec_raw(adversary))
    r: dict[str, Any] = dict(engine.result())
    assert (r["decision"], r["decision_rule"]) == ("escalate", "adversary_deadlock")
    assert r["unresolved_challenges"] == ["C1.1"]


def test_round_cap_default_three_hands_over() -> None:
    adversary = [{"challenges": [C_MINOR], "verdict": "objections"}]
    engine, _ = run_engine(spec_raw(adversary))
    r: dict[str, Any] = dict(engine.result())
    assert r["rounds_run"] == 3 and r["decision_rule"] == "max_rounds_exhausted"
    assert len(r["unresolved_challenges"]) >= 1


def test_slot_schema_names_exactly_the_ids_to_answer() -> None:
    from tui.engine.core.schedule import Slot

    adversary = [{"challenges": [C_CRIT, C_MINOR], "verdict": "objections"}]
    engine, _ = run_engine(spec_raw(adversary, max_rounds=1))
    proto = engine.protocol
    base = Defense.model_json_schema()
    pristine = copy.deepcopy(base)
    schema = proto.slot_schema(engine.state, Slot(9, 2, "defense", "owner", "defense"), base)
    responses = schema["properties"]["responses"]
    assert responses["minItems"] == responses["maxItems"] == 2
    assert responses["items"]["properties"]["challenge_id"]["enum"] == ["C1.1", "C1.2"]
    assert "$defs" not in schema and base == pristine  # the kind's schema is untouched


def test_a_challenge_names_a_lookup_source_only_where_its_adversary_may_look_up(
    tmp_path: Any,
) -> None:
    """Without a tool there is nothing to quote: a small model that fills in ``source``
    anyway got its challenges refused, so the report's schema offers it only with a tool."""
    from tui.engine.core.schedule import Slot
    from tui.engine.protocols import protocol_for

    base = ChallengeReport.model_json_schema()
    slot = Slot(1, 1, "challenge", "red", CHALLENGE_REPORT, "owner")

    def item_fields(raw: dict[str, Any]) -> set[str]:
        spec = validate_spec(raw)
        engine, _ = run_engine(raw)
        schema = protocol_for(spec).slot_schema(engine.state, slot, base)
        return set(schema["properties"]["challenges"]["items"]["properties"])

    plain = spec_raw([{"challenges": [C_MINOR], "verdict": "objections"}], max_rounds=1)
    assert "source" not in item_fields(plain)
    (tmp_path / "docs").mkdir()
    grounded = {
        **plain,
        "tools": [
            {"name": "docs", "builtin": "files", "root": str(tmp_path / "docs"), "roles": ["red"]}
        ],
    }
    assert "source" in item_fields(grounded)
    assert {"evidence", "concern"} <= item_fields(plain)

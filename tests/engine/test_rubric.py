"""Evidence rubrics: verbatim quotes only, forbidden kinds refused, default no."""

from __future__ import annotations

from typing import Any

from tests.helpers import adversary_raw, run_engine
from tui.engine.grounding.evidence import assess
from tui.engine.specs.spec import Rubric

RUBRIC = {
    "properties": [
        {
            "id": "rollback",
            "question": "Does the plan include a rollback path?",
            "admissible": ["artifact_quote"],
            "shortcuts": ["'we can roll back' without steps"],
        },
        {
            "id": "staged",
            "question": "Is the rollout staged?",
            "admissible": ["artifact_quote", "transcript_quote", "test_result"],
        },
    ]
}
PLAN = "Stage it: 1% of clients for a day, then 10%. Dual-accept cookies and tokens."


def rubric() -> Rubric:
    return Rubric.model_validate(RUBRIC)


def answer(prop: str, kind: str, quote: str, verdict: str = "yes") -> dict[str, Any]:
    return {
        "property": prop,
        "evidence": [{"kind": kind, "quote": quote}],
        "rationale": "because",
        "verdict": verdict,
    }


def test_quote_found_verbatim_is_admitted() -> None:
    rep = assess(
        rubric(),
        [answer("staged", "artifact_quote", "1% of clients for a day")],
        [("artifact", PLAN)],
        [],
    )
    staged = rep["properties"][1]
    assert staged["verdict"] == "yes" and staged["evidence"][0]["admitted"]
    assert rep["properties"][0]["verdict"] == "no"  # no answer at all: default no
    assert rep["missing_evidence"] == 1 and rep["pass"] is False


def test_quote_not_in_artifact_forces_no() -> None:
    rep = assess(
        rubric(),
        [answer("rollback", "artifact_quote", "a one-click rollback exists")],
        [("artifact", PLAN)],
        [],
    )
    prop = rep["properties"][0]
    assert prop["claimed"] == "yes" and prop["verdict"] == "no"
    assert prop["evidence"][0]["why"] == "not found verbatim in the artifact"


def test_forbidden_and_inadmissible_kinds_refused() -> None:
    rep = assess(
        rubric(),
        [
            answer("rollback", "assertion", "It clearly can roll back."),
            answer("staged", "external_source", "vendor docs say so"),
        ],
        [("artifact", PLAN)],
        [],
    )
    why = [p["evidence"][0]["why"] for p in rep["properties"]]
    assert "forbidden" in why[0] and "not admissible" in why[1]
    assert rep["missing_evidence"] == 2 and not rep["pass"]


def test_transcript_quote_must_come_from_an_earlier_turn() -> None:
    earlier = [{"stance": "We will stage the rollout over three days."}]
    ok = assess(
        rubric(),
        [answer("staged", "transcript_quote", "stage the rollout over three days")],
        [("artifact", PLAN)],
        earlier,
    )
    bad = assess(
        rubric(),
        [answer("staged", "transcript_quote", "stage the rollout over ten days")],
        [("artifact", PLAN)],
        earlier,
    )
    assert ok["properties"][1]["verdict"] == "yes" and bad["properties"][1]["verdict"] == "no"


def _adversary_with_rubric(rubric_answers: list[dict[str, Any]]) -> dict[str, Any]:
    raw = adversary_raw(["release"])
    raw["rubric"] = RUBRIC
    raw["debaters"][0]["script"] = {"stances": [PLAN]}
    raw["debaters"][1]["script"]["turns"] = [{"rubric": rubric_answers}]
    return raw


def test_critic_release_blocked_when_evidence_is_missing() -> None:
    raw = _adversary_with_rubric(
        [
            answer("rollback", "artifact_quote", "instant rollback button"),  # not in the plan
            answer("staged", "artifact_quote", "then 10%"),
        ]
    )
    engine, _ = run_engine(raw)
    r = engine.result()
    assert (r["decision"], r["decision_rule"]) == ("escalate", "rubric_failed")
    assert r["rubric_pass"] is False and r["rubric_missing_evidence"] == 1
    assert {p["property"]: p["verdict"] for p in r["rubric"]} == {"rollback": "no", "staged": "yes"}
    report = engine.state.turns[1].derived["rubric"]["properties"][0]
    assert list(report)[:3] == ["property", "evidence", "rationale"]  # evidence, rationale, verdict


def test_critic_release_with_admitted_evidence() -> None:
    raw = _adversary_with_rubric(
        [
            answer("rollback", "artifact_quote", "Dual-accept cookies and tokens"),
            answer("staged", "artifact_quote", "1% of clients for a day"),
        ]
    )
    engine, _ = run_engine(raw)
    r = engine.result()
    assert (r["decision"], r["decision_rule"], r["rubric_pass"]) == (
        "release",
        "critic_release",
        True,
    )


def test_rubric_is_part_of_the_schema_and_prompt() -> None:
    raw = _adversary_with_rubric([])
    from tests.helpers import SCRIPTED
    from tui.engine import Engine, validate_spec

    engine = Engine(validate_spec(raw), lambda d: SCRIPTED)
    schema = engine.player.schemas["adversary_critique"]
    assert "rubric" in schema["required"]
    from tui.engine.core.schedule import Slot
    from tui.engine.run.prompts import build_messages

    slot = Slot(1, 1, "critique", "critic", "adversary_critique", "author")
    msgs = build_messages(engine.spec, engine.debaters["critic"], slot, [], schema, ["release"])
    assert "default is no" in msgs[0]["content"] and "rollback" in msgs[0]["content"]
    assert "Reject this shortcut" in msgs[0]["content"]

"""A negative channel must say something: labels, votes and copies are re-asked, then invalid."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.engine.test_challenge import C_CRIT, C_MINOR, spec_raw
from tests.engine.test_refine import refine_raw
from tests.helpers import (
    SCRIPTED,
    adversary_raw,
    debate_raw,
    run_engine,
    statement_rules,
    with_script,
)
from tui.engine import Engine, SpecError, validate_spec
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.core.substance import (
    NO_RULES,
    StatementRules,
    content_problems,
    statement_problem,
)
from tui.engine.protocols.debate import DebateProtocol

MOTION = "Ship the token rollout plan."
VOTES = ["adopt", "reject"]


def problem(text: str, min_words: int = 3) -> str | None:
    return statement_problem(text, votes=VOTES, motion=MOTION, min_words=min_words)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "is empty"),
        ("  ,. ", "is empty"),
        ("defects_found", "is a label"),
        ("No defect found", "is a label"),
        ("five", "is a label"),
        ("adopt", "is a vote"),
        ("ADOPT!", "is a vote"),
        ("release", "is a label"),
        ("weaknesses", "is a label"),
        ("revised_artifact", "is a label"),
        ("N/A", "is a label"),
        ("ship the token rollout plan", "repeats the motion"),
        ("Too risky.", "has 2 words"),
        ("42 17 9", "has 0 words"),
    ],
)
def test_what_is_not_a_statement(text: str, reason: str) -> None:
    found = problem(text)
    assert found is not None and reason in found


def test_a_statement_passes_and_the_threshold_is_configurable() -> None:
    assert problem("Tokens expire mid-session with no refresh path.") is None
    assert problem("Too risky.") is not None
    assert problem("Too risky.", min_words=2) is None
    assert problem("defects_found", min_words=1) is not None  # a label whatever the threshold


def test_duplicates_and_paths_are_named() -> None:
    content = {
        "weaknesses": ["No rollback step is named.", "no ROLLBACK step is named", "five"],
        "suggestions": ["No rollback step is named!"],
        "verdict": "defects_found",
    }
    assert content_problems(statement_rules("critique"), content, votes=VOTES, motion=MOTION) == [
        "weaknesses[1]: repeats weaknesses[0]; each item must say something new",
        "weaknesses[2]: 'five' is a label, not a statement",
        "suggestions[0]: repeats weaknesses[0]; each item must say something new",
    ]


def test_each_channel_is_checked_by_its_path() -> None:
    report = {"challenges": [{**C_CRIT, "concern": "objections", "evidence": "backup"}]}
    assert content_problems(
        statement_rules("challenge_report"), report, votes=VOTES, motion=MOTION
    ) == [
        "challenges[0].concern: 'objections' is a label, not a statement",
        "challenges[0].evidence: has 1 word; write a statement of at least 3",
    ]
    defense = {"responses": [{"challenge_id": "C1.1", "status": "addressed", "answer": "done"}]}
    assert content_problems(statement_rules("defense"), defense, votes=VOTES, motion=MOTION) == [
        "responses[0].answer: has 1 word; write a statement of at least 3"
    ]
    judgment = {"pick": "X", "reason": "X"}
    assert content_problems(statement_rules("judgment"), judgment, votes=VOTES, motion=MOTION) == [
        "reason: 'X' is a label, not a statement"
    ]
    position = {"stance": "Ship it.", "rationale": ", ", "vote": "adopt"}
    assert content_problems(statement_rules("position"), position, votes=VOTES, motion=MOTION) == [
        "rationale: ',' holds no words"
    ]


# ------------------------------------------------------------ through the engine
class Recording:
    """The scripted provider, keeping every request it was sent."""

    def __init__(self, first: dict[str, Any] | None = None) -> None:
        self.requests: list[TurnRequest] = []
        self.first = first  # a whole answer for the first critique attempt only

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        self.requests.append(request)
        if self.first is not None and request.slot.kind == "adversary_critique":
            answer, self.first = self.first, None
            return TurnReply(text=json.dumps(answer))
        return await SCRIPTED.complete(request, on_token)

    async def aclose(self) -> None:
        return None


LABELLED = {
    "weaknesses": ["defects_found"],
    "suggestions": [],
    "verdict": "defects_found",
    "score": 10,
    "routing": "release",
}


def play(raw: dict[str, Any], provider: Recording) -> Engine:
    engine = Engine(validate_spec(raw), lambda d: provider)
    asyncio.run(engine.run())
    return engine


def test_a_labelled_critique_is_reasked_with_the_reason_then_recorded_invalid() -> None:
    raw = adversary_raw(["release"], weaknesses=[["defects_found"]], verdicts=["defects_found"])
    provider = Recording()
    engine = play(raw, provider)
    critique = engine.state.turns[1]
    assert critique.invalid and critique.attempts == 2
    assert "weaknesses[0]: 'defects_found' is a label" in (critique.error or "")
    first, retry = [r for r in provider.requests if r.slot.kind == "adversary_critique"]
    # The rule is said before it is enforced, with the spec's threshold.
    assert (
        'Each "weaknesses" and "suggestions" must be a statement of at least 3 words'
        in (first.messages[0]["content"])
    )
    assert "weaknesses[0]: 'defects_found' is a label" in retry.messages[-1]["content"]
    r: dict[str, Any] = dict(engine.result())
    assert (r["decision"], r["decision_rule"]) == ("escalate", "invalid_turn")
    assert r["negative_channel_present"] is False


def test_a_retry_that_says_something_counts() -> None:
    clean = {"weaknesses": [[]], "verdicts": ["no_defect_found"], "scores": [90]}
    engine = play(adversary_raw(["release"], **clean), Recording(first=LABELLED))
    critique = engine.state.turns[1]
    assert not critique.invalid and critique.attempts == 2
    assert engine.result()["decision"] == "release"


def test_a_rationale_needs_words() -> None:
    raw = with_script(debate_raw({"a": ["release"], "b": ["release"]}), "a", rationales=[", "])
    engine, _ = run_engine(raw)
    first = engine.state.turns[0]
    assert first.invalid and "rationale: ',' holds no words" in (first.error or "")


def test_a_labelled_judge_reason_is_no_preference() -> None:
    label = [{"pick": "X", "reason": "X"}]
    engine, _ = run_engine(refine_raw({"j1": label, "j2": [], "j3": []}, max_rounds=1))
    result: dict[str, Any] = dict(engine.result())
    picks = result["judge_rounds"][0]["judges"]
    assert picks["j1"]["pick"] == "none"
    assert "reason: 'X' is a label" in (engine.state.turns[-3].error or "")


def test_a_one_word_defence_answer_is_invalid() -> None:
    first = {"challenges": [C_CRIT], "verdict": "objections"}
    answer = [{"responses": [{"challenge_id": "C1.1", "status": "addressed", "answer": "Fixed."}]}]
    engine, _ = run_engine(spec_raw([first], answer))
    defense = engine.state.turns[1]
    assert defense.invalid and "responses[0].answer: has 1 word" in (defense.error or "")


def test_min_words_is_a_debate_key() -> None:
    raw = adversary_raw(["revise", "release"], weaknesses=[["Unsafe."], []])
    engine, _ = run_engine(raw)
    assert engine.state.turns[1].invalid  # one word, below the default of 3
    raw["debate"]["min_words"] = 1
    provider = Recording()
    engine = play(raw, provider)
    assert not engine.state.turns[1].invalid
    assert "at least 1 word:" in provider.requests[1].messages[0]["content"]
    assert engine.result()["decision"] == "release"


def test_every_problem_is_named_in_one_reask() -> None:
    first = {"challenges": [C_CRIT, C_MINOR], "verdict": "objections"}
    answer = [{"responses": [{"challenge_id": "C1.1", "status": "addressed", "answer": "Fixed."}]}]
    engine, _ = run_engine(spec_raw([first], answer))
    error = engine.state.turns[1].error or ""
    assert "responses[0].answer: has 1 word" in error and "missing C1.2" in error


@pytest.mark.parametrize("value", [0, 51, "three"])
def test_min_words_is_checked_by_key_path(value: Any) -> None:
    raw = adversary_raw(["release"])
    raw["debate"]["min_words"] = value
    with pytest.raises(SpecError) as info:
        validate_spec(raw)
    assert any(p.startswith("debate.min_words: ") for p in info.value.problems)


# A reason that only restates the answer it gives, per protocol shape: (kind, content, path).
CIRCULAR = [
    (  # debate, adversary's author: the vote, the stance
        "position",
        {"vote": "adopt", "stance": "We should adopt it.", "rationale": "My vote is adopt."},
        "rationale",
    ),
    (
        "position",
        {"vote": "adopt", "stance": "We should adopt it.", "rationale": "We should adopt it!"},
        "rationale",
    ),
    (  # delphi, as the embedded model wrote it
        "estimate",
        {"estimate": 1.0, "rationale": "The estimate is 1. The reason is that the estimate is 1."},
        "rationale",
    ),
    ("judgment", {"pick": "X", "reason": "X is the better candidate, so I pick X."}, "reason"),
    ("candidate", {"candidate": "Call it Relay.", "rationale": "Call it Relay."}, "rationale"),
    (
        "critique",
        {"weaknesses": ["I vote reject because I reject it."], "vote": "reject"},
        "weaknesses[0]",
    ),
    (
        "adversary_critique",
        {
            "weaknesses": ["The routing is revise, so revise."],
            "routing": "revise",
            "verdict": "defects_found",
            "score": 40,
        },
        "weaknesses[0]",
    ),
    (
        "challenge_report",
        {
            "challenges": [
                {"concern": "There are objections to it.", "evidence": "line 3 says so"}
            ],
            "verdict": "objections",
        },
        "challenges[0].concern",
    ),
    (
        "defense",
        {
            "responses": [
                {"challenge_id": "c1", "status": "addressed", "answer": "It is addressed now."}
            ]
        },
        "responses[0].answer",
    ),
]


@pytest.mark.parametrize(("kind", "content", "path"), CIRCULAR)
def test_a_reason_that_only_restates_the_answer_is_refused(
    kind: str, content: dict[str, Any], path: str
) -> None:
    problems = content_problems(
        statement_rules(kind), content, votes=["adopt", "reject"], motion=MOTION
    )
    assert any(p.startswith(f"{path}: ") and "restates" in p for p in problems), problems


@pytest.mark.parametrize(
    ("kind", "content"),
    [
        ("position", {"vote": "adopt", "stance": "Adopt.", "rationale": "Fridays stay covered."}),
        (
            "estimate",
            {"estimate": 1.0, "rationale": "The estimate is 1: one endpoint, no migration."},
        ),
        ("judgment", {"pick": "X", "reason": "X names who hands over, Y does not."}),
        ("critique", {"weaknesses": ["Nobody answers Friday incidents."], "vote": "reject"}),
    ],
)
def test_a_reason_beside_the_answer_passes(kind: str, content: dict[str, Any]) -> None:
    assert (
        content_problems(statement_rules(kind), content, votes=["adopt", "reject"], motion=MOTION)
        == []
    )


def test_a_circular_delphi_rationale_is_asked_again_then_recorded_invalid() -> None:
    raw = {
        "debate": {
            "title": "Estimate",
            "motion": "How many engineer-days to export the audit log?",
            "protocol": "delphi",
            "unit": "engineer-days",
            "max_rounds": 1,
        },
        "debaters": [
            {
                "id": d,
                "model": "scripted",
                "script": {
                    "turns": [
                        {
                            "estimate": 1,
                            "rationale": "The estimate is 1. The reason is that the estimate is 1.",
                        }
                    ]
                },
            }
            for d in ("a", "b", "c")
        ],
    }
    engine, _ = run_engine(raw)
    assert engine.state.turns and all(t.invalid for t in engine.state.turns)
    assert all(t.attempts == 2 and "restates" in (t.error or "") for t in engine.state.turns)


def test_a_protocols_own_kind_is_held_to_the_statement_rules_it_declares() -> None:
    """A protocol from outside names its kind's statements; the shared kinds keep theirs."""

    class Auditing(DebateProtocol):
        statement_rules = {"audit": StatementRules(channel=(("gaps", ""),), answers=("verdict",))}

    rules = Auditing.rules_for("audit")
    said = {"gaps": ["adopt", "The log rotation drops the last hour."], "verdict": "gaps"}
    assert content_problems(rules, said, votes=VOTES, motion=MOTION) == [
        "gaps[0]: 'adopt' is a vote, not a statement"
    ]
    assert Auditing.rules_for("position") == DebateProtocol.rules_for("position") != NO_RULES
    assert DebateProtocol.rules_for("audit") is NO_RULES

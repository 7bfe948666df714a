"""Open votes (``votes = "open"`` with a normaliser) and ``early_stop = false``.

Each debater's vote is its own answer, counted in normal form; with early stop
off every debater speaks in every round and the votes decide at the end. The
counted votes and the decision are re-checked by ``moot verify``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_verify_session import failed, rewrite
from tests.helpers import SCRIPTED, debate_raw, run_engine, run_live
from tui.cli import main
from tui.engine import validate_spec
from tui.engine.basics.errors import SpecError
from tui.engine.basics.vocab import ESCALATE, DecisionRule
from tui.engine.terms.openvotes import final_number, plain_text
from tui.exitcodes import ExitCode


def open_raw(votes: dict[str, list[str]], **debate: Any) -> dict[str, Any]:
    """A Du-style debate: answers only, every round played, a plurality decides."""
    raw = debate_raw(
        votes,
        normalise="number",
        phases=["proposal"],
        max_rounds=2,
        early_stop=False,
        consensus_threshold=1,
        retries=0,
        on_invalid="continue",
        **debate,
    )
    raw["debate"]["votes"] = "open"
    return raw


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("42", "42"),
        ("The answer is 1,200.", "1200"),
        ("-7", "-7"),
        ("so 10-5 = 5", "5"),
        ("3 + 4 = 7.0", "7"),
        ("about 2.50", "2.5"),
        ("x = -13, final", "-13"),
        ("no idea", None),
    ],
)
def test_the_number_normaliser_keeps_the_last_number_written_plainly(
    text: str, number: str | None
) -> None:
    assert final_number(text) == number


def test_the_text_normaliser_ignores_case_spacing_and_a_full_stop() -> None:
    assert plain_text("  Paris  France. ") == "paris france"
    assert plain_text(" . ") is None


def test_open_votes_count_answers_in_normal_form_and_play_every_round() -> None:
    # Unanimous from the first round, yet with early stop off all 3 x 2 turns are played.
    engine, _ = run_engine(
        open_raw({"a": ["It is 1,200."], "b": ["1200"], "c": ["1200.0 I think"]})
    )
    turns = engine.state.turns
    assert len(turns) == 6 and {t.round for t in turns} == {1, 2}
    assert [t.vote for t in turns] == ["1200"] * 6
    assert engine.decision is not None
    assert engine.decision.decision == "1200"
    assert engine.decision.rule == DecisionRule.THRESHOLD_VOTE
    assert engine.result()["vote_tally"] == {"1200": 3}


def test_early_stop_stays_the_default_and_ends_at_the_first_consensus() -> None:
    raw = open_raw({"a": ["5"], "b": ["5"], "c": ["6"]})
    del raw["debate"]["early_stop"]
    engine, _ = run_engine(raw)
    assert len(engine.state.turns) == 3 and engine.decision is not None
    assert engine.decision.decision == "5"


def test_a_tie_among_the_top_answers_decides_nothing() -> None:
    engine, _ = run_engine(open_raw({"a": ["5"], "b": ["6"], "c": ["7"]}))
    assert len(engine.state.turns) == 6
    assert engine.decision is not None and engine.decision.decision == ESCALATE
    assert engine.decision.rule == DecisionRule.MAX_ROUNDS_EXHAUSTED


def test_a_vote_without_an_answer_is_refused_on_record_and_not_counted() -> None:
    engine, _ = run_engine(open_raw({"a": ["no idea"], "b": ["5"], "c": ["5"]}))
    mine = [t for t in engine.state.turns if t.speaker == "a"]
    assert all(t.invalid and t.vote is None for t in mine)
    assert "holds no answer (number)" in (mine[0].error or "")
    assert engine.result()["vote_tally"] == {"5": 2}


def test_the_prompt_asks_for_an_answer_and_the_schema_lists_no_votes() -> None:
    spec = validate_spec(open_raw({"a": ["5"], "b": ["5"]}))
    seen: list[Any] = []

    class Recording:
        async def complete(self, request: Any, on_token: Any) -> Any:
            seen.append(request)
            return await SCRIPTED.complete(request, on_token)

        async def aclose(self) -> None:
            return None

    from tui.engine import Engine

    engine = Engine(spec, lambda d: Recording())
    asyncio.run(engine.run())
    request = seen[0]
    assert request.votes == []
    vote = request.json_schema["properties"]["vote"]
    assert "enum" not in vote and vote["type"] == "string"
    system = request.messages[0]["content"]
    assert "Your vote is your own answer: a number" in system and "Allowed votes" not in system


@pytest.mark.parametrize(
    ("debate", "problem"),
    [
        ({"normalise": "number"}, 'debate.normalise: only used with votes = "open"'),
        (
            {"votes": "open", "protocol": "adversary", "proposer": "a", "critic": "b"},
            'debate.votes: "open" votes are for the debate protocol only',
        ),
        (
            {"early_stop": False, "protocol": "adversary", "proposer": "a", "critic": "b"},
            "debate.early_stop: not used by the adversary protocol",
        ),
        ({"votes": "any"}, "debate.votes"),
        ({"votes": "open", "normalise": "roman"}, "debate.normalise"),
    ],
)
def test_misused_open_vote_keys_are_refused_by_key_path(
    debate: dict[str, Any], problem: str
) -> None:
    raw = debate_raw({"a": ["release"], "b": ["revise"]})
    raw["debate"].update(debate)
    if "protocol" in debate:
        raw["debaters"][0].pop("script")
        raw["debaters"][1].pop("script")
    with pytest.raises(SpecError) as info:
        validate_spec(raw)
    assert any(p.startswith(problem) for p in info.value.problems), info.value.problems


def test_an_open_vote_session_verifies_and_a_forged_vote_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "open.toml"
    raw = open_raw({"a": ["It is 1,200."], "b": ["1200"], "c": ["7"]})
    asyncio.run(run_live(raw, lambda d: SCRIPTED, path))
    assert main(["verify", str(path), "--json"]) == ExitCode.DECIDED
    report = json.loads(capsys.readouterr().out)
    assert report["ok"], report["failures"]
    votes = [c for c in report["claims"] if c["field"] == "vote"]
    assert len(votes) == 6 and all("number normaliser" in c["detail"] for c in votes)

    def forge(doc: dict[str, Any]) -> None:  # c's answer counted as 1200: a false unanimity
        for turn in doc["turns"]:
            if turn["speaker"] == "c":
                turn["vote"] = "1200"
        doc["result"]["vote_tally"] = {"1200": 3}
        doc["result"]["final_votes"]["c"] = "1200"

    rewrite(path, forge)
    assert main(["verify", str(path), "--json"]) != ExitCode.DECIDED
    report = json.loads(capsys.readouterr().out)
    assert failed(report) == {("turn 3", "vote"), ("turn 6", "vote")}


def test_the_adr_of_an_open_vote_session_chooses_the_answer_reached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Open votes are answers, not a list: the record must not read ``"open"`` as the options
    (a substring test would take the answer ``"o"`` for a vote and ``votes[0]`` for ``"o"``)."""
    path = tmp_path / "open.toml"
    raw = open_raw({"a": ["It is 1,200."], "b": ["1200"], "c": ["7"]})
    asyncio.run(run_live(raw, lambda d: SCRIPTED, path))
    assert main(["export", str(path), "--format", "adr"]) == 0
    adr = capsys.readouterr().out
    assert "status: accepted" in adr
    chosen = next(line for line in adr.splitlines() if line.startswith("Chosen option:"))
    # the position of a debater who answered 1200 (a or b), with the answer it reached
    assert chosen.startswith(('Chosen option: "a: position', 'Chosen option: "b: position'))
    assert "decision `1200`" in chosen, chosen

"""Engine rules with scripted debaters: schedule, phases, tally, decisions, visibility."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.helpers import SCRIPTED, adversary_raw, debate_raw, run_engine, with_script
from tui.engine import Engine, validate_spec
from tui.engine.run.events import DecisionReached, TallyChanged, TurnCompleted, TurnStarted
from tui.engine.specs.spec import Spec


def test_schedule_is_registration_order_and_recorded() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"], "c": ["escalate"]}, max_rounds=1, consensus_threshold=2
    )
    engine, _ = run_engine(raw)
    r = engine.result()
    assert r["speaker_schedule"] == ["a", "b", "c"] * 4
    assert r["speaker_selected_by"] == "schedule"
    assert r["phase_sequence"] == ["proposal", "critique", "revision", "consensus"]
    assert [t.phase for t in engine.state.turns[:4]] == ["proposal"] * 3 + ["critique"]


def test_rotate_shifts_order_each_round() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"], "c": ["escalate"]},
        max_rounds=3,
        consensus_threshold=2,
        phases=["proposal"],
        rotate=True,
    )
    engine, _ = run_engine(raw)
    assert engine.result()["speaker_schedule"] == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]


def test_critique_targets_next_debater_never_self() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"], "c": ["escalate"]},
        max_rounds=1,
        consensus_threshold=2,
        phases=["proposal", "critique"],
    )
    engine, _ = run_engine(raw)
    crit = [(t.speaker, t.target) for t in engine.state.turns if t.kind == "critique"]
    assert crit == [("a", "b"), ("b", "c"), ("c", "a")]
    assert all(s != t for s, t in crit)
    # A critic sees the motion and exactly its target's latest position.
    assert engine.state.turns[3].saw == ["motion", "position:r1:b"]


def test_consensus_can_stop_after_first_phase() -> None:
    raw = debate_raw({"a": ["release"], "b": ["release"], "c": ["revise"]}, consensus_threshold=2)
    engine, _ = run_engine(raw)
    r = engine.result()
    assert (r["decision"], r["decision_rule"], r["decided_by"]) == (
        "release",
        "threshold_vote",
        "rule",
    )
    assert r["phase_sequence"] == ["proposal"]
    assert r["rounds_run"] == 1
    assert r["vote_tally"] == {"release": 2, "revise": 1, "escalate": 0}


def test_tie_at_threshold_is_not_consensus() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["release"], "c": ["revise"], "d": ["revise"]},
        consensus_threshold=2,
        max_rounds=1,
        phases=["proposal"],
    )
    engine, _ = run_engine(raw)
    r = engine.result()
    assert r["vote_tally"]["release"] == r["vote_tally"]["revise"] == 2
    assert (r["decision"], r["decision_rule"]) == ("escalate", "max_rounds_exhausted")


def test_latest_vote_of_each_debater_counts() -> None:
    raw = debate_raw(
        {"a": ["revise", "release"], "b": ["release"], "c": ["revise"]},
        consensus_threshold=3,
        max_rounds=2,
        phases=["proposal"],
    )
    engine, events = run_engine(raw)
    tallies = [e.tally for e in events if isinstance(e, TallyChanged)]
    assert tallies[-1] == {"release": 2, "revise": 1, "escalate": 0}
    assert engine.result()["final_votes"] == {"a": "release", "b": "release", "c": "revise"}


def test_invalid_turn_retried_then_recorded_and_not_counted() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["release"], "c": ["release"]},
        consensus_threshold=3,
        max_rounds=1,
        phases=["proposal"],
    )
    raw = with_script(raw, "c", invalid=[1])
    engine, events = run_engine(raw)
    bad = engine.state.turns[2]
    assert bad.invalid and bad.attempts == 2
    assert bad.raw and "rather not" in bad.raw
    assert "JSON" in (bad.error or "")
    r = engine.result()
    assert r["vote_tally"]["release"] == 2  # c's vote never counted
    assert (r["decision"], r["decision_rule"]) == ("escalate", "invalid_turn")
    starts = [e for e in events if isinstance(e, TurnStarted) and e.slot.speaker == "c"]
    assert [s.attempt for s in starts] == [1, 2]


def test_invalid_once_then_valid_counts() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["release"]}, consensus_threshold=2, phases=["proposal"]
    )
    raw = with_script(raw, "b", invalid_once=[1])
    engine, _ = run_engine(raw)
    t = engine.state.turns[1]
    assert not t.invalid and t.attempts == 2
    assert engine.result()["decision"] == "release"


def test_no_retries_means_one_attempt() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["release"]},
        consensus_threshold=2,
        phases=["proposal"],
        retries=0,
        on_invalid="continue",
        max_rounds=1,
    )
    raw = with_script(raw, "b", invalid=[1])
    engine, _ = run_engine(raw)
    assert engine.state.turns[1].attempts == 1 and engine.state.turns[1].invalid
    assert engine.result()["decision_rule"] == "max_rounds_exhausted"


def test_empty_critique_is_refused() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["release"]},
        consensus_threshold=2,
        phases=["critique"],
        max_rounds=1,
    )
    raw = with_script(raw, "a", weaknesses=[[]], verdicts=["defects_found"])
    engine, _ = run_engine(raw)
    t = engine.state.turns[0]
    assert t.invalid and "weakness" in (t.error or "")
    assert engine.result()["decision_rule"] == "invalid_turn"


def test_no_defect_found_is_a_valid_negative_channel() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["release"]},
        consensus_threshold=2,
        phases=["critique"],
        max_rounds=1,
    )
    raw = with_script(raw, "a", weaknesses=[[]], verdicts=["no_defect_found"])
    engine, _ = run_engine(raw)
    assert not engine.state.turns[0].invalid
    assert engine.result()["decision"] == "release"


def test_self_critique_refused_at_run_time() -> None:
    spec = validate_spec(adversary_raw(["release"]))
    bad = spec.debate.model_copy(update={"critic": "author"})
    forged = Spec.model_construct(debate=bad, debaters=spec.debaters, rubric=None)
    engine = Engine(forged, lambda d: SCRIPTED)
    decision = asyncio.run(engine.run())
    assert (decision.decision, decision.rule) == ("escalate", "self_critique_refused")
    assert [t.kind for t in engine.state.turns] == ["position"]  # no critique was asked for
    assert engine.result()["refused_speaker"] == "author"


def test_refine_critic_may_not_be_the_synthesizer() -> None:
    from tui.engine import SpecError

    raw = {
        "debate": {
            "title": "T",
            "motion": "M",
            "protocol": "refine",
            "authors": ["a", "b"],
            "critic": "s",
            "synthesizer": "s",
            "judges": ["j1", "j2", "j3"],
        },
        "debaters": [{"id": i, "model": "scripted"} for i in ["a", "b", "s", "j1", "j2", "j3"]],
    }
    with pytest.raises(SpecError, match="self-critique is refused"):
        validate_spec(raw)


def test_max_rounds_exhausted_escalates() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"], "c": ["escalate"]}, max_rounds=2, consensus_threshold=2
    )
    engine, _ = run_engine(raw)
    r = engine.result()
    assert (r["decision"], r["decision_rule"], r["rounds_run"]) == (
        "escalate",
        "max_rounds_exhausted",
        2,
    )
    assert engine.status == "AWAITING_OPERATOR"


def test_visibility_is_bounded_by_debaters_not_rounds() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"], "c": ["escalate"]}, max_rounds=12, consensus_threshold=2
    )
    engine, _ = run_engine(raw)
    sizes = {len(t.saw) for t in engine.state.turns if t.round > 2}
    assert max(sizes) <= 1 + 3 + 3  # motion, positions, critiques: flat in rounds
    proposal_r5 = next(t for t in engine.state.turns if t.round == 5 and t.phase == "proposal")
    assert "position:r4:a" in proposal_r5.saw and "critique:r4:c" in proposal_r5.saw
    assert not any(":r3:" in s for s in proposal_r5.saw)


def test_independent_calls_run_concurrently_and_keep_schedule_order() -> None:
    raw = debate_raw(
        {f"d{i}": ["release"] for i in range(5)},
        consensus_threshold=5,
        phases=["proposal"],
        max_rounds=1,
    )
    for i in range(5):  # later speakers answer first
        raw = with_script(raw, f"d{i}", turn_delay_ms=100 - 20 * i)
    engine, events = run_engine(raw)
    seq = [
        (type(e).__name__, e.slot if isinstance(e, TurnStarted) else e.turn)
        for e in events
        if isinstance(e, TurnStarted | TurnCompleted)
    ]
    kinds = [k for k, _ in seq]
    # Every call started before any turn completed: they ran at the same time.
    assert kinds == ["TurnStarted"] * 5 + ["TurnCompleted"] * 5
    # The transcript is still in schedule order although d4 answered first.
    assert [t.speaker for _, t in seq[5:]] == ["d0", "d1", "d2", "d3", "d4"]
    assert [t.index for t in engine.state.turns] == [1, 2, 3, 4, 5]  # numbered from 1


def test_sequential_when_parallel_off() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["release"]},
        consensus_threshold=2,
        phases=["proposal"],
        parallel=False,
    )
    engine, events = run_engine(raw)
    kinds = [type(e).__name__ for e in events if isinstance(e, TurnStarted | TurnCompleted)]
    assert kinds == ["TurnStarted", "TurnCompleted", "TurnStarted", "TurnCompleted"]


def test_cross_family_recorded_per_critique() -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"]},
        consensus_threshold=2,
        phases=["proposal", "critique"],
        max_rounds=1,
    )
    raw["debaters"][0]["family"] = "fam-a"
    engine, _ = run_engine(raw)
    crit = [t for t in engine.state.turns if t.kind == "critique"]
    assert all(t.cross_family_held is True for t in crit)
    raw["debaters"][0]["family"] = "scripted"
    engine, _ = run_engine(raw)
    assert engine.result()["cross_family_held"] is False


def test_adversary_revises_once_then_releases() -> None:
    engine, events = run_engine(adversary_raw(["revise", "release"]))
    r: dict[str, Any] = dict(engine.result())
    assert [(t.phase, t.speaker) for t in engine.state.turns] == [
        ("proposal", "author"),
        ("critique", "critic"),
        ("revision", "author"),
        ("critique", "critic"),
    ]
    assert (r["decision"], r["decision_rule"]) == ("release", "critic_release")
    assert r["proposer_id"] == "author" and r["critic_id"] == "critic"
    assert r["self_critique_skipped"] is True and r["negative_channel_present"] is True
    assert r["routing_decision"] == "release" and r["revisions"] == 1
    assert r["weakness_count"] == 0 and r["verdict"] == "no_defect_found"  # the gate held
    assert r["weak_adversarial_pass"] is True  # both scripted: same family
    # The revision saw the critique; the critic saw only the proposal.
    assert engine.state.turns[2].saw == ["motion", "position:r1:author", "critique:r1:critic"]
    assert engine.state.turns[3].saw == ["motion", "position:r2:author"]
    assert isinstance(events[-1], DecisionReached)


def test_adversary_exhausts_rounds() -> None:
    engine, _ = run_engine(adversary_raw(["revise"]))
    r = engine.result()
    assert (r["decision"], r["decision_rule"], r["rounds_run"]) == (
        "escalate",
        "max_rounds_exhausted",
        3,
    )


def test_adversary_escalation_routing() -> None:
    engine, _ = run_engine(adversary_raw(["escalate"]))
    assert engine.result()["decision_rule"] == "critic_escalation"


def test_adversary_invalid_critique_escalates() -> None:
    engine, _ = run_engine(adversary_raw(["release"], invalid=[1]))
    r: dict[str, Any] = dict(engine.result())
    assert (r["decision"], r["decision_rule"]) == ("escalate", "invalid_turn")
    assert r["negative_channel_present"] is False


def test_tolerant_parsing_fences_prose_and_bounded_search() -> None:
    from tui.engine.core.parsing import TurnParseError, extract_json_object

    assert extract_json_object('Sure!\n```json\n{"a": 1}\n```\nDone.') == {"a": 1}
    assert extract_json_object('{not json} then {"b": 2}') == {"b": 2}
    with pytest.raises(TurnParseError):
        extract_json_object("{" * 200_000)  # returns promptly: the search is bounded


@pytest.mark.parametrize("parallel", [True, False])
def test_a_turn_is_under_way_until_it_is_on_record(parallel: bool) -> None:
    """What waits for a quiet moment (the console's E opens the editor then) must never see
    a turn its call has returned but the run has not yet recorded: between the two the
    loop runs other callbacks. Checked at every turn of the loop."""
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"]},
        consensus_threshold=2,
        phases=["proposal", "critique"],
        max_rounds=2,
        parallel=parallel,
    )
    engine = Engine(validate_spec(raw), lambda d: SCRIPTED)
    returned: list[int] = []
    seen_quiet_but_unrecorded: list[int] = []
    play = engine.player.play

    async def counted(*args: Any, **kwargs: Any) -> Any:
        played = await play(*args, **kwargs)
        returned.append(1)
        return played

    engine.player.play = counted  # type: ignore[method-assign]

    async def watch() -> None:
        while True:
            if not engine.turn_under_way and len(engine.state.turns) < len(returned):
                seen_quiet_but_unrecorded.append(len(returned))
            await asyncio.sleep(0)

    async def main() -> None:
        watcher = asyncio.ensure_future(watch())
        try:
            await engine.run()
        finally:
            watcher.cancel()

    asyncio.run(main())
    assert len(returned) == len(engine.state.turns) == 8
    assert seen_quiet_but_unrecorded == []

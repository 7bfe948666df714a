"""The refine protocol: cold-start roles, a blind judge panel, convergence, handoff."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import SCRIPTED, run_engine
from tui.engine import SpecError, validate_spec
from tui.engine.protocols.refine import INCUMBENT_FIRST, judge_orders, resolve_pick, unblinded
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.render.export import to_json, to_markdown


def refine_raw(judge_turns: dict[str, list[dict[str, Any]]], **debate: Any) -> dict[str, Any]:
    judges = list(judge_turns)
    return {
        "debate": {
            "title": "Refine",
            "motion": "Event sourcing or CRUD for orders?",
            "protocol": "refine",
            "authors": ["alpha", "beta"],
            "critic": "critic",
            "synthesizer": "synth",
            "judges": judges,
            "seed": 7,
            "max_rounds": 6,
            **debate,
        },
        "debaters": [
            {"id": "alpha", "model": "scripted"},
            {"id": "beta", "model": "scripted"},
            {"id": "critic", "model": "scripted"},
            {"id": "synth", "model": "scripted"},
            *(
                {"id": j, "model": "scripted", "family": f"judge-{j}", "script": {"turns": t}}
                for j, t in judge_turns.items()
            ),
        ],
    }


def test_panel_must_be_odd_3_to_7_and_not_authors() -> None:
    raw = refine_raw({"j1": [], "j2": []})
    raw["debate"]["judges"] = ["j1", "j2", "alpha", "synth"]
    with pytest.raises(SpecError) as info:
        validate_spec(raw)
    text = "\n".join(info.value.problems)
    assert "an odd panel of 3 to 7 judges, not 4" in text
    assert "debate.judges[2]: 'alpha' wrote a candidate" in text
    raw["debate"]["critic"] = "alpha"
    with pytest.raises(SpecError, match="self-critique"):
        validate_spec(raw)


def test_judge_order_reproducible_from_seed() -> None:
    judges = ["j1", "j2", "j3", "j4", "j5"]
    assert judge_orders(7, 1, judges, False) == judge_orders(7, 1, judges, False)
    draws = {tuple(o for _, o in judge_orders(seed, 1, judges, False)) for seed in range(40)}
    assert len(draws) > 5  # the seed really changes the order
    swapped = judge_orders(7, 2, judges, True)
    assert len(swapped) == 10 and {o for _, o in swapped[:2]} == {
        INCUMBENT_FIRST,
        "challenger-first",
    }
    assert resolve_pick("X", INCUMBENT_FIRST) == "incumbent"
    assert resolve_pick("X", "challenger-first") == "challenger"


def test_roles_see_only_what_the_loop_allows() -> None:
    engine, _ = run_engine(refine_raw({"j1": [], "j2": [], "j3": []}, max_rounds=1))
    saw = {t.phase: t.saw for t in engine.state.turns}
    assert saw["author_a"] == ["motion"]
    assert saw["critique"] == ["motion", "candidate:t1"]
    assert saw["author_b"] == ["motion", "candidate:t1", "critique:r1:critic"]
    assert saw["synthesis"] == ["motion", "candidate:t1", "candidate:t3"]
    assert saw["judging"] == ["motion", "X", "Y"]  # no labels, no history


class IncumbentLover:
    """A scripted judge that always picks the incumbent, whatever its position."""

    def __init__(self) -> None:
        self.engine = None

    async def complete(self, request, on_token):  # noqa: ANN001
        if request.slot.kind != "judgment":
            return await SCRIPTED.complete(request, on_token)
        pick = "X" if request.slot.variant == INCUMBENT_FIRST else "Y"
        from tui.engine.core.ports import TurnReply

        return TurnReply(
            text=json.dumps(
                {"pick": pick, "reason": f"{request.debater.id}: sturdier under a partial outage"}
            )
        )

    async def aclose(self) -> None:
        return None


def _engine_with(provider: Any, raw: dict[str, Any]):  # noqa: ANN202
    import asyncio

    from tui.engine import Engine

    engine = Engine(validate_spec(raw), lambda d: provider)
    asyncio.run(engine.run())
    return engine


@pytest.mark.parametrize("n", [1, 2, 3])
def test_converges_after_exactly_n_consecutive_incumbent_wins(n: int) -> None:
    engine = _engine_with(
        IncumbentLover(), refine_raw({"j1": [], "j2": [], "j3": []}, convergence=n)
    )
    r = engine.result()
    assert (r["decision"], r["decision_rule"]) == ("release", "judge_convergence")
    assert r["rounds_run"] == n and r["convergence_round"] == n
    assert [x["streak"] for x in r["judge_rounds"]] == list(range(1, n + 1))
    assert r["judge_agreement"] == 1.0 and r["minority_dissent"] == []
    assert r["winning_candidate"].startswith("alpha")


class ChallengerLover(IncumbentLover):
    async def complete(self, request, on_token):  # noqa: ANN001
        if request.slot.kind != "judgment":
            return await SCRIPTED.complete(request, on_token)
        pick = "Y" if request.slot.variant == INCUMBENT_FIRST else "X"
        from tui.engine.core.ports import TurnReply

        return TurnReply(
            text=json.dumps({"pick": pick, "reason": "fresher and simpler to operate"})
        )


def test_challenger_wins_become_incumbent_and_cap_hands_over() -> None:
    engine = _engine_with(
        ChallengerLover(), refine_raw({"j1": [], "j2": [], "j3": []}, max_rounds=2)
    )
    r = engine.result()
    assert (r["decision"], r["decision_rule"]) == ("escalate", "max_rounds_exhausted")
    assert [x["winner"] for x in r["judge_rounds"]] == ["challenger", "challenger"]
    assert r["winning_turn"] == r["judge_rounds"][-1]["challenger_turn"]
    assert r["winning_candidate"].startswith("synth")


class Flipper(IncumbentLover):
    """Always says X: under position swap, that flips and must count as no preference."""

    async def complete(self, request, on_token):  # noqa: ANN001
        if request.slot.kind != "judgment":
            return await SCRIPTED.complete(request, on_token)
        from tui.engine.core.ports import TurnReply

        return TurnReply(text=json.dumps({"pick": "X", "reason": "first is best"}))


def test_flip_under_position_swap_counts_as_no_preference() -> None:
    engine = _engine_with(
        Flipper(), refine_raw({"j1": [], "j2": [], "j3": []}, position_swap=True, max_rounds=1)
    )
    judging = [t for t in engine.state.turns if t.kind == "judgment"]
    assert len(judging) == 6 and {t.variant for t in judging} == {
        INCUMBENT_FIRST,
        "challenger-first",
    }
    rd = engine.result()["judge_rounds"][0]
    assert all(p["pick"] == "none" for p in rd["judges"].values())
    assert rd["winner"] == "tie" and rd["streak"] == 0


def test_handoff_export_and_seed_recorded(tmp_path: Path) -> None:
    raw = refine_raw({"j1": [], "j2": [], "j3": []}, convergence=1)
    del raw["debate"]["seed"]
    spec = validate_spec(raw)
    live = LiveSession.start(spec, raw, lambda d: IncumbentLover(), out=tmp_path / "r.toml")
    import asyncio

    asyncio.run(live.engine.run())
    live.close()
    data = load_session(tmp_path / "r.toml")
    assert data.result is not None
    assert isinstance(data.spec.debate.seed, int)  # drawn at start and recorded
    assert data.result["seed"] == data.spec.debate.seed
    doc = json.loads(to_json(data))
    handoff = doc["handoff"]
    assert handoff["winning_candidate"].startswith("alpha")
    assert handoff["convergence_round"] == 1 and handoff["judge_agreement"] == 1.0
    assert handoff["key_arguments"] and handoff["minority_dissent"] == []
    picks = data.result["judge_rounds"][0]["judges"]
    assert set(picks) == {"j1", "j2", "j3"} and all(p["reason"] for p in picks.values())


def test_the_handoff_names_the_candidates_a_judge_saw_as_x_and_y(tmp_path: Path) -> None:
    """Judges' reasons quote their blinded labels; exported, X and Y name the candidates."""
    from tests.conftest import EXAMPLES
    from tui.cli import main

    out = tmp_path / "s.toml"
    main(["run", str(EXAMPLES / "scripted-refine.toml"), "--headless", "--out", str(out)])
    data = load_session(out)
    assert data.result is not None
    last = data.result["judge_rounds"][-1]
    assert last["winner"] == "incumbent"  # the recorded result still quotes the labels
    assert data.result["key_arguments"] == [
        "X names where events stop and CRUD starts.",
        "Y changes less.",
    ]
    incumbent = f"The incumbent (turn {last['incumbent_turn']}, synth)"
    challenger = f"The challenger (turn {last['challenger_turn']}, synth)"
    handoff = json.loads(to_json(data))["handoff"]
    assert handoff["key_arguments"] == [
        f"{incumbent} names where events stop and CRUD starts.",
        f"{incumbent} changes less.",
    ]
    assert handoff["minority_dissent"] == [f"judge-3: {challenger} is more specific."]
    assert "X" not in to_markdown(data).split("Key arguments:")[1].split("## Transcript")[0]


@pytest.mark.parametrize(
    ("order", "said", "named"),
    [
        (INCUMBENT_FIRST, "X beats Y; candidate Y drifts.", "Inc beats chal; chal drifts."),
        ("challenger-first", "X beats Y; candidate Y drifts.", "Chal beats inc; inc drifts."),
        (
            INCUMBENT_FIRST,
            "X-ray logs and XY pairs stay as written.",
            "X-ray logs and XY pairs stay as written.",
        ),
    ],
)
def test_unblinding_follows_the_order_the_judge_was_shown(
    order: str, said: str, named: str
) -> None:
    assert unblinded(said, order, "inc", "chal") == named

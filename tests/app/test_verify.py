"""Console views of the verification protocols: challenges, judge panel, rubric table.

Pilot tests drive scripted challenge, refine and rubric debates live and in
replay; snapshot tests catch each view (the challenge list in two themes).
"""

from __future__ import annotations

import asyncio

import pytest

from tests.app.app_support import (
    challenge_spec,
    decided,
    fill,
    live_screen,
    make_app,
    plain,
    record_session,
    refine_spec,
    rubric_spec,
    session_file,
    tap,
    wait_until,
    write_spec,
)
from tui.app.components.verify import (
    FindingsPanel,
    JudgePanel,
    RubricPanel,
    distribution_parts,
    judge_parts,
)
from tui.app.screens.modals import DecideModal
from tui.engine.record.session import load_session

SIZE = (160, 45)


# ---------------------------------------------------------------- challenge
async def test_challenge_list_tracks_status_across_rounds(tmp_path, moot_dirs):
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, challenge_spec())))
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None)
        panel = screen.query_one(FindingsPanel)
        text = panel.text
        assert decided(screen) == ("release", "no_objections", "rule")
        assert "mode blocking" in text and "convergence converging" in text
        assert "C1.1 CRITICAL reliability" in text and "C1.2 MINOR process" in text
        assert "r1 raised → r2 addressed" in text
        assert "defender addressed: The migration is now reversible" in text
        assert "2 raised · 0 unresolved" in text
        assert "release blocked" not in text and not panel.has_class("-blocked")
        assert panel.border_subtitle == "blocking"
        # No votes in this protocol: the side panel shows the decision, not vote bars.
        assert screen.tally_panel.border_title == "decision"
        await pilot.press("q")


async def test_unresolved_critical_blocks_release_in_the_modal(tmp_path, moot_dirs):
    spec = challenge_spec(max_rounds=1)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=SIZE) as pilot:
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        screen = live_screen(app)
        panel = screen.query_one(FindingsPanel)
        assert "⛔ release blocked: C1.1" in panel.text and panel.has_class("-blocked")
        assert "1 critical" in panel.text
        assert "blocking mode" in modal.vetoes["release"]  # said before the operator picks
        # Refused votes are shown disabled with the reason, never pre-selected.
        assert modal.chosen_vote() is None
        release = modal.query_one("#vote-0")
        assert release.disabled and "refused" in str(release.label)
        assert "C1.1" in str(modal.query_one(".veto").render())
        await pilot.click("#vote-0")
        assert modal.chosen_vote() is None
        # The engine's own refusal still reaches the modal if the protocol changes its mind.
        refusal = modal.apply("release", "ship it anyway")
        assert refusal and "unresolved critical challenges" in refusal and "C1.1" in refusal
        assert screen.engine.status == "AWAITING_OPERATOR"
        await pilot.click("#vote-1")  # revise
        await fill(pilot, "#rationale", "the rollback is still a backup restore")
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: decided(screen) and screen.decision.decision == "revise")
        assert app.screen is screen
        await pilot.press("q")
    assert app.return_value == 0
    result = load_session(session_file(moot_dirs)).result
    assert result is not None
    assert (result["decision"], result["decided_by"]) == ("revise", "operator")
    assert result["rationale"] == "the rollback is still a backup restore"
    assert result["unresolved_critical"] == ["C1.1"]


async def test_advisory_mode_lets_the_operator_release(tmp_path, moot_dirs):
    spec = challenge_spec(max_rounds=1, mode="advisory")
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=SIZE) as pilot:
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        screen = live_screen(app)
        assert "mode advisory" in screen.query_one(FindingsPanel).text
        assert "release blocked" not in screen.query_one(FindingsPanel).text
        await pilot.click("#vote-0")
        await fill(pilot, "#rationale", "accepted risk, owner on call")
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: decided(screen) and screen.decision.decision == "release")
        assert modal.refused is None
        await pilot.press("q")
    result = load_session(session_file(moot_dirs)).result
    assert result is not None
    assert (result["decision"], result["decided_by"]) == ("release", "operator")


async def test_challenge_replay_shows_the_list_at_the_cursor(tmp_path, moot_dirs):
    path = await record_session(challenge_spec(), moot_dirs["sessions"] / "challenge.toml")
    app = make_app(tmp_path, replay_path=str(path), replay_start=1)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_until(
            pilot, lambda: getattr(app.screen, "cursor", None) == 1 and app.screen
        )
        text = screen.query_one(FindingsPanel).text
        assert "2 raised · 2 unresolved" in text and "now open" in text
        assert "defender: no answer yet" in text
        assert "release blocked: C1.1" in text
        await pilot.press("right")
        await wait_until(pilot, lambda: screen.cursor == 2)
        text = screen.query_one(FindingsPanel).text
        assert "defender addressed: Moved to Tuesday morning." in text
        assert "r2 addressed" not in text
        await pilot.press("end")
        await wait_until(pilot, lambda: screen.cursor == 3)
        text = screen.query_one(FindingsPanel).text
        assert "r1 raised → r2 addressed" in text and "0 unresolved" in text
        await pilot.press("home")
        await wait_until(pilot, lambda: screen.cursor == 0)
        assert "no challenges yet" in screen.query_one(FindingsPanel).text
        await pilot.press("q")


# ------------------------------------------------------------------- refine
async def test_judge_panel_shows_picks_agreement_and_streak(tmp_path, moot_dirs):
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, refine_spec())))
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None)
        assert decided(screen) == ("release", "judge_convergence", "rule")
        panel = screen.query_one(JudgePanel)
        text = panel.text
        protocol = screen.engine.protocol
        assert len(protocol.rounds) == 3 and protocol.streak == 2
        assert protocol.rounds[0]["winner"] == "challenger"
        assert "streak ●● 2/2 wins in a row to converge" in text
        assert panel.border_subtitle == "streak 2/2"
        inc = protocol.incumbent
        assert f"incumbent #{inc.index} by {inc.speaker}" in text
        for r in protocol.rounds:
            assert f"round {r['round']}  winner {r['winner']}  agreement " in text
            for judge, pick in r["judges"].items():
                assert judge in text
                assert pick["pick"] in ("incumbent", "challenger", "none")
        assert "Y changes less." in text and "agreement 67%" in text
        await pilot.press("q")


async def test_judge_panel_in_replay_shows_judging_in_progress(tmp_path, moot_dirs):
    path = await record_session(refine_spec(), moot_dirs["sessions"] / "refine.toml")
    data = load_session(path)
    first_judgment = next(i for i, t in enumerate(data.turns) if t.kind == "judgment")
    app = make_app(tmp_path, replay_path=str(path), replay_start=first_judgment + 2)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_until(
            pilot, lambda: getattr(app.screen, "cursor", None) == first_judgment + 2 and app.screen
        )
        text = screen.query_one(JudgePanel).text
        assert "round 1  judging…" in text
        assert "judge-1" in text and "judge-2" in text and "judge-3" not in text
        assert "streak ○○ 0/2" in text
        await pilot.press("right")
        await wait_until(pilot, lambda: screen.cursor == first_judgment + 3)
        text = screen.query_one(JudgePanel).text
        assert "judging…" not in text and "round 1  winner" in text and "judge-3" in text
        await pilot.press("q")


# ------------------------------------------------------------------- rubric
async def test_rubric_table_shows_evidence_and_forced_verdicts(tmp_path, moot_dirs):
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, rubric_spec())))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, DecideModal))
        screen = live_screen(app)
        assert screen.decision.rule == "rubric_failed"
        panel = screen.query_one(RubricPanel)
        text = panel.text
        assert "turn #2 critic (adversary critique)" in text
        assert "FAIL" in text and "1 of 2 properties missing evidence" in text
        assert panel.has_class("-fail") and panel.border_subtitle == "fail"
        assert "rollback          yes      no forced" in text
        assert "✗ artifact_quote “instant rollback button”" in text
        assert "not found verbatim in the artifact" in text
        assert "assertion is forbidden evidence" in text
        assert "staged            yes      yes" in text
        assert "✓ artifact_quote “1% of clients for a day”" in text
        assert "rationale Two stages with a day between them." in text
        assert "Does the plan include a rollback path?" in text
        # The critic asked for release and the evidence refused it: the adversary's tally
        # shows requests, and no bar may read as decided.
        tally = screen.tally_panel
        said = plain(tally)
        assert tally.border_title == "requests" and "┃" not in said and "threshold" not in said
        assert "requested; code decides the routing" in said
        await pilot.press("escape")
        await pilot.press("q")


async def test_rubric_table_in_replay(tmp_path, moot_dirs):
    path = await record_session(rubric_spec(), moot_dirs["sessions"] / "rubric.toml")
    app = make_app(tmp_path, replay_path=str(path), replay_start=1)
    async with app.run_test(size=SIZE) as pilot:
        screen = await wait_until(
            pilot, lambda: getattr(app.screen, "cursor", None) == 1 and app.screen
        )
        assert "no assessed turn yet" in screen.query_one(RubricPanel).text
        await pilot.press("right")
        await wait_until(pilot, lambda: screen.cursor == 2)
        assert "1 of 2 properties missing evidence" in screen.query_one(RubricPanel).text
        await pilot.press("q")


# ---------------------------------------------------------------- snapshots
SNAP = (150, 42)


async def _settled(pilot) -> None:
    """Wait for the debate to end (escaping an auto-opened modal); drop the toasts."""
    app = pilot.app
    screen = await wait_until(pilot, lambda: app.debate_screen())
    await wait_until(pilot, lambda: screen.decision is not None)
    if isinstance(app.screen, DecideModal):
        app.screen.dismiss(None)
        await wait_until(pilot, lambda: app.screen is screen)
    app.clear_notifications()
    await pilot.pause(0.1)


@pytest.mark.parametrize("theme", ["moot-dark", "moot-light"])
def test_snapshot_challenge_blocked(snap_compare, tmp_path, theme):
    spec = write_spec(tmp_path, challenge_spec(max_rounds=1))
    app = make_app(tmp_path, spec_path=str(spec), theme=theme)
    assert snap_compare(app, terminal_size=SNAP, run_before=_settled)


def test_snapshot_judge_panel(snap_compare, tmp_path):
    spec = write_spec(tmp_path, refine_spec())
    app = make_app(tmp_path, spec_path=str(spec), theme="moot-dark")
    assert snap_compare(app, terminal_size=SNAP, run_before=_settled)


def test_snapshot_rubric_table(snap_compare, tmp_path):
    spec = write_spec(tmp_path, rubric_spec())
    app = make_app(tmp_path, spec_path=str(spec), theme="moot-high-contrast")
    assert snap_compare(app, terminal_size=SNAP, run_before=_settled)


def test_snapshot_challenge_replay(snap_compare, tmp_path):
    out = tmp_path / "sessions" / "20250101-120000-billing-deploy.toml"
    path = asyncio.run(record_session(challenge_spec(), out))
    app = make_app(tmp_path, replay_path=str(path), replay_start=2, theme="moot-dark")

    async def shown(pilot) -> None:
        await wait_until(pilot, lambda: getattr(pilot.app.screen, "cursor", 0) == 2)
        await pilot.pause(0.05)

    assert snap_compare(app, terminal_size=SNAP, run_before=shown)


def _plain(parts: list[tuple[str, str] | str]) -> str:
    return "".join(p if isinstance(p, str) else p[0] for p in parts)


def test_the_generic_panels_draw_only_the_data_they_are_given() -> None:
    """The distribution panel shows the word a round is marked with, and the judges panel
    the picks of the round under way, from view data alone (no turn kinds, no rules)."""
    rounds = [
        {"round": 1, "estimates": [2.0, 9.0], "quartiles": [3.0, 5.5, 8.0], "spread": 0.9},
        {
            "round": 2,
            "estimates": [5.0, 6.0],
            "quartiles": [5.0, 5.5, 6.0],
            "spread": 0.1,
            "mark": "settled",
        },
    ]
    shown = _plain(distribution_parts({"unit": "days", "convergence": 0.25, "rounds": rounds}))
    assert shown.count("settled") == 1 and shown.rstrip().endswith("spread 0.1  settled")
    pending = [
        {"round": 3, "judge": "j1", "pick": "challenger", "reason": "Clearer.", "orders": []}
    ]
    shown = _plain(judge_parts({"needed": 2, "streak": 1, "rounds": [], "pending": pending}))
    assert "round 3  judging…" in shown and "j1" in shown and "challenger" in shown

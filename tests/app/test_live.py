"""Pilot tests of the live console: controls, modals and the saved session."""

from __future__ import annotations

from tests.app.app_support import (
    confirm_guard,
    debate_spec,
    decided,
    fill,
    live_screen,
    make_app,
    plain,
    quit_confirmed,
    session_file,
    tap,
    wait_until,
    write_spec,
)
from tui.app.components.cards import TurnCard
from tui.app.screens.modals import DecideModal, FailureModal, NoteModal
from tui.engine.record.session import load_session


async def _first_turn_speaking(pilot):  # noqa: ANN001, ANN202
    """Wait until turn 1 streams, so a key lands while a turn is in flight; return the screen."""
    screen = await wait_until(pilot, lambda: pilot.app.debate_screen())
    await wait_until(
        pilot,
        lambda: screen.timeline.entries.get(1) and screen.timeline.entries[1].status == "speaking",
    )
    return screen


async def test_live_screen_runs_a_debate_to_its_decision(tmp_path, moot_dirs):
    spec = debate_spec(debaters=3, threshold=2, scripts={1: {"votes": ["release"]}})
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None)
        assert decided(screen) == ("release", "threshold_vote", "rule")
        assert len(list(screen.query(TurnCard))) == 3
        assert "release" in plain(screen.tally_panel)
        assert screen.header.status == "ENDED"
        await pilot.press("q")
    assert app.return_value == 0
    data = load_session(session_file(moot_dirs))
    assert data.result is not None
    assert data.result["decision"] == "release"


async def test_pause_stops_the_next_turn_from_starting(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=3, token_delay_ms=25)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _first_turn_speaking(pilot)
        await tap(pilot, "p")
        await wait_until(pilot, lambda: screen.header.status == "PAUSED")  # before the turn ends
        engine = screen.engine
        assert engine.paused
        # The turn in flight finishes; then nothing is speaking and nothing starts.
        await wait_until(
            pilot, lambda: not any(e.status == "speaking" for e in screen.timeline.entries.values())
        )
        done = len(engine.state.turns)
        assert done >= 1
        for _ in range(40):
            await pilot.pause(0.01)
        assert len(engine.state.turns) == done
        assert not any(e.status == "speaking" for e in screen.timeline.entries.values())
        assert all(p.streaming is None for p in screen.query("DebaterPane"))
        await tap(pilot, "p")
        await wait_until(pilot, lambda: screen.header.status == "LIVE")
        await wait_until(pilot, lambda: len(engine.state.turns) > done)
        await quit_confirmed(pilot)
    assert app.return_value in (130, 3)  # quit before a decision: saved, not decided
    actions = [a["action"] for a in load_session(session_file(moot_dirs)).actions]
    assert actions[:2] == ["pause", "resume"]


async def test_unresolved_debate_opens_the_decide_modal_and_decision_is_saved(tmp_path, moot_dirs):
    spec = debate_spec(debaters=3, max_rounds=1, phases=["proposal"])
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        assert modal.unresolved and modal.allow_extend
        await pilot.press("enter")  # no rationale: refused, the modal stays
        assert app.screen is modal
        await pilot.click("#vote-1")
        await pilot.click("#rationale")
        await pilot.press(*"rehearse the rollback first")
        await pilot.press("enter")
        screen = live_screen(app)
        await wait_until(pilot, lambda: decided(screen) and screen.decision.decision == "revise")
        await pilot.press("q")
    assert app.return_value == 0
    result = load_session(session_file(moot_dirs)).result
    assert result is not None
    assert result["decided_by"] == "operator"
    assert result["decision"] == "revise"
    assert result["decision_rule"] == "operator_decision"
    assert result["rationale"] == "rehearse the rollback first"


async def test_decide_key_mid_debate(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=5, token_delay_ms=20)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.engine and screen.engine.status == "LIVE")
        await tap(pilot, "d")
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        assert not modal.allow_extend
        await pilot.click("#vote-0")
        await fill(pilot, "#rationale", "enough said")
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: screen.decision is not None)
        await pilot.press("q")
    result = load_session(session_file(moot_dirs)).result
    assert result is not None
    assert (result["decided_by"], result["rationale"]) == ("operator", "enough said")
    assert result["decision"] == "release"


async def test_add_a_round_from_the_unresolved_modal(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, max_rounds=1, phases=["proposal"])
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, DecideModal))
        await pilot.click("#extend")
        await confirm_guard(pilot)  # a round added asks first
        screen = live_screen(app)
        await wait_until(pilot, lambda: len(screen.engine.state.turns) == 4)
        await wait_until(pilot, lambda: isinstance(app.screen, DecideModal))  # unresolved again
        await pilot.press("escape")
        await pilot.press("q")
    assert app.return_value == 3  # left unresolved
    data = load_session(session_file(moot_dirs))
    assert data.result is not None
    assert [a["action"] for a in data.actions] == ["extend"]
    assert data.result["decision"] == "escalate"


async def test_note_reaches_the_next_turn(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=2, token_delay_ms=15)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _first_turn_speaking(pilot)
        await tap(pilot, "p")  # hold the debate while typing, so the note is in time
        await tap(pilot, "n")
        await wait_until(pilot, lambda: isinstance(app.screen, NoteModal))
        await fill(pilot, "#note", "mind the table lock")
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: app.screen is screen)
        await tap(pilot, "p")
        await wait_until(pilot, lambda: len(screen.engine.state.turns) >= 2)
        await tap(pilot, "q")
    data = load_session(session_file(moot_dirs))
    assert "note:1" not in data.turns[0].saw
    assert "note:1" in data.turns[1].saw
    notes = [a for a in data.actions if a["action"] == "note"]
    assert notes[0]["text"] == "mind the table lock"
    assert notes[0]["after_turn"] <= 1  # recorded while turn 1 was in flight or just after


async def test_escalate_key_hands_over_to_the_operator(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=5, token_delay_ms=20)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.engine and screen.engine.status == "LIVE")
        await tap(pilot, "e")
        await confirm_guard(pilot)
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        assert modal.unresolved
        assert screen.header.status == "AWAITING_OPERATOR"
        await tap(pilot, "escape")
        await tap(pilot, "q")
    assert app.return_value == 3
    data = load_session(session_file(moot_dirs))
    assert data.result is not None
    assert data.result["decision_rule"] == "operator_escalation"


async def test_provider_failure_offers_retry_skip_replace(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=1, scripts={0: {"fail": [1]}})
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        modal = await wait_until(pilot, lambda: isinstance(app.screen, FailureModal) and app.screen)
        screen = live_screen(app)
        assert screen.pane("planner").has_class("-failed")
        assert "scripted failure" in plain(screen.pane("planner").query_one(".failure"))
        assert modal.speaker == "planner"
        await pilot.click("#skip")
        await wait_until(pilot, lambda: len(screen.engine.state.turns) == 2)
        assert screen.engine.state.turns[0].invalid
        assert not screen.pane("planner").has_class("-failed")
        await pilot.press("q")
    data = load_session(session_file(moot_dirs))
    assert data.turns[0].invalid and "provider failure" in (data.turns[0].error or "")
    assert data.actions[0]["action"] == "skip"


async def test_replace_model_after_a_failure(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=1, scripts={0: {"fail": [1]}})
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, FailureModal))
        await pilot.click("#model")
        await pilot.press(*"scripted")
        await pilot.click("#replace")
        screen = live_screen(app)
        await wait_until(pilot, lambda: len(screen.engine.state.turns) == 2)
        assert not screen.engine.state.turns[0].invalid
        await pilot.press("q")
    data = load_session(session_file(moot_dirs))
    assert data.actions[0]["action"] == "replace_model"


async def test_transcript_view(tmp_path, moot_dirs):
    spec = debate_spec(
        debaters=2,
        phases=["proposal"],
        max_rounds=1,
        threshold=1,
        scripts={1: {"votes": ["release"]}},
    )
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None)
        await pilot.press("t")
        from tui.app.screens.transcript import TranscriptScreen

        await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen))
        text = " ".join(plain(w) for w in app.screen.query(".entry"))
        assert "planner" in text and "critic" in text
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("q")


async def test_an_engine_crash_is_shown_and_quits_unresolved(tmp_path, moot_dirs):
    def broken(_debater):
        raise RuntimeError("registry exploded")

    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=1)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)), provider_for=broken)
    shown: list[str] = []
    notify = app.notify

    def capture(message, **kwargs):
        shown.append(str(message))
        notify(message, **kwargs)

    app.notify = capture
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.status == "ENDED")
        assert screen.header.status == "ENDED"  # the header follows the screen's one status
        assert screen.decision is None
        assert any("RuntimeError: registry exploded" in m for m in shown)
        await pilot.press("q")
    assert app.return_value == 3  # stopped without a decision: unresolved, no traceback

"""The decide modal cannot lose the operator's words nor decide a vote not picked."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from tests.app.app_support import (
    challenge_spec,
    debate_spec,
    decided,
    live_screen,
    make_app,
    tap,
    wait_until,
    write_spec,
)
from tui.app.screens.modals import DecideModal, FailureModal, GuardModal
from tui.engine.record.session import load_session


def _unresolved(tmp_path):
    spec = debate_spec(debaters=2, max_rounds=1, phases=["proposal"])
    return make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))


async def test_nothing_preselected_and_enter_says_what_is_missing(tmp_path, moot_dirs):
    app = _unresolved(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        assert modal.chosen_vote() is None
        rationale = modal.query_one("#rationale", Input)
        rationale.focus()
        await pilot.press(*"keep it")
        await pilot.press("enter")  # a rationale but no vote: nothing decided, no round added
        assert app.screen is modal
        assert "a vote" in str(modal.query_one("#decide-error").render())
        assert rationale.value == "keep it"
        screen = live_screen(app)
        assert screen.engine.state.max_rounds == 1 and screen.decision.decision == "escalate"
        await pilot.click("#vote-1")
        rationale.value = ""
        rationale.focus()
        await pilot.press("enter")  # a vote but no rationale
        assert app.screen is modal
        assert "a rationale" in str(modal.query_one("#decide-error").render())
        await pilot.press("escape")
        await pilot.press("q")
    data = load_session(next((moot_dirs["sessions"]).glob("*.toml")))
    assert data.result is not None
    assert data.actions == [] and data.result["decision"] == "escalate"


async def test_rationale_typed_in_two_visits_is_kept(tmp_path, moot_dirs):
    app = _unresolved(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        await pilot.click("#rationale")
        await pilot.press(*"rehearse first")
        await pilot.press("shift+tab")  # away (the votes) and back
        assert not modal.query_one("#rationale", Input).has_focus
        await pilot.press("tab")
        rationale = modal.query_one("#rationale", Input)
        assert rationale.has_focus
        assert rationale.selected_text == "" and rationale.cursor_position == len("rehearse first")
        await pilot.press(*", revisit in Q3")
        await pilot.click("#vote-1")
        await pilot.click("#confirm")
        screen = live_screen(app)
        await wait_until(pilot, lambda: decided(screen))
        await pilot.press("q")
    result = load_session(next((moot_dirs["sessions"]).glob("*.toml"))).result
    assert result is not None
    assert (result["decision"], result["rationale"]) == ("revise", "rehearse first, revisit in Q3")


@pytest.mark.parametrize("protocol", ["debate", "challenge"])
async def test_buttons_are_labelled_and_fit_80x24(tmp_path, moot_dirs, protocol):
    if protocol == "challenge":  # a summary and a refused vote with its reason: the tallest
        spec = write_spec(tmp_path, challenge_spec(max_rounds=1))
        app = make_app(tmp_path, spec_path=str(spec))
    else:
        app = _unresolved(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        buttons = list(modal.query("Button"))
        assert [str(b.label) for b in buttons] == ["Decide", "Add a round", "Cancel"]
        box = modal.query_one("#decide").content_region  # inside the border: not cut off
        for button in buttons:
            region = button.region
            assert region.width >= len(str(button.label)) + 2
            assert box.contains_region(region), (region, box)
        await pilot.press("escape")
        await pilot.press("q")


async def test_failure_modal_model_field_takes_enter(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=1, scripts={0: {"fail": [1]}})
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, FailureModal))
        await pilot.press("m")  # one key to the field, not three Tabs
        assert app.screen.query_one("#model", Input).has_focus
        await pilot.press(*"scripted", "enter")
        screen = live_screen(app)
        await wait_until(pilot, lambda: len(screen.engine.state.turns) == 2)
        assert not screen.engine.state.turns[0].invalid
        await tap(pilot, "q")
    data = load_session(next((moot_dirs["sessions"]).glob("*.toml")))
    assert data.actions[0]["action"] == "replace_model"


async def test_an_escalation_while_deciding_turns_the_open_modal_unresolved(tmp_path, moot_dirs):
    """The operator opened d while the debate ran; it escalates: the same modal gains the
    summary and "Add a round", and keeps the vote and the words already given."""
    spec = debate_spec(debaters=2, max_rounds=3, phases=["proposal"], token_delay_ms=30)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.timeline.current_speaker)
        await tap(pilot, "d")
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        assert not modal.unresolved and not modal.query("#extend")
        await tap(pilot, "down")  # to the second vote
        await tap(pilot, "enter")
        rationale = modal.query_one("#rationale", Input)
        rationale.focus()
        await pilot.press(*"half written")
        vote = modal.chosen_vote()
        screen.engine.escalate()
        await wait_until(pilot, lambda: modal.unresolved and modal.query("#extend"))
        assert app.screen is modal, "no second modal over (or instead of) the first"
        assert "ended unresolved" in str(modal.query_one("#summary").render())
        assert rationale.value == "half written" and modal.chosen_vote() == vote is not None
        await tap(pilot, "escape")


def _unconverged_delphi(tmp_path):
    import tomllib
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "sessions/examples/scripted-delphi.toml"
    spec = tomllib.loads(example.read_text("utf-8"))
    spec["debate"]["max_rounds"] = 1  # round 1 (5, 12, 8) is too spread out to converge
    return make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))


async def test_a_protocol_deciding_a_number_has_the_operator_type_it(tmp_path, moot_dirs):
    app = _unconverged_delphi(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        value = modal.query_one("#value", Input)
        assert value.has_focus and not modal.query_one("#votes").display
        await pilot.press(*"soon")
        modal.query_one("#rationale", Input).value = "The history of similar exports."
        await pilot.click("#confirm")
        assert app.screen is modal  # refused by the protocol's rule, the words kept
        assert "not a number (engineer-days)" in str(modal.query_one("#decide-error").render())
        value.value = "9.5"
        modal.query_one("#rationale", Input).focus()
        await pilot.press("enter")
        screen = live_screen(app)
        await wait_until(pilot, lambda: (decided(screen) or ("",))[0] == "9.5")
        await pilot.press("q")
    result = load_session(next((moot_dirs["sessions"]).glob("*.toml"))).result
    assert result is not None
    assert (result["decision"], result["decision_rule"]) == ("9.5", "operator_decision")
    assert result["rationale"] == "The history of similar exports."


async def test_add_a_round_asks_first_as_escalate_does(tmp_path, moot_dirs):
    """A round on the embedded model runs for minutes: "Add a round", pressed by accident,
    asks first (Enter on the focused answer keeps the modal and its words); only yes adds it."""
    app = _unresolved(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        modal.query_one("#rationale", Input).value = "half written"
        modal.query_one("#extend").focus()
        await pilot.press("enter")
        guard = await wait_until(pilot, lambda: isinstance(app.screen, GuardModal) and app.screen)
        assert "round" in str(guard.question).lower()
        await pilot.press("enter")  # the focused answer: stay
        await wait_until(pilot, lambda: app.screen is modal)
        screen = live_screen(app)
        assert screen.engine.state.max_rounds == 1
        assert modal.query_one("#rationale", Input).value == "half written"
        modal.query_one("#extend").focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, GuardModal))
        await pilot.press("tab", "enter")  # deliberately to the action's button
        await wait_until(pilot, lambda: screen.engine.state.max_rounds == 2)
        await pilot.press("q")
    data = load_session(next((moot_dirs["sessions"]).glob("*.toml")))
    assert [a["action"] for a in data.actions] == ["extend"]

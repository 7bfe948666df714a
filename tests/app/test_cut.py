"""Cutting a turn from the console: x (or X for the phase), then redo, skip or replace."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.app.app_support import (
    confirm_guard,
    debate_spec,
    fill,
    live_screen,
    make_app,
    plain,
    quit_confirmed,
    scripted,
    session_file,
    tap,
    wait_until,
    write_spec,
)
from tests.helpers import SCRIPTED  # unpaced, as a headless run has it
from tui.app.screens.help import HelpScreen
from tui.app.screens.modals import CutModal
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.record.session import load_session

LONG = " ".join(["Stage the migration behind a flag and rehearse the rollback first."] * 25)


def _long(debaters: int) -> dict[int, dict[str, list[str]]]:
    """Each debater's first turn long enough to be cut after the cut is confirmed."""
    return {i: {"stances": [LONG, "Ship it."]} for i in range(debaters)}


class _AgainAtOnce:
    """Paced as the console's provider is, except a turn played again after its cut: that
    streams at once. The cut is what these tests watch; the long turn played a second time
    only made each test wait for it (5 s)."""

    def __init__(self) -> None:
        self.played: set[tuple[str, int]] = set()

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        turn = (request.debater.id, request.speaker_turn)
        provider = SCRIPTED if turn in self.played else scripted(request.debater)
        self.played.add(turn)
        return await provider.complete(request, on_token)

    async def aclose(self) -> None:
        return None


def _cut_app(tmp_path, spec: dict[str, Any]):  # noqa: ANN001, ANN202
    again = _AgainAtOnce()
    return make_app(
        tmp_path, spec_path=str(write_spec(tmp_path, spec)), provider_for=lambda _: again
    )


def _streamed(screen, speaker: str) -> int:  # noqa: ANN001
    """Tokens the pane has shown of the turn ``speaker`` is speaking."""
    streaming = screen.pane(speaker).streaming
    return 0 if streaming is None else streaming.tokens


def _three_speaking_at_once() -> dict[str, Any]:
    """Three parallel speakers with stances long enough that all three are still
    streaming together when the test looks, however slowly a loaded machine runs them."""
    return debate_spec(
        debaters=3, phases=["proposal"], parallel=True, token_delay_ms=20, scripts=_long(3)
    )


async def _cut_while_speaking(pilot, key: str, speakers: int = 1):  # noqa: ANN001, ANN202
    """Wait for the live screen and until ``speakers`` turns stream (some words in), press
    ``key``; return the screen and the modal."""
    await wait_until(pilot, lambda: pilot.app.debate_screen())
    screen = live_screen(pilot.app)
    engine = screen.engine
    await wait_until(
        pilot,
        lambda: (
            len(engine.player.speaking) >= speakers
            and all(_streamed(screen, s.speaker) for s in engine.player.speaking)
        ),
    )
    await tap(pilot, key)
    await confirm_guard(pilot)
    modal = await wait_until(
        pilot, lambda: isinstance(pilot.app.screen, CutModal) and pilot.app.screen
    )
    return screen, modal


async def test_x_cuts_the_speaking_turn_and_redo_with_a_note_goes_on(tmp_path, moot_dirs):
    # Only the planner's turn is cut: the critic speaks briefly (its long turn streamed for
    # seconds after the cut and made this one of the slowest tests).
    spec = debate_spec(debaters=2, phases=["proposal"], token_delay_ms=20, scripts=_long(1))
    app = _cut_app(tmp_path, spec)
    async with app.run_test(size=(160, 45)) as pilot:
        screen, modal = await _cut_while_speaking(pilot, "x")
        assert modal.speakers == ["planner"]
        assert modal.partial_words >= 1  # the words spoken before the cut, counted
        assert screen.engine.awaiting_cut  # the turn waits for the operator
        assert screen.timeline.entries[1].status == "failed"
        await fill(pilot, "#note", "answer the rollback question first")
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: screen.decision is not None, timeout=60)
        assert [t.speaker for t in screen.engine.state.turns] == ["planner", "critic"]
        assert not screen.engine.state.turns[0].invalid  # the redo was played in full
    data = load_session(session_file(moot_dirs))
    assert data.result is not None
    cut, note = data.actions[0], data.actions[1]
    assert cut["action"] == "cut" and cut["speaker"] == "planner" and cut["turn"] == 1
    assert cut["partial"]  # the words spoken before the cut are kept
    assert note["action"] == "note" and note["text"] == "answer the rollback question first"
    assert data.result["decision"]


async def test_capital_x_cuts_every_turn_of_the_phase_and_skip_records_them(tmp_path, moot_dirs):
    spec = _three_speaking_at_once()
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen, modal = await _cut_while_speaking(pilot, "X", speakers=3)
        assert sorted(modal.speakers) == ["critic", "operator", "planner"]
        await pilot.click("#skip")
        await wait_until(pilot, lambda: screen.decision is not None, timeout=60)
        turns = screen.engine.state.turns
        assert len(turns) == 3 and all(t.invalid for t in turns)
        assert all(t.error == "cut by the operator and skipped" for t in turns)
    data = load_session(session_file(moot_dirs))
    kinds = [a["action"] for a in data.actions]
    assert kinds.count("cut") == 3 and kinds.count("skip") == 3


async def test_replace_model_from_the_cut_modal_takes_enter(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, phases=["proposal"], token_delay_ms=20, scripts=_long(1))
    app = _cut_app(tmp_path, spec)
    async with app.run_test(size=(160, 45)) as pilot:
        screen, modal = await _cut_while_speaking(pilot, "x")
        await tap(pilot, "escape")  # later: the turn keeps waiting, x asks again
        assert screen.engine.awaiting_cut
        await tap(pilot, "x")  # asks no question again: the turn is already cut
        modal = await wait_until(pilot, lambda: isinstance(app.screen, CutModal) and app.screen)
        await tap(pilot, "tab")  # the note, then the model
        await wait_until(pilot, lambda: modal.query_one("#model").has_focus)
        await fill(pilot, "#model", "scripted-b")
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: screen.decision is not None, timeout=60)
        assert screen.pane("planner").model == "scripted-b"
        assert screen.engine.state.turns[0].model == "scripted-b"
    data = load_session(session_file(moot_dirs))
    kinds = [a["action"] for a in data.actions]
    assert kinds[:2] == ["cut", "replace_model"]
    assert data.actions[1]["model"] == "scripted-b"


async def test_the_keys_screen_lists_the_cut_keys(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, phases=["proposal"], token_delay_ms=500)  # still running
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.debate_screen())
        screen = live_screen(app)
        await tap(pilot, "question_mark")
        help_screen = await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert help_screen
        text = plain(app.screen.query_one("#help-keys"))
        assert "Cut turn" in text and "Cut phase" in text
        await tap(pilot, "escape")
        await wait_until(pilot, lambda: app.screen is screen)
        await quit_confirmed(pilot)


async def test_x_in_the_wide_layout_ignores_a_pane_picked_in_the_narrow_one(tmp_path, moot_dirs):
    """``[`` / ``]`` pick a pane only below 120 columns; in the wide layout that old pick is
    invisible and must not choose which of several speakers x cuts."""
    spec = _three_speaking_at_once()
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: pilot.app.debate_screen())
        live_screen(app).picked = "operator"  # picked at 80 columns, then the terminal grew
        screen, modal = await _cut_while_speaking(pilot, "x", speakers=3)
        assert len(modal.speakers) == 1 and modal.speakers != ["operator"]
        assert screen is live_screen(app)


class HeldTurn:
    """A turn that says one word and then waits, so the debate is mid-turn for as long as
    the test needs, whatever the machine's speed (quitting cancels it)."""

    def __init__(self) -> None:
        self.speaking = False

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        if on_token is not None:
            on_token('{"stance": "Hold')
        self.speaking = True
        await asyncio.Event().wait()
        raise AssertionError("a held turn never ends by itself")


async def test_a_sentence_typed_at_the_console_fires_neither_cut_nor_escalate(tmp_path, moot_dirs):
    """e and x ask first; letters typed into that question do nothing, Enter keeps running."""
    from tui.app.screens.modals import GuardModal

    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=3)
    held = HeldTurn()
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)), provider_for=lambda _: held)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: pilot.app.debate_screen())
        screen = live_screen(app)
        await wait_until(pilot, lambda: held.speaking and screen.engine.player.speaking)
        for guarded, typed in (("e", "they say yes"), ("x", "next key y")):
            await tap(pilot, guarded)
            # The question is up before the sentence goes on (a loaded machine pushes it late).
            await wait_until(pilot, lambda: isinstance(app.screen, GuardModal))
            for key in typed:
                await tap(pilot, "space" if key == " " else key)
            assert isinstance(app.screen, GuardModal)  # letters neither answer nor close it
            await tap(pilot, "enter")
            await wait_until(pilot, lambda: app.screen is screen)  # Enter keeps it running
        assert screen.engine.status == "LIVE" and not screen.engine.awaiting_cut
        await tap(pilot, "e")
        await wait_until(pilot, lambda: isinstance(app.screen, GuardModal))
        await tap(pilot, "escape")  # Esc keeps running too
        await wait_until(pilot, lambda: app.screen is screen)
        assert screen.engine.status == "LIVE"
        await quit_confirmed(pilot)
    kinds = [a["action"] for a in load_session(session_file(moot_dirs)).actions]
    assert "escalate" not in kinds and "cut" not in kinds


async def test_the_cut_modal_focuses_the_note_and_letters_type(tmp_path, moot_dirs):
    # Only the planner's turn is long: the critic's long turn streamed for seconds after the
    # note was typed, and made this one of the slowest tests.
    spec = debate_spec(debaters=2, phases=["proposal"], token_delay_ms=20, scripts=_long(1))
    app = _cut_app(tmp_path, spec)
    async with app.run_test(size=(160, 45)) as pilot:
        screen, modal = await _cut_while_speaking(pilot, "x")
        assert modal.query_one("#note").has_focus
        await pilot.press(*"mind the lock", "enter")
        await wait_until(pilot, lambda: screen.decision is not None, timeout=60)
    notes = [a for a in load_session(session_file(moot_dirs)).actions if a["action"] == "note"]
    assert [n["text"] for n in notes] == ["mind the lock"]


async def test_the_guard_says_stay_paused_while_the_debate_is_paused(tmp_path, moot_dirs):
    """Paused, "Keep running" would name what Enter does not do: it keeps the pause."""
    from textual.widgets import Button

    from tui.app.screens.modals import GuardModal

    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=3, token_delay_ms=20)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: pilot.app.debate_screen())
        screen = live_screen(app)
        await wait_until(pilot, lambda: screen.engine.player.speaking)
        await tap(pilot, "p")
        await wait_until(pilot, lambda: screen.engine.paused)
        await tap(pilot, "e")
        guard = await wait_until(pilot, lambda: isinstance(app.screen, GuardModal) and app.screen)
        assert str(guard.query_one("#no", Button).label) == "Stay paused"
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: app.screen is screen)
        assert screen.engine.paused
        await quit_confirmed(pilot)


async def test_the_footer_offers_no_steering_once_the_debate_has_ended(tmp_path, moot_dirs):
    """p, e and x act on a running debate: after its end the footer no longer offers them."""
    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=1)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: pilot.app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None)
        await tap(pilot, "escape")  # the decide modal, if it opened
        await wait_until(pilot, lambda: app.screen is screen)
        await pilot.pause()
        offered = {b.binding.key for b in app.active_bindings.values()}
        assert not {"p", "e", "x"} & offered, offered
        assert "d" in offered  # deciding an unresolved end stays offered
        await tap(pilot, "q")

"""The state on screen is the state running, live and after resume (issue 19, item 1)."""

from __future__ import annotations

from tests.app.app_support import (
    confirm_guard,
    debate_spec,
    live_screen,
    make_app,
    plain,
    quit_confirmed,
    tap,
    wait_until,
    write_spec,
)
from tui.app.screens.modals import DecideModal
from tui.engine.record.session import load_session
from tui.engine.run.events import TurnStarted


def _watch_turns(screen) -> list[tuple[int, str]]:  # noqa: ANN001
    """(turn, header status) as the screen shows each live turn start. Seen where the screen
    shows it, not as the engine starts it: the screen takes the engine's events in order, a
    moment later (under load a turn began while the status before it was still queued)."""
    seen: list[tuple[int, str]] = []
    show = screen._turn_started

    async def showing(event: TurnStarted) -> None:
        seen.append((event.slot.index, screen.header.status))
        await show(event)

    screen._turn_started = showing
    return seen


async def test_pause_escalate_add_a_round_quit_resume_shows_live(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=4, token_delay_ms=15)
    path = tmp_path / "s.toml"
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)), out=str(path))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.engine and len(screen.engine.state.turns) >= 1)
        await tap(pilot, "p")
        await wait_until(pilot, lambda: screen.header.status == "PAUSED")
        await tap(pilot, "e")
        await confirm_guard(pilot)
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        await pilot.click("#extend")
        seen = _watch_turns(screen)
        await confirm_guard(pilot)  # a round added asks first
        await wait_until(pilot, lambda: modal is not app.screen and app.screen is screen)
        await wait_until(pilot, lambda: len(seen) >= 2)
        assert screen.header.status == "LIVE"
        assert all(status == "LIVE" for _, status in seen), seen
        await quit_confirmed(pilot)
    actions = [a["action"] for a in load_session(path).actions]
    assert actions == ["pause", "resume", "escalate", "extend"]

    again = make_app(tmp_path, resume_path=str(path))
    async with again.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: again.debate_screen() and again.debate_screen().engine)
        screen = live_screen(again)
        seen = _watch_turns(screen)
        recorded = len(load_session(path).turns)
        # A turn played, and the screen has shown its start (it takes events a moment later).
        await wait_until(pilot, lambda: len(screen.engine.state.turns) > recorded and seen)
        assert screen.header.status == "LIVE"
        assert all(status == "LIVE" for _, status in seen), seen
        await tap(pilot, "p")  # p on a running debate pauses it
        await wait_until(pilot, lambda: screen.header.status == "PAUSED")
        await quit_confirmed(pilot)
    actions = [a["action"] for a in load_session(path).actions]
    assert actions == ["pause", "resume", "escalate", "extend", "pause"]


async def test_escalate_in_the_modal_defers_and_asks_no_more(tmp_path, moot_dirs):
    """The operator's own escalate: the modal closes and stays closed, the panel says
    deferred, quitting says unresolved (3), and the inbox lists it with the rationale."""
    from tui.commands.inbox import awaiting

    spec = debate_spec(debaters=2, max_rounds=1, phases=["proposal"])
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        await pilot.click("#vote-2")  # escalate
        await pilot.click("#rationale")
        await pilot.press(*"needs the DBA's sign-off", "enter")
        screen = live_screen(app)
        await wait_until(pilot, lambda: app.screen is screen)
        for _ in range(20):  # a reopened modal would be pushed within these frames
            await pilot.pause(0.01)
        assert not isinstance(app.screen, DecideModal) and modal is not app.screen
        assert "DEFERRED" in plain(screen.tally_panel)
        await pilot.press("q")
    assert app.return_value == 3
    [waiting] = awaiting(moot_dirs["sessions"])
    assert waiting.deferred and waiting.rationale == "needs the DBA's sign-off"

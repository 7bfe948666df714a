"""Forking from the console: k in replay forks after the turn shown and goes on live;
k on a saved session at home opens its replay to pick that turn."""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable

from tests.app.app_support import (
    debate_spec,
    live_screen,
    make_app,
    record_session,
    tap,
    wait_until,
)
from tui.app.screens.live import LiveScreen
from tui.app.screens.replay import ReplayScreen
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file

SPEC = debate_spec(debaters=2, max_rounds=2, phases=["proposal"])


async def test_k_in_replay_forks_after_the_turn_shown_and_goes_on_live(tmp_path, moot_dirs):
    source = await record_session(SPEC, moot_dirs["sessions"] / "20260101-000001-src.toml")
    original = load_session(source)
    app = make_app(tmp_path, replay_path=str(source))
    async with app.run_test(size=(120, 40)) as pilot:
        replay = await wait_until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen
        )
        await tap(pilot, "right")
        await tap(pilot, "right")
        await wait_until(pilot, lambda: replay.cursor == 2)
        await tap(pilot, "k")
        await wait_until(pilot, lambda: isinstance(app.debate_screen(), LiveScreen))
        screen = live_screen(app)
        await wait_until(pilot, lambda: screen.decision is not None)
        forked = screen.path
    assert forked is not None and forked.name == "20260101-000001-src-fork2.toml"
    data = load_session(forked)
    assert data.result is not None
    assert data.meta["forked_from"]["at"] == 2
    assert [t.raw for t in data.turns[:2]] == [t.raw for t in original.turns[:2]]
    assert len(data.turns) == len(original.turns)  # it went on to the end
    assert original.result is not None
    assert data.result["decision"] == original.result["decision"]
    assert (await asyncio.to_thread(verify_file, forked)).ok  # verify runs its own loop
    assert load_session(source).turns == original.turns  # the source is untouched


async def test_k_on_a_saved_session_at_home_opens_its_replay_to_pick_the_turn(tmp_path, moot_dirs):
    await record_session(SPEC, moot_dirs["sessions"] / "20260101-000001-src.toml")
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        table = await wait_until(
            pilot,
            lambda: (
                app.screen.query_one("#sessions", DataTable).row_count == 1
                and app.screen.query_one("#sessions", DataTable)
            ),
        )
        table.focus()
        await tap(pilot, "k")
        replay = await wait_until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen
        )
        assert replay.data.path.name == "20260101-000001-src.toml"
        assert any("then k forks" in str(n.message) for n in app._notifications)

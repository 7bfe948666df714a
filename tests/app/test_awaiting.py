"""Home shows the sessions awaiting a decision first; opening one leads to the decide modal."""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable

from tests.app.app_support import (
    debate_spec,
    decided,
    live_screen,
    make_app,
    record_session,
    wait_until,
)
from tui.app.screens.modals import DecideModal
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file


async def test_awaiting_you_first_then_decide(tmp_path, moot_dirs):
    folder = moot_dirs["sessions"]
    split = debate_spec(title="Split vote", debaters=2, max_rounds=1, phases=["proposal"])
    agreed = debate_spec(title="Agreed", debaters=1, max_rounds=1, phases=["proposal"])
    waiting = await record_session(split, folder / "20260101-000000-split-vote.toml")
    await record_session(agreed, folder / "20260101-000001-agreed.toml")
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        table = await wait_until(
            pilot,
            lambda: (
                app.screen.query_one("#awaiting", DataTable).row_count == 1
                and app.screen.query_one("#awaiting", DataTable)
            ),
        )
        assert table.display and table.has_focus  # first, and where the cursor starts
        assert "Split vote" in str(table.get_row_at(0)[0])
        await pilot.press("enter")
        modal = await wait_until(pilot, lambda: isinstance(app.screen, DecideModal) and app.screen)
        await pilot.click("#vote-1")
        modal.query_one("#rationale").value = "Revise: the split shows the risk."
        await pilot.click("#confirm")
        screen = live_screen(app)
        await wait_until(pilot, lambda: decided(screen))
        await pilot.press("q")
    result = load_session(waiting).result
    assert result is not None and result["decided_by"] == "operator"
    assert (await asyncio.to_thread(verify_file, waiting)).ok  # verify runs its own loop


async def test_no_group_when_nothing_waits(tmp_path, moot_dirs):
    agreed = debate_spec(title="Agreed", debaters=1, max_rounds=1, phases=["proposal"])
    await record_session(agreed, moot_dirs["sessions"] / "20260101-000001-agreed.toml")
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.query_one("#sessions", DataTable).row_count == 1)
        assert not app.screen.query_one("#awaiting", DataTable).display
        assert not app.screen.query_one("#awaiting-title").display
        await pilot.press("q")

"""``c`` copies a turn; the palette copies the transcript and exports the ADR."""

from __future__ import annotations

import asyncio

from textual.command import CommandList

from tests.app.app_support import (
    debate_spec,
    live_screen,
    make_app,
    session_file,
    tap,
    wait_until,
    write_spec,
)
from tui.app.copying import turn_text
from tui.cli import main


def _app(tmp_path):
    spec = debate_spec(
        debaters=3,
        max_rounds=1,
        phases=["proposal"],
        scripts={
            0: {"votes": ["release"]},
            1: {"votes": ["release"], "stances": ["Rehearse the rollback on a copy first."]},
            2: {"votes": ["release"]},
        },
    )
    return make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))


async def _palette(pilot, query: str) -> None:
    app = pilot.app
    await pilot.press("ctrl+p")
    await pilot.press(*query)
    await wait_until(
        pilot,
        lambda: app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count,
        timeout=10,
    )
    await pilot.press("enter")


async def test_c_copies_the_focused_debaters_newest_turn(tmp_path, moot_dirs):
    app = _app(tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: live_screen(app).decision is not None)
        critic = [t for t in screen.turns if t.speaker == "critic"][-1]
        screen.pane("critic").turns.focus()
        await tap(pilot, "c")
        await wait_until(pilot, lambda: app.clipboard)
        assert app.clipboard == turn_text(critic)
        assert app.clipboard.startswith("critic (scripted)  #2 r1 proposal")
        assert "Rehearse the rollback on a copy first." in app.clipboard
        screen.pane("operator").turns.focus()
        await tap(pilot, "c")
        await wait_until(pilot, lambda: app.clipboard.startswith("operator (scripted)  #3"))
        await tap(pilot, "q")


async def test_the_palette_copies_the_transcript(tmp_path, moot_dirs):
    app = _app(tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: live_screen(app).decision is not None)
        await _palette(pilot, "Copy transcript")
        await wait_until(pilot, lambda: app.clipboard)
        text = app.clipboard
        assert text.startswith("Ship the migration?\nmotion: Ship the database migration")
        positions = [text.index(turn_text(t)) for t in screen.turns]
        assert positions == sorted(positions) and len(positions) == 3
        await tap(pilot, "q")


async def test_the_palette_exports_the_adr_the_cli_writes(tmp_path, moot_dirs):
    app = _app(tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: live_screen(app).decision is not None)
        session = session_file(moot_dirs)
        record = session.with_suffix(".adr.md")
        await _palette(pilot, "Export ADR")
        # The thread writes the file, then says so: wait for what it says, not the file.
        await wait_until(
            pilot, lambda: f"exported {record}" in [str(n.message) for n in app._notifications]
        )
        assert record.exists()
        await tap(pilot, "q")
    by_cli = tmp_path / "cli-adr.md"
    command = ["export", str(session), "--format", "adr", "-o", str(by_cli)]
    assert await asyncio.to_thread(main, command) == 0  # verify runs a loop of its own
    assert record.read_text(encoding="utf-8") == by_cli.read_text(encoding="utf-8")
    text = record.read_text(encoding="utf-8")
    assert text.startswith("---\n")  # MADR's front matter
    assert "`moot verify` fails" not in text and "claims hold" in text

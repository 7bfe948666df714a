"""Counts say "1 turn" and "1 operator action", never "1 turns"."""

from __future__ import annotations

import asyncio

from tests.app.app_support import debate_spec, make_app, plain, record_session, wait_until
from tui.app.screens.replay import ReplayScreen
from tui.app.screens.transcript import TranscriptScreen
from tui.engine.record.fork import fork
from tui.engine.record.session import load_session
from tui.engine.record.verify import summary_lines, verify_file
from tui.plural import all_hold, counted
from tui.render.adr import to_adr


async def _one_turn(tmp_path):
    """A session of exactly one turn: the first turn of a recorded debate, forked."""
    whole = await record_session(debate_spec(), tmp_path / "whole.toml")
    return fork(whole, 1, tmp_path / "sessions" / "20250101-120000-one.toml", [])


def test_counted_takes_the_number_of_its_count():
    assert counted(1, "turn") == "1 turn"
    assert counted(0, "turn") == "0 turns"
    assert counted(2, "operator action") == "2 operator actions"
    assert counted(1, "operator action") == "1 operator action"
    assert all_hold(1) == "its 1 claim holds" and all_hold(3) == "all 3 claims hold"


async def test_the_transcript_of_one_turn_says_1_turn(tmp_path):
    path = await _one_turn(tmp_path)
    app = make_app(tmp_path, replay_path=str(path), replay_start=1)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("t")
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, TranscriptScreen) and app.screen
        )
        head = plain(screen.query_one(".head"))
        assert head.endswith("· 1 turn"), head


def test_the_record_and_verify_count_one_turn_in_the_singular(tmp_path):
    path = asyncio.run(_one_turn(tmp_path))
    data = load_session(path)
    assert "1 turn, 0 operator actions." in to_adr(data)
    summary = "\n".join(summary_lines(verify_file(path)))
    assert "(1 turn, " in summary and "1 turns" not in summary

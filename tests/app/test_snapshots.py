"""Snapshots (pytest-textual-snapshot) of the console's screens at 80×24 (the narrow
layout), 120×40 and 200×60 (the full one) in the dark theme, and at 120×40 in the light.

Every snapshot is deterministic: scripted debaters without delays, the last one
holding its turn (``turn_delay_ms``) so the live screen is caught mid-debate, and
session files with fixed names for the home and replay screens.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.app.app_support import debate_spec, make_app, record_session, wait_until, write_spec
from tui.app.screens.modals import DecideModal

SPECS = Path(__file__).parent / "specs"
LOOKS = [
    pytest.param("moot-dark", (80, 24), id="dark-80x24"),
    pytest.param("moot-dark", (120, 40), id="dark-120x40"),
    pytest.param("moot-dark", (200, 60), id="dark-200x60"),
    pytest.param("moot-light", (120, 40), id="light-120x40"),
]


@pytest.fixture(autouse=True)
def still_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The live line's elapsed seconds and the ledger's latency read clocks that stand
    still: a snapshot taken a second later (or on a loaded machine) is the same picture."""
    from types import SimpleNamespace

    from tui.app.components import pane
    from tui.engine.run import turns

    monkeypatch.setattr(pane, "time", SimpleNamespace(monotonic=lambda: 1000.0))
    monkeypatch.setattr(turns, "time", SimpleNamespace(perf_counter=lambda: 1000.0))


def _mid_debate_spec(tmp_path: Path) -> Path:
    spec = debate_spec(
        debaters=3,
        max_rounds=2,
        scripts={
            0: {
                "stances": ["Ship it: the migration is additive."],
                "rationales": ["The new columns are nullable and unread."],
            },
            1: {
                "stances": ["Rehearse the rollback first."],
                "rationales": ["The backfill locks the table for minutes."],
            },
            2: {"turn_delay_ms": 600_000},  # holds the floor: the snapshot moment
        },
    )
    return write_spec(tmp_path, spec)


async def _mid_debate(pilot) -> None:
    app = pilot.app
    screen = await wait_until(pilot, lambda: app.debate_screen())
    await wait_until(
        pilot,
        lambda: (
            screen.timeline.entries.get(3)
            and screen.timeline.entries[3].status == "speaking"
            and len(screen.turns) == 2
            and screen.panes_settled
        ),
    )
    await pilot.pause(0.05)


def _recorded(tmp_path: Path) -> Path:
    spec = debate_spec(debaters=3, max_rounds=1, threshold=2, scripts={1: {"votes": ["release"]}})
    out = tmp_path / "sessions" / "20250101-120000-ship-the-migration.toml"
    return asyncio.run(record_session(spec, out))


@pytest.mark.parametrize(("theme", "size"), LOOKS)
def test_live_mid_debate(snap_compare, tmp_path, theme, size):
    app = make_app(tmp_path, spec_path=str(_mid_debate_spec(tmp_path)), theme=theme)
    assert snap_compare(app, terminal_size=size, run_before=_mid_debate)


@pytest.mark.parametrize(("theme", "size"), LOOKS)
def test_decide_modal(snap_compare, tmp_path, theme, size):
    app = make_app(tmp_path, spec_path=str(_mid_debate_spec(tmp_path)), theme=theme)

    async def open_modal(pilot) -> None:
        await _mid_debate(pilot)
        pilot.app.simulate_key("d")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, DecideModal))
        await pilot.pause(0.05)

    assert snap_compare(app, terminal_size=size, run_before=open_modal)


@pytest.mark.parametrize(("theme", "size"), LOOKS)
def test_home(snap_compare, tmp_path, theme, size):
    _recorded(tmp_path)
    app = make_app(tmp_path, examples_dir=SPECS, theme=theme)

    async def loaded(pilot) -> None:
        await wait_until(pilot, lambda: getattr(pilot.app.screen, "sessions", None))
        await pilot.pause(0.05)

    assert snap_compare(app, terminal_size=size, run_before=loaded)


@pytest.mark.parametrize(("theme", "size"), LOOKS)
def test_replay(snap_compare, tmp_path, theme, size):
    path = _recorded(tmp_path)
    app = make_app(tmp_path, replay_path=str(path), theme=theme, replay_start=2)

    async def shown(pilot) -> None:
        await wait_until(pilot, lambda: getattr(pilot.app.screen, "cursor", 0) == 2)
        await pilot.pause(0.05)

    assert snap_compare(app, terminal_size=size, run_before=shown)

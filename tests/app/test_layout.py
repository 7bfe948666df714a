"""Any terminal size: the narrow layout at 80×24, the full one from 120 columns, and a
clear message below the minimum."""

from __future__ import annotations

import pytest
from textual.widget import Widget

from tests.app.app_support import (
    challenge_spec,
    debate_spec,
    make_app,
    plain,
    quit_confirmed,
    rubric_spec,
    tap,
    wait_until,
    write_spec,
)
from tui.app.components.verify import FindingsPanel, RubricPanel
from tui.app.screens.debate import CHECKS
from tui.app.screens.modals import DecideModal
from tui.app.screens.too_small import MIN_HEIGHT, MIN_WIDTH, TooSmallScreen


def _slow(tmp_path):
    spec = debate_spec(debaters=3, phases=["proposal"], max_rounds=5, token_delay_ms=20)
    return make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))


def _shown(screen):
    return [p for p in screen.query("DebaterPane") if p.display and p.region.width]


async def test_80x24_shows_one_wide_pane_and_every_debater_is_reachable(tmp_path, moot_dirs):
    app = _slow(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.timeline.current_speaker)
        assert screen.has_class("-narrow")
        assert not screen.timeline.display and not screen.tally_panel.display
        compact = plain(screen.query_one("#compact"))
        assert "tally release" in compact and "round 1 · proposal" in compact
        shown = _shown(screen)
        assert len(shown) == 1 and shown[0].region.width >= 40
        reached = set()
        for _ in range(3):
            await tap(pilot, "right_square_bracket")
            await pilot.pause(0.05)
            (pane,) = _shown(screen)
            assert pane.region.width >= 40
            reached.add(pane.debater_id)
        assert reached == {"planner", "critic", "operator"}
        await tap(pilot, "full_stop")  # follow the speaker again
        await wait_until(pilot, lambda: screen.picked is None)
        await quit_confirmed(pilot)


@pytest.mark.parametrize(
    ("spec", "panel"),
    [
        (challenge_spec(max_rounds=1, token_delay_ms=20), FindingsPanel),
        (rubric_spec(), RubricPanel),
    ],
    ids=["challenges", "rubric"],
)
async def test_80x24_reaches_the_verification_views_as_one_more_stop(
    tmp_path, moot_dirs, spec, panel
):
    """The verification views fold away with the sidebar; ``]`` brings them up at full width."""
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None)
        if isinstance(app.screen, DecideModal):  # the operator looks before deciding
            await tap(pilot, "escape")
            await wait_until(pilot, lambda: app.screen is screen)
        view = screen.query_one(panel)
        assert not view.region.width
        assert f" {CHECKS} " in plain(screen.query_one("#compact"))
        for _ in range(len(screen.spec.debaters) + 1):
            if screen.showing_checks:
                break
            await tap(pilot, "right_square_bracket")
        await wait_until(pilot, lambda: view.region.width >= 70 and view.region.height >= 3)
        assert not _shown(screen), "the panes give their room to the checks"
        await tap(pilot, "right_square_bracket")  # and on round to the first debater
        await wait_until(pilot, lambda: len(_shown(screen)) == 1)
        assert not view.region.width
        assert _shown(screen)[0].debater_id == screen.spec.debaters[0].id


async def test_120x40_and_200x60_show_the_full_layout(tmp_path, moot_dirs):
    app = _slow(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await pilot.pause(0.1)
        for size in ((120, 40), (200, 60)):
            await pilot.resize_terminal(*size)
            await wait_until(pilot, lambda: len(_shown(screen)) == 3)
            assert not screen.has_class("-narrow")
            assert screen.timeline.region.width and screen.tally_panel.region.width
            assert not screen.query_one("#compact").display
        await pilot.resize_terminal(80, 24)  # and back: narrow again
        await wait_until(pilot, lambda: len(_shown(screen)) == 1)
        await quit_confirmed(pilot)


async def test_below_the_minimum_a_clear_message_until_the_terminal_grows(tmp_path, moot_dirs):
    app = _slow(tmp_path)
    async with app.run_test(size=(40, 12)) as pilot:

        def message() -> str:
            """The message on top now: the app may put up a fresh one as the debate opens."""
            found: list[Widget] = (
                list(app.screen.query("#too-small"))
                if isinstance(app.screen, TooSmallScreen)
                else []
            )
            return plain(found[0]) if found else ""

        text = await wait_until(pilot, lambda: "have" in message() and message())
        assert "terminal too small" in text and f"need at least {MIN_WIDTH}×{MIN_HEIGHT}" in text
        assert "have 40×12" in text
        await wait_until(pilot, lambda: app.debate_screen())  # the debate starts beneath
        # ...and the message goes back over it (a loaded machine may show it a moment late)
        await wait_until(pilot, lambda: isinstance(app.screen, TooSmallScreen))
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: app.screen is app.debate_screen())
        await pilot.resize_terminal(MIN_WIDTH - 1, 30)
        await wait_until(pilot, lambda: isinstance(app.screen, TooSmallScreen))
        await pilot.resize_terminal(MIN_WIDTH, MIN_HEIGHT)
        await wait_until(pilot, lambda: app.screen is app.debate_screen())
        await quit_confirmed(pilot)


def _screen_rows(app, widget):
    """The text the terminal shows in ``widget``'s rows (what was drawn, wrapping included)."""
    region = widget.region
    lines = []
    for y in range(region.y, region.bottom):
        strip = app.screen._compositor.render_strips()[y]
        lines.append(strip.crop(region.x, region.right).text)
    return lines


async def test_at_80_columns_the_header_keeps_round_whole_on_one_line(tmp_path, moot_dirs):
    spec = debate_spec(
        title="Ship the cookie-to-token migration for every client this quarter, staged",
        max_rounds=2,
        phases=["proposal"],
        token_delay_ms=20,
    )
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.header.phase == "proposal")
        facts = screen.header.query_one("#facts")
        first, motion = _screen_rows(app, facts)
        assert "round 1/2" in first and "phase proposal" in first, first
        assert "Ship the cookie" in first and first.rstrip().endswith("proposal")
        assert "…" in first  # the title gave way, not the round
        assert motion.startswith(" motion Ship")
        await quit_confirmed(pilot)

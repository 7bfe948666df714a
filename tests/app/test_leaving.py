"""Leaving and finding your way: quit asks, Esc goes home, ? lists keys, / searches."""

from __future__ import annotations

from pathlib import Path

from textual import events

from tests.app.app_support import (
    debate_spec,
    make_app,
    plain,
    quit_confirmed,
    record_session,
    tap,
    wait_until,
    write_spec,
)
from tui.app.screens.help import HelpScreen
from tui.app.screens.home import HomeScreen
from tui.app.screens.modals import ConfirmModal
from tui.app.screens.replay import ReplayScreen
from tui.app.screens.transcript import TranscriptScreen
from tui.engine.record.session import load_session

SPECS = Path(__file__).parent / "specs"


def _slow(tmp_path: Path):
    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=5, token_delay_ms=20)
    return make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))


async def test_quit_during_a_live_debate_asks_and_says_how_to_resume(tmp_path, moot_dirs):
    app = _slow(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.engine and screen.engine.status == "LIVE")
        await tap(pilot, "q")
        modal = await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal) and app.screen)
        assert f"moot resume {screen.path}" in modal.detail
        await tap(pilot, "n")  # stay: the debate goes on
        await wait_until(pilot, lambda: app.screen is screen)
        assert app.return_value is None
        turns = len(screen.engine.state.turns)
        await wait_until(pilot, lambda: len(screen.engine.state.turns) > turns)
        await tap(pilot, "escape")  # not opened from home: Esc does not leave
        assert app.screen is screen
        await tap(pilot, "q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await tap(pilot, "q")  # q twice quits
    assert app.return_value == 130
    path = screen.path
    assert app.farewell == [
        f"moot: session saved in {path}",
        f"moot: continue it with: moot resume {path}",
    ]


async def test_ctrl_c_saves_prints_the_resume_line_and_exits_130(tmp_path, moot_dirs):
    """Ctrl+C is no "press q" toast: it leaves at once, as the README says, even from a
    modal's input (where Textual would copy)."""
    app = _slow(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.engine and len(screen.engine.state.turns) >= 1)
        await tap(pilot, "n")  # the note modal: its input has the focus
        await wait_until(pilot, lambda: app.screen is not screen)
        await tap(pilot, "ctrl+c")
        await wait_until(pilot, lambda: app.return_value is not None)
    assert app.return_value == 130
    path = screen.path
    assert app.farewell == [
        f"moot: session saved in {path}",
        f"moot: continue it with: moot resume {path}",
    ]
    assert load_session(path).turns  # what ran is on record


async def test_quit_after_a_decision_does_not_ask(tmp_path, moot_dirs):
    spec = debate_spec(
        debaters=2, phases=["proposal"], threshold=1, scripts={1: {"votes": ["release"]}}
    )
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None)
        await pilot.press("q")
    assert app.return_value == 0
    assert app.farewell == [f"moot: session saved in {screen.path}"]  # decided: nothing to resume


async def test_escape_goes_home_from_a_debate_opened_there(tmp_path, moot_dirs):
    app = make_app(tmp_path, examples_dir=SPECS)
    async with app.run_test(size=(80, 24)) as pilot:
        home = await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen)
        await wait_until(pilot, lambda: home.examples)
        await pilot.press("enter")  # run the demo example
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.engine and screen.engine.status == "LIVE")
        await tap(pilot, "q")  # q on a debate opened from home asks, never exits at once
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await tap(pilot, "escape")
        await wait_until(pilot, lambda: app.screen is screen)
        assert app.return_value is None
        await tap(pilot, "escape")  # running: asks before leaving
        modal = await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal) and app.screen)
        assert "stops" in modal.question
        await tap(pilot, "y")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        assert screen.session is None  # the debate stopped; its file is closed
        await pilot.press("q")  # nothing running any more: home quits at once
    assert app.return_value == 130  # the debate left running was interrupted


async def test_escape_goes_home_from_a_replay_opened_there(tmp_path, moot_dirs):
    spec = debate_spec(
        debaters=2, phases=["proposal"], threshold=1, scripts={1: {"votes": ["release"]}}
    )
    await record_session(spec, moot_dirs["sessions"] / "20250101-120000-x.toml")
    app = make_app(tmp_path, examples_dir=tmp_path / "none")
    async with app.run_test(size=(80, 24)) as pilot:
        home = await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen)
        await wait_until(pilot, lambda: home.sessions)
        await pilot.press("tab", "enter")  # the sessions list: replay
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("n")
        assert isinstance(app.screen, ReplayScreen)
        await pilot.press("escape")  # a replay leaves without asking
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.press("q")
    assert app.return_value == 0


async def test_question_mark_lists_every_key(tmp_path, moot_dirs):
    app = _slow(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await tap(pilot, "question_mark")
        help_screen = await wait_until(
            pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen
        )
        text = plain(help_screen.query_one("#help-keys"))
        for key, what in (
            ("p", "Pause/resume"),
            ("d", "Decide"),
            ("/", "Search"),
            ("q", "Quit"),
            ("?", "Keys"),
        ):
            assert any(line.split()[:1] == [key] and what in line for line in text.splitlines()), (
                key,
                text,
            )
        await tap(pilot, "escape")
        await wait_until(pilot, lambda: app.screen is screen)
        await quit_confirmed(pilot)


async def test_slash_searches_the_transcript(tmp_path, moot_dirs):
    spec = debate_spec(
        debaters=2,
        phases=["proposal"],
        threshold=1,
        scripts={
            0: {"stances": ["Rehearse the rollback on a copy."]},
            1: {"votes": ["release"], "stances": ["Ship it today."]},
        },
    )
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None)
        await pilot.press("slash")
        transcript = await wait_until(
            pilot, lambda: isinstance(app.screen, TranscriptScreen) and app.screen
        )
        await pilot.press(*"ROLLBACK", "enter")
        matches = list(transcript.query(".-match"))
        assert len(matches) == 1 and "Rehearse the rollback" in plain(matches[0])
        assert matches[0].has_class("-current")
        assert "match 1 of 1" in plain(transcript.query_one("#search-status"))
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("q")


async def test_the_keys_screen_lists_moots_keys_before_textuals_scroll_keys(tmp_path, moot_dirs):
    examples = tmp_path / "examples"
    examples.mkdir()
    (examples / "demo.toml").write_text(
        (Path(__file__).parent / "specs" / "demo.toml").read_text(), encoding="utf-8"
    )
    app = make_app(tmp_path, examples_dir=examples)
    async with app.run_test(size=(100, 40)) as pilot:
        home = await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen)
        await wait_until(pilot, lambda: home.examples)
        assert app.focused is home.query_one("#examples")  # a table: it brings cursor keys
        await tap(pilot, "question_mark")
        help_screen = await wait_until(
            pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen
        )
        lines = plain(help_screen.query_one("#help-keys")).splitlines()
        described = [line.split("  ")[-1].strip() for line in lines if line.strip()]
        ours = ["Resume", "Replay", "Fork", "Reload", "Quit", "Keys"]
        assert described.count("Quit") == 1  # the app's q and home's q are one key
        textual = [d for d in described if d.lower().startswith(("cursor", "page", "scroll"))]
        assert textual, described  # the table's own keys are listed too, after moot's
        last_ours = max(described.index(d) for d in ours)
        assert last_ours < min(described.index(d) for d in textual), described
        await tap(pilot, "escape")


async def test_a_key_that_arrives_once_the_last_screen_is_gone_is_dropped(tmp_path: Path) -> None:
    """Under load a tapped q came back from the screen after the app had closed, and
    Textual, finding no screen to bind it, raised ScreenStackError: a traceback on quit.
    The key is delivered here after the close, as it was then."""
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
    assert app.screen_stack == []
    for key in (events.Key("q", None), events.Key("x", None)):
        await app.on_event(key)  # neither raises


async def test_quitting_twice_says_where_the_session_is_once(tmp_path: Path) -> None:
    """`q y y` typed ahead answered the quit question twice: the farewell came twice."""
    spec = debate_spec(debaters=2, phases=["proposal"], max_rounds=5, token_delay_ms=20)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.running_debate() is not None)
        await app.shut_down()
        await app.shut_down()
    assert len(app.farewell) == len(set(app.farewell)) == 2, app.farewell

"""Replay of a session whose hash chain is broken: it plays, and the console says so."""

from __future__ import annotations

from typing import Any

from tests.app.app_support import debate_spec, make_app, record_session, wait_until
from tui.app.screens.replay import ReplayScreen
from tui.engine.record.session import load_session


async def test_replay_warns_when_the_file_was_changed(tmp_path):
    spec = debate_spec(debaters=3, max_rounds=1, threshold=2, scripts={1: {"votes": ["release"]}})
    path = await record_session(spec, tmp_path / "sessions" / "20250101-120000-chain.toml")
    stance = load_session(path).turns[1].content["stance"]
    path.write_text(path.read_text("utf-8").replace(stance, stance + " (edited)", 1), "utf-8")
    app = make_app(tmp_path, replay_path=str(path))
    shown: list[tuple[str, str]] = []
    notify = app.notify

    def capture(message: str, **kwargs: Any) -> None:
        shown.append((message, kwargs.get("severity", "information")))
        notify(message, **kwargs)

    app.notify = capture
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        warned = [m for m, severity in shown if severity == "warning"]
        assert any("hash chain is broken at turn 2" in m and "moot verify" in m for m in warned)
        await pilot.press("q")


async def test_resume_refuses_a_changed_file_unless_forced(tmp_path):
    """``moot resume SESSION --force`` opens a changed session in the console, as headless."""
    spec = debate_spec(debaters=3, max_rounds=1, threshold=2, scripts={1: {"votes": ["release"]}})
    path = await record_session(spec, tmp_path / "sessions" / "20250101-120000-chain.toml")
    stance = load_session(path).turns[1].content["stance"]
    path.write_text(path.read_text("utf-8").replace(stance, stance + " (edited)", 1), "utf-8")
    edited = path.read_bytes()

    app = make_app(tmp_path, resume_path=str(path))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.startup_error)
    assert "hash chain" in app.startup_error and "--force" in app.startup_error
    assert path.read_bytes() == edited, "a refused file is left as it was"

    forced = make_app(tmp_path, resume_path=str(path), force_resume=True)
    async with forced.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: forced.debate_screen())
        await wait_until(pilot, lambda: screen.session is not None and screen.decision is not None)
        assert forced.startup_error is None
        assert len(screen.turns) == len(load_session(path).turns)
        await pilot.press("q")


async def test_a_refused_resume_from_home_leaves_no_empty_debate_under_the_size_message(
    tmp_path,
):
    """Opened from home while the terminal is too small: the refused debate screen goes,
    home stays, and the "too small" message is put back over it."""
    from tui.app.screens.home import HomeScreen
    from tui.app.screens.too_small import TooSmallScreen

    spec = debate_spec(debaters=3, max_rounds=1, threshold=2, scripts={1: {"votes": ["release"]}})
    path = await record_session(spec, tmp_path / "sessions" / "20250101-120000-chain.toml")
    stance = load_session(path).turns[1].content["stance"]
    path.write_text(path.read_text("utf-8").replace(stance, stance + " (edited)", 1), "utf-8")
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await pilot.resize_terminal(40, 12)
        await wait_until(pilot, lambda: isinstance(app.screen, TooSmallScreen))
        app.open_path("resume", str(path))
        await pilot.pause(0.2)
        await wait_until(pilot, lambda: isinstance(app.screen, TooSmallScreen))
        assert app.debate_screen() is None, "the refused debate screen is gone"
        assert any(isinstance(s, HomeScreen) for s in app.screen_stack)
        assert app.startup_error is None and app.is_running
        good = await record_session(spec, tmp_path / "sessions" / "20250102-120000-good.toml")
        app.open_path("replay", str(good))  # one that opens: the message goes back over it
        await wait_until(pilot, lambda: app.debate_screen() is not None)
        await wait_until(pilot, lambda: isinstance(app.screen, TooSmallScreen))

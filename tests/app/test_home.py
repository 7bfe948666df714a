"""The home screen fits its columns to the terminal, at start and on every resize."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from tests.app.app_support import debate_spec, make_app, plain, record_session, tap, wait_until
from tui.app.screens.home import HomeScreen, home_columns, list_sessions
from tui.app.screens.too_small import NARROW_BELOW

SPECS = Path(__file__).parent / "specs"


def _title_width(screen: HomeScreen) -> int:
    table = screen.query_one("#examples", DataTable)
    (title,) = [c for c in table.columns.values() if str(c.label) == "title"]
    return title.width


def test_narrow_columns_leave_the_title_what_the_others_do_not_take():
    wide, narrow = home_columns(200)["examples"], home_columns(80)["examples"]
    assert dict(wide)["title"] == 44 and dict(wide)["debaters"] == 34
    fixed = sum(w for label, w in narrow if label not in ("title", "file"))
    assert dict(narrow)["title"] == 80 - 4 - fixed - 2 * (len(narrow) - 1)
    assert home_columns(NARROW_BELOW) == home_columns(200)


async def test_the_columns_refit_when_the_terminal_is_resized(tmp_path, moot_dirs):
    examples = tmp_path / "examples"
    examples.mkdir()
    for name in ("a.toml", "b.toml", "c.toml"):
        (examples / name).write_text((SPECS / "demo.toml").read_text())
    app = make_app(tmp_path, examples_dir=examples)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen)
        await wait_until(pilot, lambda: screen.examples)
        assert _title_width(screen) == dict(home_columns(80)["examples"])["title"]
        await tap(pilot, "down")
        table = screen.query_one("#examples")
        assert table.cursor_row == 1
        await pilot.resize_terminal(200, 60)
        await wait_until(pilot, lambda: _title_width(screen) == 44)
        assert table.row_count == len(screen.examples) and table.cursor_row == 1
        await pilot.resize_terminal(90, 30)
        await wait_until(
            pilot, lambda: _title_width(screen) == dict(home_columns(90)["examples"])["title"]
        )
        assert table.cursor_row == 1, "a resize keeps the row the operator was on"


async def test_a_dangling_link_among_the_sessions_is_passed_over(tmp_path, moot_dirs):
    """A ``*.toml`` link whose file is gone (or a file deleted mid-listing) is no session."""
    sessions = tmp_path / "sessions"
    sessions.mkdir(exist_ok=True)
    (sessions / "20250101-120000-gone.toml").symlink_to(tmp_path / "deleted.toml")
    await record_session(debate_spec(max_rounds=1), sessions / "20250102-120000-kept.toml")
    assert [row.path.name for row in list_sessions(sessions)] == ["20250102-120000-kept.toml"]
    app = make_app(tmp_path, examples_dir=SPECS)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen)
        await wait_until(pilot, lambda: screen.sessions)
        assert app.is_running and len(screen.sessions) == 1


async def test_a_spec_from_home_runs_the_preflight_first_and_writes_nothing(
    tmp_path, moot_dirs, monkeypatch
):
    """Enter on an example that needs a key: moot run's preflight, its lines in a modal,
    and no session file. Examples that run here come first; keyed ones under their heading."""
    import shutil

    from tui.app.screens.modals import PreflightModal
    from tui.paths import examples_dir

    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    examples = tmp_path / "examples"
    examples.mkdir()
    shutil.copy(examples_dir() / "anthropic-adversary.toml", examples)  # sorts first by name
    shutil.copy(SPECS / "demo.toml", examples / "demo.toml")
    app = make_app(tmp_path, examples_dir=examples)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.examples)
        offline, keyed = screen.query_one("#examples"), screen.query_one("#keyed")
        assert (offline.row_count, keyed.row_count) == (1, 1)
        assert offline.has_focus and keyed.display
        assert "need an API key" in str(screen.query_one("#keyed-title").render())
        keyed.focus()
        await pilot.press("enter")
        modal = await wait_until(
            pilot, lambda: isinstance(app.screen, PreflightModal) and app.screen, timeout=120
        )  # LiteLLM loads on first use: slow on a busy machine
        assert any("ANTHROPIC_API_KEY" in line for line in modal.lines)
        assert list(moot_dirs["sessions"].glob("*.toml")) == []
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)
        offline.focus()
        await pilot.press("enter")  # the scripted example passes the preflight and runs
        await wait_until(pilot, lambda: app.debate_screen(), timeout=30)
        assert len(list(moot_dirs["sessions"].glob("*.toml"))) == 1


async def test_at_80_columns_a_cut_name_ends_with_an_ellipsis(tmp_path, moot_dirs):
    long = "Ship the cookie-to-token migration for every client this quarter, staged"
    sessions = tmp_path / "sessions"
    await record_session(
        debate_spec(title=long, max_rounds=1), sessions / "20250102-120000-long-title.toml"
    )
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen)
        await wait_until(pilot, lambda: screen.sessions)
        table = screen.query_one("#sessions")
        widths = dict(home_columns(80)["sessions"])
        row = dict(
            zip([str(c.label) for c in table.columns.values()], table.get_row_at(0), strict=True)
        )
        title = row["title"].plain
        assert title.endswith("…") and len(title) == widths["title"], title
        assert long.startswith(title[:-1])
        name = row["file"].plain
        assert name.endswith("…") and len(name) == widths["file"], name


def _shown(screen) -> str:
    """Every line of text the screen's widgets show."""
    from textual.widgets import Static

    return "\n".join(plain(w) for w in screen.query(Static))


async def test_the_preflight_is_on_screen_until_its_result_and_keys_meanwhile_leave_it_be(
    tmp_path, moot_dirs, monkeypatch
):
    """From the first Enter to the result a screen says the models are being checked; an
    Enter pressed meanwhile starts no second check and cannot dismiss the result unseen;
    Esc stops waiting, and a result that comes after is dropped."""
    import threading

    from tui.app.screens import opening
    from tui.app.screens.modals import PreflightModal

    calls: list[str] = []
    release = threading.Event()

    def slow_preflight(path: str, allow_read=()) -> list[str]:
        calls.append(path)
        assert release.wait(60), "the test never let the check end"
        return ["planner: OPENAI_API_KEY is not set"]

    monkeypatch.setattr(opening, "preflight_lines", slow_preflight)
    examples = tmp_path / "examples"
    examples.mkdir()
    (examples / "demo.toml").write_text((SPECS / "demo.toml").read_text())
    app = make_app(tmp_path, examples_dir=examples)
    async with app.run_test(size=(120, 30)) as pilot:
        try:
            home = await wait_until(
                pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen
            )
            await wait_until(pilot, lambda: home.examples)
            await tap(pilot, "enter")
            await wait_until(pilot, lambda: calls)
            await wait_until(
                pilot,
                lambda: app.screen is not home and "checking the models" in _shown(app.screen),
            )
            assert "demo.toml" in _shown(app.screen)
            for _ in range(3):  # impatient presses while the check runs
                await tap(pilot, "enter")
            assert len(calls) == 1 and "checking the models" in _shown(app.screen)
            release.set()
            modal = await wait_until(
                pilot, lambda: isinstance(app.screen, PreflightModal) and app.screen
            )
            await pilot.pause()
            assert app.screen is modal, "a key pressed during the check dismissed its result"
            assert any("OPENAI_API_KEY" in line for line in modal.lines)
            await tap(pilot, "escape")
            await wait_until(pilot, lambda: app.screen is home)

            release.clear()
            await tap(pilot, "enter")
            await wait_until(pilot, lambda: len(calls) == 2 and app.screen is not home)
            await tap(pilot, "escape")  # stop waiting: home again, the late result dropped
            await wait_until(pilot, lambda: app.screen is home)
            release.set()
            await wait_until(
                pilot, lambda: not any(w.group == "opening" and w.is_running for w in app.workers)
            )
            await pilot.pause()
            assert app.screen is home, "a check the operator stopped waiting for still showed"
        finally:
            release.set()  # a failed test must not leave the check blocked

    assert list(moot_dirs["sessions"].glob("*.toml")) == []

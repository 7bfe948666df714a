"""Home filters its lists, renames and deletes saved sessions (asking first, never a running one)."""

from __future__ import annotations

import asyncio
import fcntl
import os

import tomli_w
from textual.widgets import DataTable

from tests.app.app_support import (
    debate_spec,
    fill,
    make_app,
    plain,
    record_session,
    tap,
    wait_until,
    write_spec,
)
from tui.app.screens.files import DeleteModal, RenameModal
from tui.app.screens.home import HomeScreen, list_sessions, rename_session
from tui.app.screens.replay import ReplayScreen
from tui.engine.record.verify import verify_file


async def _two_sessions(sessions):
    alpha = await record_session(
        debate_spec(title="Alpha rollout"), sessions / "20250101-120000-alpha.toml"
    )
    beta = await record_session(
        debate_spec(title="Beta pricing"), sessions / "20250102-120000-beta.toml"
    )
    return alpha, beta


async def _home(pilot):
    app = pilot.app
    home = await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen)
    await wait_until(pilot, lambda: len(home.sessions) == 2)
    return home


def _titles(home) -> list[str]:
    table = home.query_one("#sessions", DataTable)
    return [table.get_row_at(i)[1].plain for i in range(table.row_count)]


async def test_the_filter_narrows_the_lists_and_enter_opens_what_it_shows(tmp_path, moot_dirs):
    _alpha, beta = await _two_sessions(moot_dirs["sessions"])
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        home = await _home(pilot)
        assert _titles(home) == ["Beta pricing", "Alpha rollout"]
        await tap(pilot, "slash")
        await wait_until(pilot, lambda: app.focused is home.query_one("#filter"))
        await fill(pilot, "#filter", "ALPHA")
        await wait_until(pilot, lambda: _titles(home) == ["Alpha rollout"])
        await fill(pilot, "#filter", "nothing like it")
        await wait_until(pilot, lambda: _titles(home) == [])
        await fill(pilot, "#filter", "beta")
        await wait_until(pilot, lambda: _titles(home) == ["Beta pricing"])
        await tap(pilot, "enter")  # to the first list that shows it: both await a decision
        await wait_until(pilot, lambda: app.focused is home.query_one("#awaiting"))
        home.query_one("#sessions", DataTable).focus()
        await tap(pilot, "enter")  # Enter there opens the row shown
        replay = await wait_until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen
        )
        assert replay.session_path == beta
        await pilot.press("q")


async def test_delete_asks_first_and_typed_letters_do_not_confirm(tmp_path, moot_dirs):
    alpha, beta = await _two_sessions(moot_dirs["sessions"])
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        home = await _home(pilot)
        home.query_one("#sessions", DataTable).focus()
        await tap(pilot, "down")  # alpha, the older
        await tap(pilot, "delete")
        await wait_until(pilot, lambda: isinstance(app.screen, DeleteModal))
        for key in ("y", "e", "s", "enter"):  # a sentence typed into the wrong place
            await tap(pilot, key)
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        assert alpha.exists() and beta.exists()
        await tap(pilot, "delete")
        await wait_until(pilot, lambda: isinstance(app.screen, DeleteModal))
        await tap(pilot, "tab")
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: _titles(home) == ["Beta pricing"])
        assert not alpha.exists() and beta.exists()
        await pilot.press("q")


async def test_a_session_running_here_is_never_deleted_or_renamed(tmp_path, moot_dirs):
    spec = debate_spec(max_rounds=8, phases=["proposal"], token_delay_ms=50)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(120, 40)) as pilot:
        live = await wait_until(pilot, lambda: app.debate_screen())
        path = await wait_until(pilot, lambda: live.path)
        home = HomeScreen(app.examples_path, app.sessions_path)  # over the running debate
        await app.push_screen(home)
        await wait_until(pilot, lambda: home.sessions)
        home.query_one("#sessions", DataTable).focus()
        for key in ("delete", "R"):
            await tap(pilot, key)
            await pilot.pause(0.1)
            assert app.screen is home  # no question: refused at once
        notes = [str(n.message) for n in app._notifications]
        assert any("is running; it cannot be deleted" in n for n in notes), notes
        assert any("is running; it cannot be renamed" in n for n in notes), notes
        assert path.exists()
        await tap(pilot, "q")
        await tap(pilot, "y")


async def test_rename_keeps_the_session_verifiable_and_never_replaces_a_file(tmp_path, moot_dirs):
    alpha, beta = await _two_sessions(moot_dirs["sessions"])
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        home = await _home(pilot)
        home.query_one("#sessions", DataTable).focus()
        await tap(pilot, "down")
        await tap(pilot, "R")
        await wait_until(pilot, lambda: isinstance(app.screen, RenameModal))
        modal = app.screen
        await fill(pilot, "#new-name", beta.name)  # taken: refused, nothing moves
        await tap(pilot, "enter")
        error = modal.query_one("#rename-error")
        await wait_until(pilot, lambda: "exists already" in plain(error))
        assert app.screen is modal, "a refused name closed the dialog"
        assert modal.query_one("#new-name").value == beta.name  # kept, to be corrected
        assert alpha.exists() and beta.exists()
        await fill(pilot, "#new-name", "20250101-120000-alpha-rollout")
        await tap(pilot, "enter")
        renamed = alpha.with_name("20250101-120000-alpha-rollout.toml")
        await wait_until(pilot, lambda: renamed.exists() and not alpha.exists())
        await wait_until(pilot, lambda: [r.path.name for r in home.sessions][1] == renamed.name)
        await pilot.press("q")
    report = await asyncio.to_thread(verify_file, renamed)  # verify runs a loop of its own
    assert report.ok, [c for c in report.claims if not c.ok]


async def test_a_session_another_moot_process_writes_is_never_deleted(tmp_path, moot_dirs):
    alpha, _beta = await _two_sessions(moot_dirs["sessions"])
    writer = os.open(alpha, os.O_RDWR | os.O_APPEND)
    fcntl.flock(writer, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the lock every session writer holds
    try:
        app = make_app(tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            home = await _home(pilot)
            home.query_one("#sessions", DataTable).focus()
            await tap(pilot, "down")  # alpha
            await tap(pilot, "delete")
            await wait_until(
                pilot,
                lambda: any("cannot be deleted" in str(n.message) for n in app._notifications),
            )
            assert app.screen is home and alpha.exists()
            fcntl.flock(writer, fcntl.LOCK_UN)  # the other run ended: now it may go
            await tap(pilot, "delete")
            await wait_until(pilot, lambda: isinstance(app.screen, DeleteModal))
            await pilot.press("escape")
            await pilot.press("q")
    finally:
        os.close(writer)


async def test_the_filter_narrows_awaiting_you_and_enter_goes_to_the_first_match(
    tmp_path, moot_dirs
):
    """``/postgres`` + Enter: the focus lands on the first list holding a match (here the
    keyed examples, the offline list being empty), and "Awaiting you" is filtered too."""
    from tui.paths import examples_dir

    folder = moot_dirs["sessions"]
    split = debate_spec(title="Split vote", debaters=2, max_rounds=1, phases=["proposal"])
    pg = debate_spec(title="Postgres split", debaters=2, max_rounds=1, phases=["proposal"])
    await record_session(split, folder / "20260101-000000-split-vote.toml")
    postgres = await record_session(pg, folder / "20260101-000001-postgres-split.toml")
    examples = tmp_path / "examples"
    examples.mkdir()
    keyed = (examples_dir() / "anthropic-adversary.toml").read_text()
    (examples / "keyed.toml").write_text(keyed.replace("Incident postmortem", "Postgres upgrade"))
    (examples / "demo.toml").write_text(
        tomli_w.dumps(debate_spec(title="Offline demo", max_rounds=1))
    )
    app = make_app(tmp_path, examples_dir=examples)
    async with app.run_test(size=(120, 40)) as pilot:
        home = await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen)
        waiting = home.query_one("#awaiting", DataTable)
        await wait_until(pilot, lambda: waiting.row_count == 2 and home.examples)
        await tap(pilot, "slash")
        await fill(pilot, "#filter", "postgres")
        await wait_until(pilot, lambda: waiting.row_count == 1)
        assert "Postgres split" in waiting.get_row_at(0)[0].plain
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: app.focused is waiting)
        await tap(pilot, "enter")  # opens the one shown, not the first of all that wait
        screen = await wait_until(pilot, lambda: app.debate_screen())
        assert screen.session_path == postgres
        app.go_home()
        home = await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen)
        await tap(pilot, "slash")
        await fill(pilot, "#filter", "postgres upgrade")
        ex, ke = home.query_one("#examples", DataTable), home.query_one("#keyed", DataTable)
        await wait_until(pilot, lambda: ex.row_count == 0 and ke.row_count == 1)
        assert not home.query_one("#awaiting", DataTable).display  # nothing there matches
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: app.focused is ke)


async def test_a_renamed_session_keeps_its_date(tmp_path, moot_dirs):
    """The date comes from the session's own header when its name carries no stamp."""
    from datetime import datetime

    from tui.engine.record.session import load_session

    alpha, beta = await _two_sessions(moot_dirs["sessions"])
    assert rename_session(alpha, "alpha rollout") is None
    created = datetime.fromisoformat(
        load_session(alpha.with_name("alpha rollout.toml")).meta["created"]
    )
    rows = {row.path.name: row for row in list_sessions(moot_dirs["sessions"])}
    assert rows["alpha rollout.toml"].date == f"{created.astimezone():%Y-%m-%d %H:%M}"
    assert rows[beta.name].date == "2025-01-02 12:00"  # a stamped name keeps its own date

"""``E`` edits the running debate's spec in $EDITOR; home's ``n`` writes, edits and runs one."""

from __future__ import annotations

import contextlib
import shutil
import tomllib

import pytest
from textual.widgets import Input, OptionList

from tests.app.app_support import debate_spec, live_screen, make_app, tap, wait_until, write_spec
from tui.app.editor import NO_EDITOR
from tui.app.screens.files import NewSpecModal
from tui.app.screens.home import HomeScreen
from tui.app.screens.live import LiveScreen
from tui.templates import TEMPLATES


def _editor(tmp_path, body: str) -> str:
    """An $EDITOR: a shell script run as ``editor FILE`` (what a real editor is given)."""
    script = tmp_path / "editor.sh"
    script.write_text(f"#!/bin/sh\nset -e\n{body}\n", encoding="utf-8")
    script.chmod(0o755)
    return str(script)


def _no_suspend(app, monkeypatch):
    """A headless pilot has no terminal to hand over; the editor runs all the same."""
    monkeypatch.setattr(app, "suspend", contextlib.nullcontext)


def _notes(app) -> list[str]:
    return [f"{n.title}: {n.message}" for n in app._notifications]


async def test_E_opens_the_spec_and_reports_its_problems_by_key_path(
    tmp_path, moot_dirs, monkeypatch
):
    spec = write_spec(tmp_path, debate_spec(max_rounds=3, phases=["proposal"], token_delay_ms=20))
    sed = shutil.which("sed")
    monkeypatch.setenv(
        "EDITOR",
        _editor(
            tmp_path,
            f'echo "$1" > {tmp_path}/edited\n{sed} -i "s/max_rounds = 3/max_rounds = -3/" "$1"',
        ),
    )
    app = make_app(tmp_path, spec_path=str(spec))
    _no_suspend(app, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await tap(pilot, "E")
        await wait_until(pilot, lambda: any("problem" in n for n in _notes(app)))
        assert (tmp_path / "edited").read_text().strip() == str(spec)  # the editor got the spec
        (note,) = [n for n in _notes(app) if "problem" in n]
        assert note.startswith("spec.toml: 1 problem:") and "debate.max_rounds" in note, note
        assert screen.spec.max_rounds == 3  # the run keeps the spec it started with
        await tap(pilot, "q")
        await tap(pilot, "y")


async def test_E_on_a_turn_being_spoken_pauses_and_opens_once_it_ends(
    tmp_path, moot_dirs, monkeypatch
):
    """The editor holds the event loop: a stream stalled behind it could time out. So E
    pauses (journalled), waits for the call under way, and no turn starts meanwhile."""
    spec = write_spec(tmp_path, debate_spec(max_rounds=3, phases=["proposal"], token_delay_ms=40))
    app = make_app(tmp_path, spec_path=str(spec))
    _no_suspend(app, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        engine = await wait_until(pilot, lambda: screen.engine)
        await wait_until(pilot, lambda: engine.turn_under_way)
        done = len(engine.state.turns)
        # The editor counts the turns committed when it opens: the one under way, and no more.
        monkeypatch.setenv(
            "EDITOR",
            _editor(tmp_path, f"grep -c '^\\[\\[turns\\]\\]' {screen.path} > {tmp_path}/seen"),
        )
        await tap(pilot, "E")
        await wait_until(pilot, lambda: screen.header.status == "PAUSED")
        assert engine.turn_under_way or (tmp_path / "seen").exists()
        if engine.turn_under_way:
            assert not (tmp_path / "seen").exists(), "the editor opened mid-turn"
        await wait_until(pilot, lambda: (tmp_path / "seen").exists())
        assert int((tmp_path / "seen").read_text()) == done + 1
        assert len(engine.state.turns) == done + 1 and not engine.turn_under_way
        assert [a["action"] for a in engine.actions] == ["pause"]
        await tap(pilot, "q")
        await tap(pilot, "y")


async def test_E_without_EDITOR_says_so(tmp_path, moot_dirs, monkeypatch):
    spec = write_spec(tmp_path, debate_spec(max_rounds=3, phases=["proposal"], token_delay_ms=20))
    monkeypatch.delenv("EDITOR", raising=False)
    app = make_app(tmp_path, spec_path=str(spec))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.debate_screen())
        await tap(pilot, "E")
        await wait_until(pilot, lambda: any(NO_EDITOR in n for n in _notes(app)))
        assert tomllib.loads(spec.read_text())["debate"]["max_rounds"] == 3
        await tap(pilot, "q")
        await tap(pilot, "y")


@pytest.mark.parametrize("valid", [True, False])
async def test_new_spec_from_home_writes_edits_checks_and_runs(
    tmp_path, moot_dirs, monkeypatch, valid
):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    ready = write_spec(tmp_path, debate_spec(title="Written in the editor"), "ready.toml")
    edit = f'cp "$1" {tmp_path}/template-seen.toml\n'
    edit += f'cp {ready} "$1"' if valid else 'echo "[debate]" >> "$1"'
    monkeypatch.setenv("EDITOR", _editor(tmp_path, edit))
    app = make_app(tmp_path)
    _no_suspend(app, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen))
        await tap(pilot, "n")
        modal = await wait_until(pilot, lambda: isinstance(app.screen, NewSpecModal) and app.screen)
        protocols = modal.query_one("#protocols", OptionList)
        assert [protocols.get_option_at_index(i).id for i in range(protocols.option_count)] == list(
            TEMPLATES
        )
        await tap(pilot, "down")  # adversary: the name follows the protocol
        await wait_until(
            pilot, lambda: modal.query_one("#spec-name", Input).value == "adversary.toml"
        )
        await tap(pilot, "enter")
        written = work / "adversary.toml"
        seen = tmp_path / "template-seen.toml"
        await wait_until(pilot, seen.exists)
        assert seen.read_text() == TEMPLATES["adversary"].format(
            name="adversary.toml"
        )  # moot new's
        if valid:
            screen = await wait_until(
                pilot, lambda: isinstance(app.screen, LiveScreen) and app.screen
            )
            assert screen.spec.debate.title == "Written in the editor"
            assert screen.spec_source == str(written)
            await wait_until(pilot, lambda: live_screen(app).decision is not None)
        else:
            await wait_until(pilot, lambda: any("problem" in n for n in _notes(app)))
            assert isinstance(app.screen, HomeScreen) and written.exists()  # kept, to fix
        await tap(pilot, "q")

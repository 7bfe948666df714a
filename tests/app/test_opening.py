"""``moot run``: the title is on screen before the spec, the engine and the models are."""

from __future__ import annotations

import threading

import tui.providers.preflight as preflight_module
from tests.app.app_support import (
    debate_spec,
    make_app,
    plain,
    run_until_exit,
    wait_until,
    write_spec,
)
from tui.app.screens.live import LiveScreen
from tui.app.screens.opening import OpeningScreen, quick_title
from tui.exitcodes import ExitCode


async def test_the_title_shows_first_then_the_live_screen(tmp_path, moot_dirs, monkeypatch):
    checked = threading.Event()
    release = threading.Event()

    def slow_preflight(spec):  # stands in for a model check that takes its time
        checked.set()
        release.wait(10)
        return []

    monkeypatch.setattr(preflight_module, "preflight", slow_preflight)
    spec_path = write_spec(tmp_path, debate_spec(title="Ship the migration tonight?"))
    app = make_app(tmp_path, spec_path=str(spec_path), preflight=True)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, checked.is_set)
        assert isinstance(app.screen, OpeningScreen)
        assert "Ship the migration tonight?" in plain(app.screen.query_one("Static"))
        release.set()
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen))
        assert len(app.screen_stack) == 2  # the opening screen is gone, not underneath


async def test_a_failed_preflight_exits_2_before_any_session_file(tmp_path, moot_dirs, monkeypatch):
    monkeypatch.setattr(preflight_module, "preflight", lambda spec: ["planner: no key set"])
    spec_path = write_spec(tmp_path, debate_spec())
    app = make_app(tmp_path, spec_path=str(spec_path), preflight=True)
    await run_until_exit(app)
    assert app.return_value == ExitCode.BAD_INPUT
    assert "preflight" in app.startup_error and "planner: no key set" in app.startup_error
    assert not list((tmp_path / "sessions").glob("*.toml"))


def test_quick_title_reads_the_toml_without_validating(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('[debate]\ntitle = "Four-day week?"\nmax_rounds = "not a number"\n')
    assert quick_title(spec) == "Four-day week?"
    spec.write_text("not toml [")
    assert quick_title(spec) == "s.toml"


BOMBS = {
    "a 5,000-digit number": '[debate]\ntitle = "t"\nmax_rounds = ' + "9" * 5000 + "\n",
    "a 100,000-deep array": "[debate]\ntitle = 't'\nx = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "a 3,000-part dotted key": "[debate]\ntitle = 't'\n" + ".".join(["k"] * 3000) + " = 1\n",
}


def test_quick_title_checks_the_limits_before_parsing(tmp_path):
    for name, text in BOMBS.items():
        spec = tmp_path / "bomb.toml"
        spec.write_text(text)
        assert quick_title(spec) == "bomb.toml", name  # the file's name, no crash, no parse


async def test_console_run_refuses_a_bomb_like_headless_does(tmp_path, moot_dirs):
    for name, text in BOMBS.items():
        spec_path = tmp_path / "bomb.toml"
        spec_path.write_text(text)
        app = make_app(tmp_path, spec_path=str(spec_path), preflight=False)
        await run_until_exit(app)
        assert app.return_value == ExitCode.BAD_INPUT, name
        assert "refused before parsing" in app.startup_error, name
        assert not list((tmp_path / "sessions").glob("*.toml"))


async def test_console_run_reads_outside_the_spec_folder_only_when_allowed(
    tmp_path, moot_dirs, monkeypatch
):
    monkeypatch.setattr(preflight_module, "preflight", lambda spec: [])  # no model to reach
    (tmp_path / "private.txt").write_text("not for any model")
    folder = tmp_path / "spec"
    folder.mkdir()
    spec = debate_spec()
    # Where planner's prompts would go (the test's providers are scripted, whatever the model).
    spec["debaters"][0].update(model="openai/fake", api_base="http://127.0.0.1:9/v1")
    del spec["debaters"][0]["script"]
    spec["context"] = [{"label": "notes", "file": "../private.txt"}]
    spec_path = write_spec(folder, spec)
    app = make_app(tmp_path, spec_path=str(spec_path), preflight=True)
    await run_until_exit(app)
    assert app.return_value == ExitCode.BAD_INPUT
    assert "context[0].file" in app.startup_error
    assert "outside the spec's folder" in app.startup_error
    assert not list((tmp_path / "sessions").glob("*.toml"))

    allowed = [str(tmp_path / "private.txt")]
    app = make_app(tmp_path, spec_path=str(spec_path), preflight=True, allow_read=allowed)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen), timeout=60)
        route = "sends ../private.txt to http://127.0.0.1:9/v1 (debater planner)"
        await wait_until(pilot, lambda: route in [n.message for n in app._notifications])
    (session,) = (tmp_path / "sessions").glob("*.toml")
    assert "not for any model" in session.read_text()

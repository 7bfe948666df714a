"""Themes: shipped TOML themes, validation, switching and the remembered choice."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
from textual.command import CommandList

from tests.app.app_support import make_app, wait_until
from tui.app.themes import load_theme_file, load_themes


def test_shipped_themes_validate():
    themes, problems = load_themes()
    assert problems == []
    assert {"moot-dark", "moot-light", "moot-high-contrast"} <= set(themes)
    assert not themes["moot-light"].theme.dark
    assert all(len(t.debater_colors) >= 4 for t in themes.values())


def test_a_bad_theme_is_reported_by_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nprimary = "not-a-colour"\nsurprise = 1\n')
    with pytest.raises(ValueError) as err:
        load_theme_file(bad)
    assert "primary" in str(err.value) and "surprise" in str(err.value)


async def test_theme_switch_persists_to_config(tmp_path, moot_dirs):
    app = make_app(tmp_path)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == "moot-dark"
        assert app.switch_theme("light")
        await pilot.pause()
        assert app.theme == "moot-light"
        await pilot.press("q")
    config = tomllib.loads((moot_dirs["config"] / "config.toml").read_text())
    assert config["theme"] == "moot-light"
    again = make_app(tmp_path)
    async with again.run_test() as pilot:
        await pilot.pause()
        assert again.theme == "moot-light"
        await pilot.press("q")


async def test_theme_option_and_user_theme_folder(tmp_path, moot_dirs):
    user = moot_dirs["config"] / "themes"
    user.mkdir()
    (user / "mine.toml").write_text(
        'name = "mine"\ndark = true\nprimary = "#ff0000"\ndebater_colors = ["#010203"]\n'
    )
    app = make_app(tmp_path, theme="mine")
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == "mine"
        assert app.debater_colors() == ("#010203",)
        await pilot.press("q")
    # --theme is for that run only: nothing is written
    assert not (moot_dirs["config"] / "config.toml").exists()


async def test_theme_option_is_not_saved_and_unknown_is_reported(tmp_path, moot_dirs):
    config_file = moot_dirs["config"] / "config.toml"
    config_file.write_text('theme = "moot-light"\n')
    before = config_file.stat().st_mtime_ns
    app = make_app(tmp_path, theme="moot-high-contrast")
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.theme == "moot-high-contrast"
        await pilot.press("q")
    shown: list[str] = []
    unknown = make_app(tmp_path, theme="no-such-theme")
    notify = unknown.notify

    def noted(message: str, **kw: Any) -> None:
        shown.append(str(message))
        notify(message, **kw)

    unknown.notify = noted
    async with unknown.run_test() as pilot:
        await pilot.pause()
        assert unknown.theme == "moot-dark"
        await pilot.press("q")
    assert any("unknown theme no-such-theme" in m for m in shown)
    plain_launch = make_app(tmp_path)
    async with plain_launch.run_test() as pilot:
        await pilot.pause()
        assert plain_launch.theme == "moot-light"  # the saved choice, untouched
        await pilot.press("q")
    assert config_file.read_text() == 'theme = "moot-light"\n'
    assert config_file.stat().st_mtime_ns == before  # no launch rewrote it


async def test_theme_from_the_command_palette(tmp_path, moot_dirs):
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.press(*"Theme: moot-high")
        await wait_until(
            pilot,
            lambda: (
                app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count
            ),
            timeout=5,
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.theme == "moot-high-contrast")
        await pilot.press("q")
    config = tomllib.loads((moot_dirs["config"] / "config.toml").read_text())
    assert config["theme"] == "moot-high-contrast"


async def test_the_console_starts_in_its_theme_reading_the_stylesheet_once(
    tmp_path, moot_dirs, monkeypatch
):
    """The saved theme is in place before Textual first parses the stylesheet: opening the
    console reparses nothing (set once mounted, every rule was parsed again and every widget
    restyled), yet the theme's colours, classes and a later switch all take effect."""
    from textual.color import Color
    from textual.css.stylesheet import Stylesheet

    reparsed: list[int] = []
    reparse = Stylesheet.reparse

    def counted(self: Stylesheet) -> None:
        reparsed.append(1)
        reparse(self)

    monkeypatch.setattr(Stylesheet, "reparse", counted)
    (moot_dirs["config"] / "config.toml").write_text('theme = "moot-light"\n')
    themes, _ = load_themes()
    light, dark = themes["moot-light"].theme, themes["moot-dark"].theme
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.theme == "moot-light" and reparsed == []
        assert {"-light-mode", "-theme-moot-light"} <= app.classes
        assert "-dark-mode" not in app.classes
        assert app.screen.styles.background == Color.parse(light.background or "")
        assert app.switch_theme("moot-dark")
        await wait_until(pilot, lambda: reparsed == [1])
        await wait_until(
            pilot, lambda: app.screen.styles.background == Color.parse(dark.background or "")
        )
        assert {"-dark-mode", "-theme-moot-dark"} <= app.classes
        await pilot.press("q")

"""Untrusted text: markup, ANSI escapes and huge outputs are shown literally and bounded."""

from __future__ import annotations

import re

from tests.app.app_support import debate_spec, make_app, plain, wait_until, write_spec
from tui.app.components.cards import TurnCard
from tui.engine.record.session import load_session
from tui.render.textsafe import clean

HOSTILE = (
    "[bold red]alarm[/] [/] [link=http://x]click me[/link] unclosed [ here "
    "\x1b[31mred\x1b[0m \x1b]8;;http://evil\x07osc\x1b]8;;\x07 \u202eesrever "
    "\x1b]52;c;ZXZpbA==\x07 \x9b2J \x9d52;c;eA==\x9c \x00 \u2066isolate\u2069 "
)
# What must never reach the screen raw: C0 (but newline), DEL, C1, bidi controls.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
BIG = HOSTILE + ("lorem ipsum " * 17_100)  # > 200 KB
REASON = "[/]" + HOSTILE + " Nobody tested the rollback."  # more than the stance restated


def test_clean_neutralises_controls():
    shown = clean(HOSTILE)
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert "␛[31m" in shown
    assert "[bold red]alarm[/]" in shown


async def test_hostile_text_is_shown_literally_and_round_trips(tmp_path, moot_dirs):
    assert len(BIG.encode()) > 200_000
    spec = debate_spec(
        title="[bold]Title[/bold] [link=http://x]t[/link] \x1b[2J",
        debaters=2,
        phases=["proposal"],
        max_rounds=1,
        threshold=1,
        scripts={
            0: {"stances": [BIG], "rationales": [REASON]},
            1: {"votes": ["release"]},
        },
    )
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None, timeout=20)
        card = next(c for c in screen.query(TurnCard) if c.turn.speaker == "planner")
        shown = plain(card)
        assert "[bold red]alarm[/] [/] [link=http://x]click me[/link] unclosed [ here" in shown
        assert "␛[31mred␛[0m" in shown
        assert not RAW.search(shown)
        assert len(shown) < 20_000  # bounded on screen
        assert "more characters not shown" in shown
        facts = plain(screen.header.query_one("#facts"))
        assert "[bold]Title[/bold] [link=http://x]t[/link] ␛[2J" in facts
        await pilot.press("t")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "TranscriptScreen")
        text = " ".join(plain(w) for w in app.screen.query(".entry"))
        assert "[link=http://x]click me[/link]" in text
        assert not RAW.search(text + facts)
        await pilot.press("escape")
        screenshot = app.export_screenshot()
        assert "alarm" in screenshot
        await pilot.press("q")
    path = next(moot_dirs["sessions"].glob("*.toml"))
    data = load_session(path)
    assert data.turns[0].content["stance"] == BIG  # stored exactly, never truncated
    assert data.turns[0].content["rationale"] == REASON
    assert data.spec.debate.title.endswith("\x1b[2J")


def test_palette_help_text_is_never_markup() -> None:
    from textual.content import Content

    from tui.app.commands import _literal

    for hostile in ("[/] x", "[@click=app.quit]z[/]", "[bold]a[", "[link=http://e.vil]y"):
        assert Content.from_markup(_literal(hostile)).plain == hostile

"""Debater panes while a turn streams: fields not JSON, never blank, a live line, follow."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from textual.app import App
from textual.widgets import Static

import tui.app.screens.live as live_module
from tests.app.app_support import debate_spec, live_screen, make_app, tap, wait_until, write_spec
from tui.app.components.cards import TurnCard
from tui.app.components.pane import MAX_CARDS, TailText, packed
from tui.engine.basics.vocab import TurnKind
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.core.schedule import Slot
from tui.providers.scripted import ScriptedProvider

LONG = " ".join(f"point{i} about the rollout" for i in range(15)) + "."
WHY = " ".join(f"reason{i}: the canary caught it" for i in range(15)) + "."  # not LONG again


def _spec(token_delay_ms: float = 15, rounds: int = 6) -> dict[str, Any]:
    script = {"stances": [LONG], "rationales": [WHY]}
    return debate_spec(
        debaters=2,
        phases=["proposal"],
        max_rounds=rounds,
        token_delay_ms=token_delay_ms,
        parallel=True,
        scripts={0: dict(script), 1: dict(script)},
    )


async def test_a_scripted_turn_streams_its_fields_not_json(tmp_path, moot_dirs):
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, _spec())))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        pane = await wait_until(pilot, lambda: live_screen(app).pane("planner"))
        await wait_until(
            pilot, lambda: pane.streaming is not None and "rationale:" in pane.streaming.text
        )
        text = pane.streaming.text
        assert text.startswith("stance: point0 about")  # the first token was not lost
        assert "{" not in text and '"' not in text
        await tap(pilot, "q")
        await tap(pilot, "y")
    assert screen is not None


async def test_the_last_turn_stays_in_view_while_the_next_streams(tmp_path, moot_dirs):
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, _spec())))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.debate_screen())
        pane = live_screen(app).pane("planner")
        await wait_until(
            pilot,
            lambda: (
                list(pane.query(TurnCard))
                and pane.streaming is not None
                and pane.streaming.tokens > 3
            ),
        )
        await pilot.pause(0.1)
        view = pane.turns.content_region
        card = list(pane.query(TurnCard))[-1]
        assert card.region.intersection(view).area > 0, "the last completed turn scrolled away"
        assert pane.streaming.region.intersection(view).area > 0
        live = str(pane.streaming.query_one(".live").render())
        assert "tok/s" in live and " tok " in live
        await tap(pilot, "q")
        await tap(pilot, "y")


@pytest.mark.parametrize("lines_up", [None, 1], ids=["to the top", "one line"])
async def test_scrolling_up_is_kept_until_f_follows_again(tmp_path, moot_dirs, lines_up):
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, _spec(token_delay_ms=5))))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: app.debate_screen())
        pane = live_screen(app).pane("planner")
        scroll = pane.turns
        await wait_until(pilot, lambda: scroll.max_scroll_y > 5 and pane.streaming is not None)
        await wait_until(pilot, lambda: scroll.scroll_y == scroll.max_scroll_y)
        up = 0 if lines_up is None else scroll.max_scroll_y - lines_up
        scroll.scroll_to(y=up, animate=False, immediate=True)  # as a wheel or key does
        assert not scroll.following
        tokens = pane.streaming.tokens if pane.streaming else 0
        await wait_until(
            pilot, lambda: pane.streaming is None or pane.streaming.tokens > tokens + 10
        )
        await pilot.pause(0.2)
        assert scroll.scroll_y == up, "a token undid the scroll up"
        await tap(pilot, "f")
        await wait_until(
            pilot, lambda: scroll.following and scroll.scroll_y >= scroll.max_scroll_y - 1
        )
        await tap(pilot, "q")
        await tap(pilot, "y")


async def test_a_streamed_key_is_redacted_on_screen_before_the_turn_is_stored(
    tmp_path, moot_dirs, monkeypatch
):
    """A reply echoing a key shows redacted while it streams, not only once stored.

    A spec may not hold the value of its own api_key_env variable, so the scripted
    reply echoes a secret-named variable the spec does not name, known all the same.
    """
    secret = "plaintextsecretvalue4242"
    monkeypatch.setenv("MOOT_PANE_TEST_KEY", secret)
    spec = _spec()
    spec["debaters"][0]["script"]["stances"] = [f"The key is {secret} and then {LONG}"]
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.debate_screen())
        pane = await wait_until(pilot, lambda: live_screen(app).pane("planner"))
        await wait_until(
            pilot, lambda: pane.streaming is not None and "point3" in pane.streaming.text
        )
        from tui.app.components.pane import TailText

        shown = pane.streaming.query_one(TailText).text
        assert "The key is" in shown and "point3" in shown
        assert secret not in shown
        await tap(pilot, "q")
        await tap(pilot, "y")


async def test_a_pane_change_survives_a_screen_closed_over_it(tmp_path, moot_dirs):
    """The queue of pane changes waits a frame between panes; the wait belongs to the live
    screen, so a screen on top (transcript, help, a modal) closing first cannot lose it."""
    spec = debate_spec(debaters=2, phases=["proposal"], scripts={0: {"turn_delay_ms": 600_000}})
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.timeline.current_speaker and screen.panes_settled)
        applied: list[str] = []

        async def change(name: str) -> None:
            applied.append(name)

        await tap(pilot, "t")  # the transcript on top
        await screen._pane_op("planner", lambda: change("first"))
        await screen._pane_op("critic", lambda: change("second"))  # waits for a frame
        app.pop_screen()  # closed before its next refresh
        await wait_until(pilot, lambda: screen.panes_settled)
        assert applied == ["first", "second"]


async def test_a_full_tail_shows_new_text_of_the_same_length():
    """Once a reply passes TAIL characters its length stops changing; the box must not."""

    class Box(App[None]):
        def compose(self):
            yield TailText()

    app = Box()
    async with app.run_test(size=(60, 10)) as pilot:
        box = app.query_one(TailText)
        box.set_text("a" * 50 + " END-ONE")
        await pilot.pause()
        assert "END-ONE" in str(box.render())
        box.set_text("b" * 50 + " END-TWO")
        await pilot.pause()
        assert "END-TWO" in str(box.render())


async def test_no_token_flush_is_left_running_after_a_decision_mid_stream(tmp_path, moot_dirs):
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, _spec(token_delay_ms=30))))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(
            pilot,
            lambda: (
                screen.pane("planner").streaming is not None
                and screen.pane("planner").streaming.tokens > 3
            ),
        )
        screen.engine.decide("release", "Enough said: ship it.")
        await wait_until(pilot, lambda: screen.decision is not None)
        await pilot.pause(0.3)
        assert not screen._tokens and not screen._flush_pending


class PlannerHeld:
    """Scripted turns, but the planner waits before each turn past ``allowed`` until the test
    allows it: the test, not the machine's speed, says when the next card comes."""

    def __init__(self, allowed: int) -> None:
        self.allowed = allowed
        self.waiting = False
        self._moved = asyncio.Event()

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        if request.debater.id == "planner":
            while request.speaker_turn > self.allowed:
                self.waiting = True
                self._moved.clear()
                await self._moved.wait()
            self.waiting = False
        return await ScriptedProvider(paced=True).complete(request, on_token)

    def allow(self, turns: int) -> None:
        self.allowed = turns
        self._moved.set()


async def test_reading_scrolled_up_the_text_stays_put_when_old_cards_are_trimmed(
    tmp_path, moot_dirs
):
    """A pane keeps MAX_CARDS cards; trimming the oldest must not shift what is being read.
    The turns come whole (streaming is tested above), and the planner's turn past MAX_CARDS
    waits until the test has scrolled up: the trim comes while it reads, at any speed."""
    held = PlannerHeld(allowed=MAX_CARDS)
    spec = _spec(token_delay_ms=0, rounds=MAX_CARDS + 2)  # a turn still held at the end
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)), provider_for=lambda _: held)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        pane = screen.pane("planner")
        scroll = pane.turns
        await wait_until(
            pilot,
            lambda: (
                held.waiting and len(pane.query(TurnCard)) == MAX_CARDS and screen.panes_settled
            ),
        )
        scroll.scroll_to(y=scroll.max_scroll_y // 2, animate=False, immediate=True)
        await pilot.pause(0.05)
        assert not scroll.following
        view = scroll.content_region
        oldest = list(pane.query(TurnCard))[0]
        reading = next(c for c in pane.query(TurnCard) if c.region.y >= view.y)
        assert reading is not oldest  # the trim below removes a card above the one being read
        at = reading.region.y
        held.allow(MAX_CARDS + 1)
        await wait_until(
            pilot,
            lambda: pane.usage.turns == MAX_CARDS + 1 and held.waiting and screen.panes_settled,
        )
        await pilot.pause(0.05)
        assert not oldest.is_attached and len(pane.query(TurnCard)) == MAX_CARDS  # trimmed
        assert reading.is_attached, "the card being read was trimmed"
        assert abs(reading.region.y - at) <= 1, "the text being read moved"


def test_usage_figures_wrap_only_between_parts():
    parts = ["12 turns", "3,456 tok", "$0.0012"]
    assert packed(parts, 0) == "12 turns · 3,456 tok · $0.0012"  # not laid out yet
    assert packed(parts, 40, taken=10) == "12 turns · 3,456 tok · $0.0012"
    assert packed(parts, 30, taken=10) == "12 turns · 3,456 tok\n$0.0012"
    assert packed(parts, 12, taken=10) == "\n12 turns\n3,456 tok\n$0.0012"


@pytest.mark.parametrize("width", [80, 120, 160])
async def test_a_narrow_pane_never_parts_a_figure_from_its_unit(tmp_path, moot_dirs, width):
    """Three panes side by side: the meta line wraps between figures, not inside one."""
    spec = debate_spec(debaters=3, phases=["proposal"], max_rounds=3)
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(width, 40)) as pilot:
        await wait_until(pilot, lambda: app.debate_screen())
        screen = live_screen(app)
        await wait_until(pilot, lambda: screen.pane("operator").usage.turns)
        await pilot.pause()
        metas = [
            screen.pane(d).query_one(".meta", Static) for d in ("planner", "critic", "operator")
        ]
        shown = [m for m in metas if m.content_size.width]  # a narrow layout shows one
        assert shown
        for meta in shown:
            did = meta.parent.id if meta.parent else "?"
            lines = [str(line) for line in meta.render().wrap(meta.content_size.width)]
            usage = [seg.strip() for line in lines[2:] for seg in line.split(" · ")]
            for seg in usage:
                assert not re.fullmatch(r"[\d,.k]+", seg), f"{did}: {lines}"
                assert not re.match(r"(tok|turns?|s)\b", seg), f"{did}: {lines}"


async def test_a_resize_while_a_turn_box_mounts_never_reaches_it(tmp_path, moot_dirs):
    """Seen under load: a resize's after-refresh fit ran between a streaming box's mount
    and its compose, and `NoMatches: TailText` ended the app."""
    spec = debate_spec(debaters=2, phases=["proposal"], scripts={0: {"turn_delay_ms": 600_000}})
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.timeline.current_speaker and screen.panes_settled)
        pane = live_screen(app).pane("critic")
        slot = Slot(index=99, round=1, phase="proposal", speaker="critic", kind=TurnKind.POSITION)
        seen: list[object] = []
        mount = pane.turns.mount

        def mount_then_resize(*widgets, **kwargs):  # noqa: ANN002, ANN003, ANN202
            awaitable = mount(*widgets, **kwargs)
            seen.append(pane.streaming)  # what a resize landing now would fit
            pane._fit_streaming()
            return awaitable

        pane.turns.mount = mount_then_resize
        await pane.begin_turn(slot)
        pane.turns.mount = mount
        assert seen == [None]  # the new box was not yet the pane's
        assert pane.streaming is not None and pane.streaming.query(TailText)
        await pilot.pause()
        assert app.is_running
        await tap(pilot, "q")
        await tap(pilot, "y")


async def test_a_reply_waiting_to_be_written_shows_done_not_a_falling_rate(
    tmp_path, moot_dirs, monkeypatch
):
    """A parallel phase writes turns in schedule order: the fast critic's reply is over
    while the slow planner still speaks, and its pane says so instead of a rate that
    keeps falling with the clock. Pane changes are spaced out as on a loaded machine, so
    the critic's reply ends before its box is mounted: the "done" must not be lost."""
    monkeypatch.setattr(live_module, "PANE_OP_INTERVAL", 0.3)
    spec = debate_spec(
        debaters=2,
        phases=["proposal"],
        parallel=True,
        scripts={0: {"stances": [LONG], "token_delay_ms": 60}, 1: {"stances": ["Short."]}},
    )
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.debate_screen())
        screen = live_screen(app)
        critic = await wait_until(pilot, lambda: screen.pane("critic"))
        waiting = await wait_until(
            pilot, lambda: critic.streaming is not None and critic.streaming.replied and critic
        )
        streaming = waiting.streaming
        assert not screen.pane("planner").streaming.replied  # still speaking: nothing written
        assert screen.timeline.entries[2].status != "done"
        heading = str(streaming.query_one(".heading", Static).render())
        live = str(streaming.query_one(".live", Static).render())
        assert "done" in heading and "speaking" not in heading, heading
        assert live.startswith("done ·") and "tok/s" not in live, live
        await tap(pilot, "q")
        await tap(pilot, "y")

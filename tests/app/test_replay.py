"""Replay: the live layout driven by recorded turns; no model is ever called."""

from __future__ import annotations

from tests.app.app_support import debate_spec, make_app, plain, record_session, tap, wait_until
from tui.app.components.cards import TurnCard
from tui.app.components.pane import MAX_CARDS
from tui.app.screens.modals import JumpModal
from tui.app.screens.replay import ReplayScreen
from tui.commands.outcome import record_outcome
from tui.engine.record.session import load_session


def _no_provider(_debater):
    raise AssertionError("replay must not call a model")


async def _session(tmp_path):
    spec = debate_spec(debaters=3, max_rounds=1, threshold=2, scripts={1: {"votes": ["release"]}})
    return await record_session(spec, tmp_path / "sessions" / "20250101-120000-replay.toml")


async def test_replay_shows_recorded_turns_in_order(tmp_path):
    path = await _session(tmp_path)
    data = load_session(path)
    app = make_app(tmp_path, replay_path=str(path), provider_for=_no_provider)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen
        )
        assert screen.cursor == 0
        assert not list(screen.query(TurnCard))
        seen = []
        for expected in data.turns:
            await pilot.press("right")
            cards = list(screen.query(TurnCard))
            newest = max(cards, key=lambda c: c.turn.index)
            seen.append((newest.turn.index, newest.turn.speaker))
            assert screen.timeline.entries[expected.index].status == "done"
            assert newest.turn.speaker == expected.speaker
        assert seen == [(t.index, t.speaker) for t in data.turns]
        assert "release" in plain(screen.tally_panel)
        assert "threshold_vote" in plain(screen.tally_panel)  # the decision and its rule
        last = data.turns[-1]  # the header shows where the last turn shown stands
        facts = plain(screen.header.query_one("#facts"))
        assert f"round {last.round}/" in facts and f"phase {last.phase}" in facts
        assert f"turn {len(data.turns)}/{len(data.turns)}" in facts
        assert screen.header.status == "REPLAY"
        await pilot.press("left")
        assert screen.cursor == len(data.turns) - 1
        assert len(list(screen.query(TurnCard))) == len(data.turns) - 1
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, JumpModal))
        await pilot.press("1", "enter")
        await wait_until(pilot, lambda: screen.cursor == 1)
        assert [c.turn.index for c in screen.query(TurnCard)] == [1]  # turn 1, numbered from 1
        await pilot.press("q")
    assert app.return_value == 0


async def test_replay_plays_at_a_chosen_speed(tmp_path):
    path = await _session(tmp_path)
    app = make_app(tmp_path, replay_path=str(path), provider_for=_no_provider)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen
        )
        for _ in range(5):
            await pilot.press("plus")
        assert screen.speed == 32.0
        await pilot.press("minus")
        assert screen.speed == 16.0
        intervals = []  # the play timer's, not a stopwatch: a loaded machine plays late
        every = screen.set_interval

        def noted(s, *a, **k):
            intervals.append(s)
            return every(s, *a, **k)

        screen.set_interval = noted
        await tap(pilot, "space")
        await wait_until(pilot, lambda: screen.playing)
        assert intervals == [1 / 16]  # a turn each sixteenth of a second
        await wait_until(pilot, lambda: screen.cursor == len(screen.recorded))
        await wait_until(pilot, lambda: not screen.playing)
        await pilot.press("q")


async def test_keys_while_playing_never_show_a_turn_twice(tmp_path):
    """Arrow keys and the play timer move the cursor from different tasks, one at a time."""
    spec = debate_spec(debaters=3, max_rounds=2, threshold=3)
    path = await record_session(spec, tmp_path / "sessions" / "20250101-120000-keys.toml")
    data = load_session(path)
    app = make_app(tmp_path, replay_path=str(path), provider_for=_no_provider)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen
        )
        screen.speed = 32.0
        await tap(pilot, "space")
        for key in ["right", "left", "right", "right", "left"] * 6:
            app.simulate_key(key)  # no wait for a frame: they land on a moving cursor
            await pilot.pause(0.01)
        # Playing stops at the end. Keys may still be queued: the panes must come to agree
        # with the cursor (two moves from one cursor leave a turn shown twice, or a count
        # that never agrees).
        await wait_until(pilot, lambda: not screen.playing and _panes_agree(screen, data.turns))
        await pilot.press("q")


def _panes_agree(screen, turns) -> bool:
    """Each pane shows its newest turns up to the cursor, once each, and counts them all."""
    shown = turns[: screen.cursor]
    for pane in screen.query("DebaterPane"):
        indices = [c.turn.index for c in pane.query(TurnCard)]
        mine = [t.index for t in shown if t.speaker == pane.debater_id]
        if indices != mine[len(mine) - len(indices) :] or len(indices) != min(len(mine), MAX_CARDS):
            return False
        if pane.usage.turns != len(mine):
            return False
    return True


async def test_export_from_the_palette_writes_next_to_the_session(tmp_path):
    path = await _session(tmp_path)
    app = make_app(tmp_path, replay_path=str(path), provider_for=_no_provider)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        app.export("markdown")
        app.export("json")
        # Each export runs in a thread and says so when its file is written: quitting
        # before that left the test reading a file its thread had not yet written.
        wanted = {f"exported {path.with_suffix(s)}" for s in (".md", ".json")}
        await wait_until(pilot, lambda: wanted <= {str(n.message) for n in app._notifications})
        await pilot.press("q")
    assert path.with_suffix(".md").read_text().strip()
    assert path.with_suffix(".json").read_text().strip().startswith("{")


async def test_home_lists_sessions_and_replays_one(tmp_path):
    await _session(tmp_path)
    app = make_app(tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        home = await wait_until(pilot, lambda: getattr(app.screen, "sessions", None) and app.screen)
        assert home.sessions[0].title == "Ship the migration?"
        assert home.sessions[0].decision.startswith("release")
        await pilot.press("tab")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.press("q")


async def test_replay_of_a_session_without_turns_says_so(tmp_path):
    from tui.engine.record.live import LiveSession
    from tui.engine.specs.spec import validate_spec

    spec = debate_spec(debaters=2, max_rounds=2)
    path = tmp_path / "sessions" / "20250101-120000-empty.toml"
    LiveSession.start(validate_spec(spec), spec, _no_provider, out=path).close()
    app = make_app(tmp_path, replay_path=str(path), provider_for=_no_provider)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen
        )
        await tap(pilot, "space")  # nothing to play: stays stopped
        facts = plain(screen.header.query_one("#facts"))
        assert "no turns recorded" in facts and "not started" in facts
        assert "round 0" not in facts and "playing" not in facts
        assert not screen.playing
        await pilot.press("q")


async def test_replay_lists_the_outcomes_recorded_after_the_decision_as_plain_text(tmp_path):
    path = await _session(tmp_path)
    record_outcome(path, "failed", "It fell over in week two.", None)
    record_outcome(path, "held", "[bold]fixed[/bold] and held [link=x]since[/link]", None)
    app = make_app(tmp_path, replay_path=str(path), provider_for=_no_provider)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen
        )
        assert "outcome" not in plain(screen.tally_panel)  # not before the decision is shown
        await pilot.press("end")
        await wait_until(pilot, lambda: "outcome" in plain(screen.tally_panel))
        shown = plain(screen.tally_panel)
        assert ": failed — It fell over in week two." in shown
        assert ": held — [bold]fixed[/bold] and held [link=x]since[/link]" in shown  # as typed
        assert shown.index("failed —") < shown.index("held —")  # oldest first
        await pilot.press("q")

"""The console shows a turn's lookups in its pane as they run, and their results in `t`."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.app.app_support import live_screen, make_app, plain, scripted, wait_until, write_spec
from tests.engine.test_lookups import DESIGN, challenge_raw, reviewer_turn
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest


class AnswerHeldAfterTheLookup:
    """Scripted turns, but the reviewer's answer after its lookup waits for ``release``:
    the pane is read while the lookup is on it, however slow the machine (a fixed
    delay was a window a loaded machine could miss)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.reviewer_calls = 0

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        if request.debater.id == "reviewer":
            self.reviewer_calls += 1
            if self.reviewer_calls == 2:  # the call that carries the lookup's result
                await self.release.wait()
        return await scripted(request.debater).complete(request, on_token)

    async def aclose(self) -> None:
        return None


async def test_the_pane_shows_lookups_and_the_transcript_their_results(
    tmp_path: Path, moot_dirs: dict[str, Path]
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "design.md").write_text(DESIGN)
    raw = challenge_raw(reviewer_turn("Payments deduplicates on the event id"))
    held = AnswerHeldAfterTheLookup()
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, raw)), provider_for=lambda _: held)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        pane = live_screen(app).pane("reviewer")

        def shown() -> str:
            streaming = pane.streaming
            return plain(streaming.query_one(".lookups")) if streaming is not None else ""

        line = await wait_until(pilot, lambda: "L1" in shown() and shown())
        assert f"L1 files.read(path=design.md) ok, {len(DESIGN)} bytes" in line
        said = [f"{n.title}: {n.message}" for n in app._notifications]
        assert "tools: tool files: adversary may list, read and grep docs (reads only)" in said
        assert held.reviewer_calls == 2  # the answer waited: the line was read mid-turn
        held.release.set()
        await wait_until(pilot, lambda: screen.decision is not None)
        from tui.app.screens.modals import DecideModal

        if isinstance(app.screen, DecideModal):  # the run escalates: the person decides later
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is screen)
        await pilot.press("t")
        from tui.app.screens.transcript import TranscriptScreen

        await wait_until(pilot, lambda: isinstance(app.screen, TranscriptScreen))
        text = "\n".join(plain(w) for w in app.screen.query(".entry"))
        assert "L1 result" in text and "Payments deduplicates on the event id for 24 hours." in text
        await pilot.press("escape")
        await pilot.press("q")


def _stopped_before_the_reviewer(tmp_path: Path) -> Path:
    """A session with a files tool, started from its spec and stopped before the lookup."""
    from tests.commands.test_lookups_runs import keep_records
    from tui.engine.record.live import LiveSession
    from tui.engine.specs.spec import validate_spec

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "design.md").write_text(DESIGN)
    raw = challenge_raw(reviewer_turn("Payments deduplicates on the event id"))
    spec = write_spec(tmp_path, raw)
    out = tmp_path / "session.toml"
    LiveSession.start(validate_spec(raw), raw, scripted, out=out, spec_source=str(spec)).close()
    keep_records(out, 1)
    return out


async def _resume_to_the_end(app, out: Path) -> None:  # noqa: ANN001
    """Resume in the console until decided; the reviewer's lookup then read the design."""
    from tui.app.screens.modals import DecideModal
    from tui.engine.record.session import load_session

    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None)
        if isinstance(app.screen, DecideModal):
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is screen)
        await pilot.press("q")
    review = next(t for t in load_session(out).turns if t.speaker == "reviewer")
    [lookup] = review.lookups or []
    assert lookup["ok"] is True and lookup["result"] == DESIGN, lookup


async def test_a_session_resumed_in_the_console_runs_its_tools(
    tmp_path: Path, moot_dirs: dict[str, Path]
) -> None:
    from tui.engine.record.verify import verify_file

    out = _stopped_before_the_reviewer(tmp_path)
    await _resume_to_the_end(make_app(tmp_path, resume_path=str(out)), out)
    report = await asyncio.to_thread(verify_file, out)  # verify runs a loop of its own
    assert report.ok, [(c.where, c.field, c.detail) for c in report.failures]


async def test_the_console_starts_a_strangers_tools_only_when_the_command_line_allows(
    tmp_path: Path, moot_dirs: dict[str, Path], monkeypatch
) -> None:
    """As headless: refused with what would start, the file untouched; --allow-tools runs."""
    from tests.app.app_support import run_until_exit

    out = _stopped_before_the_reviewer(tmp_path)
    before = out.read_bytes()
    monkeypatch.setenv("MOOT_CONFIG_DIR", str(tmp_path / "someone-else"))
    app = make_app(tmp_path, resume_path=str(out))
    await run_until_exit(app, size=(160, 45))
    assert "not a key you trust" in app.startup_error and "--allow-tools" in app.startup_error
    assert out.read_bytes() == before
    await _resume_to_the_end(make_app(tmp_path, resume_path=str(out), allow_tools=True), out)


async def test_the_console_starts_a_specs_mcp_command_only_when_the_command_line_allows(
    tmp_path: Path, moot_dirs: dict[str, Path]
) -> None:
    """A spec is a file: its program starts only with --allow-tools, never by opening it."""
    import sys

    from tests.app.app_support import run_until_exit

    marker = tmp_path / "the-program-ran"
    raw = challenge_raw(reviewer_turn("Payments deduplicates on the event id"))
    program = f"open({str(marker)!r}, 'w').write('ran')"
    raw["tools"] = [{"name": "x", "mcp": [sys.executable, "-c", program], "roles": ["reviewer"]}]
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, raw)))
    await run_until_exit(app, size=(160, 45))
    assert "x runs" in app.startup_error and "--allow-tools" in app.startup_error
    assert not marker.exists()
    assert not list((tmp_path / "sessions").glob("*.toml"))

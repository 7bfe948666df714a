"""Protocols from outside moot, and the console views a protocol chooses.

A third party ships a protocol as a distribution with a ``moot.protocols`` entry
point. Here the tiny protocol in tests/example_protocol.py is installed that way
(a module and a dist-info on a temporary path), then run, verified and replayed.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.app_support import make_app, plain, record_session, wait_until
from tests.example_protocol import TEMPLATE
from tui.app.components.verify import DistributionPanel, ViewPanel
from tui.app.screens.replay import ReplayScreen
from tui.cli import main
from tui.engine import protocols
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.exitcodes import ExitCode

TESTS = Path(__file__).resolve().parent.parent
EXAMPLES = TESTS.parent / "sessions" / "examples"


def install(site: Path, entry: str = "moot_monologue:MonologueProtocol") -> None:
    """What ``pip install`` leaves behind: the module and its dist-info with entry points."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "moot_monologue.py").write_text(
        (TESTS / "example_protocol.py").read_text("utf-8"), "utf-8"
    )
    info = site / "moot_monologue-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: moot-monologue\nVersion: 0.1\n", "utf-8"
    )
    (info / "entry_points.txt").write_text(f"[moot.protocols]\nmonologue = {entry}\n", "utf-8")


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The plugin on sys.path and registered in this process, removed afterwards."""
    site = tmp_path / "site"
    install(site)
    monkeypatch.syspath_prepend(str(site))
    protocols._installed()
    try:
        yield site
    finally:
        protocols.PROTOCOLS.pop("monologue", None)
        sys.modules.pop("moot_monologue", None)


def spec_file(tmp_path: Path) -> Path:
    """The plugin's own template, played by a scripted speaker."""
    path = tmp_path / "monologue.toml"
    path.write_text(
        TEMPLATE.replace('model = "local"', 'model = "scripted"\nscript = { votes = ["release"] }'),
        "utf-8",
    )
    return path


def test_a_fresh_moot_finds_an_installed_protocol(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install(site)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(TESTS.parent)])}

    def moot(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tui", *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=tmp_path,
        )

    assert "monologue  one speaker states a position" in moot("--help").stdout
    session = tmp_path / "out.toml"
    run = moot("run", str(spec_file(tmp_path)), "--headless", "--out", str(session))
    assert run.returncode == ExitCode.DECIDED, run.stderr
    checked = moot("verify", str(session))
    assert checked.returncode == ExitCode.DECIDED, checked.stdout
    assert "verified: all" in checked.stdout


def test_a_broken_plugin_is_refused_by_name_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    install(site, entry="moot_monologue:NoSuchClass")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(protocols, "REFUSED", protocols.REFUSED)
    protocols._installed()
    try:
        assert "monologue" not in protocols.PROTOCOLS
        assert "does not load" in protocols.REFUSED["monologue"]
        assert main(["validate", str(spec_file(tmp_path))]) == ExitCode.BAD_INPUT
    finally:
        protocols.REFUSED.pop("monologue", None)
        sys.modules.pop("moot_monologue", None)


async def test_an_installed_protocol_runs_verifies_and_replays(
    installed: Path, tmp_path: Path
) -> None:
    session = tmp_path / "sessions" / "20250101-120000-monologue.toml"
    raw = tomllib.loads(spec_file(tmp_path).read_text("utf-8"))
    await record_session(raw, session)
    data = load_session(session)
    assert data.result is not None and data.result["protocol"] == "monologue"
    assert data.result["decision"] == "release"
    report = await asyncio.to_thread(verify_file, session)  # it replays on its own loop
    assert report.ok, report.failures
    app = make_app(tmp_path, replay_path=str(session))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen
        )
        await pilot.press("right")
        assert "release" in plain(screen.tally_panel)
        assert not list(screen.query(ViewPanel))  # it chose no side views
        await pilot.press("q")


async def test_delphi_replay_shows_its_distribution(tmp_path: Path) -> None:
    session = tmp_path / "sessions" / "20250101-120000-delphi.toml"
    raw = tomllib.loads((EXAMPLES / "scripted-delphi.toml").read_text("utf-8"))
    await record_session(raw, session)
    app = make_app(tmp_path, replay_path=str(session))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen
        )
        panel = screen.query_one(DistributionPanel)
        for _ in range(3):
            await pilot.press("right")
        assert "r1" in panel.text and "median 8  Q1 6.5  Q3 10" in panel.text
        assert "converged" not in panel.text
        for _ in range(3):
            await pilot.press("right")
        assert "median 8  Q1 7.5  Q3 8" in panel.text and "converged" in panel.text
        await pilot.press("q")

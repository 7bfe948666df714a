"""End to end: the real ``moot`` process in a real terminal (tmux), driven by keys.

At 80×24 (the narrow layout): a scripted debate streams, is paused, and is
decided through the modal with a rationale typed in two visits around picking
the vote; quitting a decided debate prints where the session is. At 200×60: quit
during the debate asks first, "stay" keeps it running, and the confirmed quit
exits 130 and leaves the exact ``moot resume`` line on the terminal. Every wait
polls ``tmux capture-pane`` against a deadline; the tmux server (on its own
socket) is killed whatever happens.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.app.app_support import debate_spec, write_spec
from tui.engine.record.session import load_session

REPO = Path(__file__).resolve().parents[2]
# ./dev.sh test: one worker runs the tmux tests one after another, never two at once.
pytestmark = pytest.mark.xdist_group("tmux")


class Tmux:
    def __init__(self) -> None:
        self.socket = f"moot-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.target = "moot"

    def run(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=check,
        )
        return proc.stdout

    def start(self, command: str, env: dict[str, str], size: tuple[int, int]) -> None:
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        self.run(
            "new-session",
            "-d",
            "-x",
            str(size[0]),
            "-y",
            str(size[1]),
            "-s",
            self.target,
            f"env -u COLUMNS -u LINES {exports} {command}",
        )  # the pty's own size

    def screen(self) -> str:
        """The visible text, wrapped lines joined (a long path stays one line)."""
        return self.run("capture-pane", "-p", "-J", "-t", self.target, check=False)

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.run("send-keys", "-t", self.target, *(["-l"] if literal else []), *keys)

    def styled(self) -> str:
        return self.run("capture-pane", "-p", "-e", "-t", self.target, check=False)

    def dialog(self, on: str | None = None) -> str:
        """The styled dialog, inside its frame (``█…█``), or only its line holding ``on``:
        the screen under the dialog may still redraw, so only the dialog's part counts."""
        inside = []
        for line in self.styled().splitlines():
            parts = line.split("█")
            if len(parts) > 2 and (on is None or on in re.sub(r"\x1b\[[0-9;]*m", "", line)):
                inside.append(parts[1])
        return "\n".join(inside)

    def key_acted(self, key: str, on: str | None = None, timeout: float = 10.0) -> None:
        """Send one key and poll until the dialog (or its line holding ``on``) shows its
        effect: focus, a highlight or a choice changes its colours.

        Keys sent back to back can reach the app as one burst of escape sequences, and
        letters typed before a focus change has landed go to the widget it left; one key
        at a time, each seen to act where it should, keeps the dialogue deterministic.
        """
        before = self.dialog(on)
        self.keys(key)
        deadline = time.monotonic() + timeout
        while self.dialog(on) == before:
            if time.monotonic() > deadline:
                raise AssertionError(f"{key} did not act on the dialog:\n{self.screen()}")
            time.sleep(0.02)

    def wait_for(self, what: str | Callable[[str], bool], timeout: float = 60.0) -> str:
        check = what if callable(what) else (lambda text: what in text)
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.screen()
            if check(text):
                return text
            time.sleep(0.05)  # a polling interval, never a bare wait for an outcome
        size = self.run(
            "display", "-p", "-t", self.target, "#{window_width}x#{window_height}", check=False
        ).strip()
        raise AssertionError(f"timed out waiting for {what!r} ({size}); the screen was:\n{text}")

    def kill(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10, check=False
        )


def _start(tmp_path: Path, tmux: Tmux, size: tuple[int, int]) -> tuple[Path, Path]:
    """A slow scripted debate in the real ``moot run``; returns (sessions dir, rc file)."""
    spec = debate_spec(
        title="Ship the migration tonight?",
        debaters=3,
        max_rounds=3,
        token_delay_ms=40,  # observable streaming; the debate cannot end on its own in time
        scripts={
            0: {"stances": ["Ship it: the migration is additive."]},
            1: {"stances": ["Rehearse the rollback first."]},
        },
    )
    spec_path = write_spec(tmp_path, spec)
    sessions = tmp_path / "sessions"
    rc_file = tmp_path / "rc"
    script = tmp_path / "moot.sh"
    script.write_text(
        f"cd {shlex.quote(str(REPO))}\n"
        f"{shlex.quote(sys.executable)} -m tui run {shlex.quote(str(spec_path))} "
        f"--sessions-dir {shlex.quote(str(sessions))}\n"
        f"echo $? > {shlex.quote(str(rc_file))}\n"
        "read -r _\n",  # the pane stays, with what moot printed on leaving
        encoding="utf-8",
    )
    env = {
        "MOOT_CONFIG_DIR": str(tmp_path / "config"),
        "TERM": "xterm-256color",
        "PYTHONPATH": str(REPO),
    }
    tmux.start(f"bash {shlex.quote(str(script))}", env, size)
    return sessions, rc_file


def _exit_code(tmux: Tmux, rc_file: Path) -> str:
    deadline = time.monotonic() + 15
    while not (rc_file.exists() and rc_file.read_text().strip()):
        if time.monotonic() > deadline:
            raise AssertionError(f"moot did not exit; screen:\n{tmux.screen()}")
        time.sleep(0.05)
    return rc_file.read_text().strip()


def test_decide_with_a_rationale_typed_in_two_visits_at_80x24(tmp_path: Path) -> None:
    tmux = Tmux()
    try:
        sessions, rc_file = _start(tmp_path, tmux, (80, 24))
        # The narrow layout: one pane, every debater named in the switcher, the tally line.
        screen = tmux.wait_for(
            lambda s: all(word in s for word in ("planner", "critic", "operator", "tally"))
        )
        # At 80 columns the header cuts the title first (with …), so "round 1/3" stays whole.
        header = screen.splitlines()[0]
        assert "Ship the mig" in header, header  # a title is cut to no less than 16 cells
        assert re.search(r"round \d/3|not started", header), header
        tmux.wait_for("speaking")  # a turn streams
        tmux.keys("p")
        tmux.wait_for("PAUSED")
        tmux.keys("d")
        tmux.wait_for("Decide the debate")
        tmux.wait_for("Rationale")
        # Focus starts on the votes, none chosen; first visit to the rationale.
        tmux.key_acted("Tab", on="why this decision")  # the cursor is in the rationale
        tmux.keys("rehearse the rollback", literal=True)
        tmux.wait_for("rehearse the rollback")
        tmux.keys("Enter")  # no vote yet: said, nothing decided, the words kept
        tmux.wait_for("Still needed: a vote")
        # Back to the votes: the second one; then the rationale again, typed on.
        for key in ("BTab", "Down", "Enter"):
            tmux.key_acted(key)
        tmux.key_acted("Tab", on="rehearse the rollback")  # the cursor back in the rationale
        tmux.keys(" first", literal=True)
        tmux.wait_for("rehearse the rollback first")
        tmux.keys("Enter")
        tmux.wait_for(lambda s: "Decide the debate" not in s and "operator_decision" in s)
        tmux.keys("q")  # decided: quits without asking
        assert _exit_code(tmux, rc_file) == "0"
        files = list(sessions.glob("*.toml"))
        assert len(files) == 1, files
        screen = tmux.wait_for("session saved in")
        assert f"moot: session saved in {files[0]}" in screen
        assert "moot resume" not in screen  # decided: nothing to continue
    finally:
        tmux.kill()
    data = load_session(files[0])
    assert data.result is not None
    assert data.result["decided_by"] == "operator"
    assert data.result["decision"] == "revise"
    assert data.result["decision_rule"] == "operator_decision"
    assert data.result["rationale"] == "rehearse the rollback first"
    actions = [a["action"] for a in data.actions]
    assert actions[0] == "pause" and "decide" in actions


def test_quit_asks_then_prints_the_resume_line_at_200x60(tmp_path: Path) -> None:
    tmux = Tmux()
    try:
        sessions, rc_file = _start(tmp_path, tmux, (200, 60))
        tmux.wait_for(lambda s: "timeline" in s and "threshold" in s)  # the full layout
        tmux.wait_for("speaking")
        tmux.keys("q")
        tmux.wait_for("The debate is still running. Quit?")
        tmux.keys("n")  # stay
        tmux.wait_for(lambda s: "still running" not in s and "LIVE" in s)
        assert not rc_file.exists()
        tmux.keys("q")
        tmux.wait_for("The debate is still running. Quit?")
        tmux.keys("y")
        assert _exit_code(tmux, rc_file) == "130"
        files = list(sessions.glob("*.toml"))
        assert len(files) == 1, files
        screen = tmux.wait_for("moot resume")
        assert f"moot: continue it with: moot resume {shlex.quote(str(files[0]))}" in screen
    finally:
        tmux.kill()
    assert load_session(files[0]).result is None  # interrupted: nothing decided

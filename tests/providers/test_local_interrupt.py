"""Leaving mid-turn on the embedded model: Ctrl+C, SIGTERM and ``q`` then yes, in the
console and headless, end the process at once with the session saved and the way back
printed. llama.cpp's server, told to stop, holds an open stream for about 30 s, with
the interpreter's lock held: the demo froze there before the streams were hung up.
"""

from __future__ import annotations

import fcntl
import os
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.signals import sigint_default
from tui.engine.record.session import load_session

pytestmark = [pytest.mark.local_model, pytest.mark.xdist_group("llama")]

DEMO = Path(__file__).resolve().parents[2] / "sessions" / "examples" / "local-debate.toml"
EXIT_DEADLINE_S = 10.0  # generous: the bound is the 1 s, on a loaded machine
TURN_DEADLINE_S = 300.0
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def _loopback_ends(pid: int) -> set[tuple[str, str]]:
    """The established TCP connections ``pid`` holds, as (local, remote) addresses."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            link = os.readlink(fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[len("socket:[") : -1])
    ends = set()
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
        if state == "01" and inode in inodes:  # 01: established
            ends.add((local, remote))
    return ends


def _turn_under_way(pid: int) -> bool:
    """The process streams a turn from its own embedded server: a connection it holds
    both ends of, seen twice a moment apart (a health check is over in a blink)."""
    first = {(a, b) for a, b in _loopback_ends(pid) if (b, a) in _loopback_ends(pid)}
    if not first:
        return False
    time.sleep(0.3)
    return bool(first & _loopback_ends(pid))


def _poll(predicate: Callable[[], bool], deadline_s: float, what: str) -> None:
    deadline = time.monotonic() + deadline_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {deadline_s:g} s")
        time.sleep(0.05)


def _wait_mid_turn(proc: subprocess.Popen[bytes]) -> None:
    _poll(
        lambda: proc.poll() is not None or _turn_under_way(proc.pid),
        TURN_DEADLINE_S,
        "a turn on the embedded model",
    )
    assert proc.poll() is None, "the run ended before a turn was under way"


def _assert_left_saved(proc: subprocess.Popen[bytes], said: Callable[[], str], out: Path) -> None:
    """Gone within the deadline, exit 130, the resume line printed, the file readable."""
    _poll(lambda: proc.poll() is not None, EXIT_DEADLINE_S, "the process exits")
    assert proc.returncode == 130, said()[-2000:]
    assert f"moot resume {out}" in said(), said()[-2000:]
    assert "Traceback" not in said()
    assert load_session(out).spec.debate.title


@pytest.fixture
def running_headless(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    out = tmp_path / "session.toml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", "run", str(DEMO), "--headless", "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=sigint_default,
    )
    try:
        yield proc, out
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_headless_leaves_mid_turn_at_once(
    running_headless: tuple[subprocess.Popen[bytes], Path], sig: signal.Signals
) -> None:
    proc, out = running_headless
    _wait_mid_turn(proc)
    proc.send_signal(sig)
    _poll(lambda: proc.poll() is not None, EXIT_DEADLINE_S, "the process exits")
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    _assert_left_saved(proc, lambda: err, out)


class _Terminal:
    """The console in a pseudo-terminal, 100×30, its screen read as it is drawn."""

    def __init__(self, out: Path) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tui", "run", str(DEMO), "--out", str(out)],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            preexec_fn=sigint_default,
        )
        os.close(slave)
        self.master = master
        self.drawn = bytearray()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the child closed the terminal
                return
            if not chunk:
                return
            self.drawn.extend(chunk)

    def text(self) -> str:
        return ANSI.sub("", bytes(self.drawn).decode(errors="replace"))

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.reader.join(timeout=5)
        os.close(self.master)


def _quit_and_confirm(term: _Terminal) -> None:
    term.type(b"q")
    _poll(lambda: "still running" in term.text(), EXIT_DEADLINE_S, "the quit question")
    term.type(b"y")


LEAVE = {
    "ctrl+c": lambda term: term.type(b"\x03"),
    "sigterm": lambda term: term.proc.send_signal(signal.SIGTERM),
    "q, yes": _quit_and_confirm,
}


@pytest.mark.parametrize("how", LEAVE)
def test_console_leaves_mid_turn_at_once(tmp_path: Path, how: str) -> None:
    out = tmp_path / "session.toml"
    term = _Terminal(out)
    try:
        _wait_mid_turn(term.proc)
        LEAVE[how](term)
        _assert_left_saved(term.proc, term.text, out)
    finally:
        term.close()

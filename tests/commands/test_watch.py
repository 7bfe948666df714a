"""moot watch: spectators follow a run live, read-only, while the run goes on as before."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.batch_specs import write
from tests.helpers import debate_raw, moot_in_process
from tui.commands.watch import Follower, follow
from tui.engine.basics.errors import SessionError
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file

TURN_LINE = re.compile(r"^r(\d+) ", re.M)


def slow_split(delay_ms: int = 120) -> dict[str, Any]:
    """Three debaters who never agree, one turn at a time, each turn taking ``delay_ms``."""
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"], "c": ["escalate"]}, max_rounds=2, parallel=False
    )
    for d in raw["debaters"]:
        d["script"]["turn_delay_ms"] = delay_ms
    return raw


def moot(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(check: Callable[[], bool], deadline_s: float = 30.0) -> None:
    end = time.monotonic() + deadline_s
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_watchers_follow_a_run_to_its_end(tmp_path: Path) -> None:
    spec = write(tmp_path / "split.toml", slow_split())
    session = tmp_path / "live.toml"
    writer = moot("run", str(spec), "--headless", "--out", str(session))
    wait_for(session.exists)
    watchers = [moot("watch", str(session)) for _ in range(2)]
    follower = Follower(session)
    seen: list[int] = []
    seen_while_running: list[int] = []
    result = None
    end = time.monotonic() + 60
    while result is None:
        assert time.monotonic() < end, "the watcher never saw the result"
        for record in follower.poll():
            if record.turn is not None:
                seen.append(record.turn.index)
                if writer.poll() is None:
                    seen_while_running.append(record.turn.index)
            elif record.kind == "result":
                result = record.body
        time.sleep(0.02)
    assert writer.wait(60) == 3, writer.stderr.read() if writer.stderr else ""
    data = load_session(session)
    # Every turn the writer committed was seen, once, in order, as it landed.
    assert seen == [t.index for t in data.turns] == list(range(1, len(data.turns) + 1))
    assert len(seen_while_running) >= len(seen) // 2  # live, not read at the end
    assert result == data.result
    assert verify_file(session).ok  # the writer's file is as if nobody had watched
    for watcher in watchers:
        out, err = watcher.communicate(timeout=60)
        assert watcher.returncode == 3, err
        assert [int(r) for r in TURN_LINE.findall(out)] == [t.round for t in data.turns]
        assert "decision: escalate" in out


def test_follow_reads_only_committed_records(tmp_path: Path) -> None:
    spec = write(tmp_path / "split.toml", slow_split(0))
    session = tmp_path / "done.toml"
    writer = moot("run", str(spec), "--headless", "--out", str(session))
    assert writer.wait(60) == 3
    whole = session.read_bytes()
    cut = whole.index(b"[[turns]]", whole.index(b"[[turns]]") + 1) + 40  # inside turn 2
    partial = tmp_path / "partial.toml"
    partial.write_bytes(whole[:cut])
    follower = Follower(partial)
    kinds = [r.kind for r in follower.poll()]
    assert kinds == ["header", "turn"]  # turn 2 is not complete yet
    with partial.open("ab") as f:  # the writer finishes its record
        f.write(whole[cut:])
    later = follower.poll()
    assert [r.turn.index for r in later if r.turn is not None] == list(
        range(2, len(load_session(session).turns) + 1)
    )
    assert later[-1].kind == "result"


def test_a_result_key_from_the_file_is_shown_as_text(tmp_path: Path) -> None:
    """The result table's keys are read from the file watched, as its values are: a forged
    key is shown as written, never read as Rich markup or sent to the terminal as an escape."""
    spec = write(tmp_path / "split.toml", slow_split(0))
    session = tmp_path / "done.toml"
    assert moot_in_process("run", str(spec), "--headless", "--out", str(session)).returncode == 3
    forged = tmp_path / "forged.toml"
    key = '"[reverse]boom[/reverse] \\u001b[31mred" = "v"'
    forged.write_text(session.read_text().replace("[result]\n", f"[result]\n{key}\n", 1))
    shown = moot_in_process("watch", str(forged))
    assert shown.returncode == 3, shown.stderr
    assert "\x1b" not in shown.stdout
    assert "[reverse]boom[/reverse] \u241b[31mred" in shown.stdout


def test_a_file_that_is_not_a_session(tmp_path: Path) -> None:
    spec = write(tmp_path / "spec.toml", slow_split())
    with pytest.raises(SessionError, match="not a moot session file"):
        follow(spec, lambda seen: None, interval=0.01, header_wait=0.2)
    missing = moot("watch", str(tmp_path / "missing.toml"))
    _, err = missing.communicate(timeout=60)
    assert missing.returncode == 2 and "file not found" in err


def test_watch_ends_when_the_writer_is_killed(tmp_path: Path) -> None:
    spec = write(tmp_path / "stalled.toml", slow_split(600_000))  # the first turn never ends
    session = tmp_path / "killed.toml"
    writer = moot("run", str(spec), "--headless", "--out", str(session))
    try:
        follower = Follower(session)
        wait_for(lambda: session.exists() and any(r.kind == "header" for r in follower.poll()))
        watcher = moot("watch", str(session))
        assert watcher.stdout is not None
        assert watcher.stdout.readline().startswith("watching: ")  # it follows the live writer
    finally:
        writer.kill()
    assert writer.wait(60) == -signal.SIGKILL  # it was killed, not done
    try:
        out, err = watcher.communicate(timeout=30)
    finally:
        watcher.kill()
    assert watcher.returncode == 130, err
    assert "the writer stopped before a result" in out
    assert "moot resume" in out


def test_watch_waits_through_a_slow_writer(tmp_path: Path) -> None:
    raw = slow_split(1200)  # each turn outlasts a look at the lock and many at the file
    raw["debate"].update(max_rounds=1, phases=["proposal"])
    spec = write(tmp_path / "slow.toml", raw)
    session = tmp_path / "slow-live.toml"
    writer = moot("run", str(spec), "--headless", "--out", str(session))
    wait_for(session.exists)
    watcher = moot("watch", str(session))
    assert writer.wait(60) == 3
    out, err = watcher.communicate(timeout=60)
    assert watcher.returncode == 3, err
    assert len(TURN_LINE.findall(out)) == len(load_session(session).turns)
    assert "decision: escalate" in out and "writer stopped" not in out

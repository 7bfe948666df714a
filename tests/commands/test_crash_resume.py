"""SIGKILL a headless run at random points; resume must finish with the same result."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.batch_specs import write
from tests.helpers import debate_raw, with_script
from tui.engine.record.fileformat import COMMIT
from tui.engine.record.session import load_session


def _write_spec(path: Path) -> Path:
    """Three scripted debaters; the debate ends after one round of four phases. Their turn
    delays outlast the latest kill (600 ms after the header) even where a phase's turns run
    at once: 360 ms of proposals, then at least 140 ms for each later phase. So every kill
    lands mid-run, however fast the machine. (Tokens are not paced in a headless run.)"""
    raw = debate_raw(
        {
            "a": ["release", "revise"],
            "b": ["revise", "release", "revise"],
            "c": ["escalate", "revise"],
        },
        title="Crash test",
        motion="Keep going after a crash.",
        max_rounds=2,
        consensus_threshold=3,
        phases=["proposal", "critique", "revision", "consensus"],
    )
    for debater, turn_delay_ms in (("a", 120), ("b", 140), ("c", 100)):
        raw = with_script(raw, debater, turn_delay_ms=turn_delay_ms)
    return write(path, raw)


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "tui", *args]


def _comparable(path: Path) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
    data = load_session(path)
    assert data.result is not None
    turns = [
        (t.index, t.round, t.phase, t.speaker, t.vote, t.invalid, repr(t.content))
        for t in data.turns
    ]
    result = {k: v for k, v in data.result.items() if k not in ("tokens", "cost")}
    return turns, result


def _committed(path: Path) -> bool:
    """Whether the file holds its first complete record (the header and its commit mark)."""
    try:
        return COMMIT.encode() in path.read_bytes()
    except FileNotFoundError:
        return False


def test_sigkill_at_random_points_then_resume(tmp_path: Path) -> None:
    """Earns its time (13 to 17 s in a full run, 8 s of it CPU): six kills, each at its own
    point of a real process's run, each resumed by another; most of the wall time is the
    scripted turns' delays, which keep every kill mid-run however fast the machine."""
    spec = _write_spec(tmp_path / "crash.toml")
    reference = tmp_path / "reference.toml"
    done = subprocess.run(
        _cmd("run", str(spec), "--headless", "--out", str(reference)),
        capture_output=True,
        timeout=120,
    )
    ref_turns, ref_result = _comparable(reference)
    assert len(ref_turns) > 6 and done.returncode in (0, 3)

    rng = random.Random(20261121)
    killed_mid_run = 0
    for trial in range(6):
        out = tmp_path / f"trial{trial}.toml"
        proc = subprocess.Popen(
            _cmd("run", str(spec), "--headless", "--out", str(out)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # Wait for the session's header to be committed, then kill after a random delay: a
        # kill before it leaves a file holding no record, which has nothing to resume.
        deadline = time.monotonic() + 60
        while not _committed(out) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.6))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        if proc.returncode == -signal.SIGKILL and out.exists():
            partial = load_session(out)
            killed_mid_run += partial.result is None
            assert [t.index for t in partial.turns] == list(range(1, len(partial.turns) + 1))
        if not out.exists():
            continue
        r = subprocess.run(
            _cmd("resume", str(out), "--headless"), capture_output=True, text=True, timeout=120
        )
        assert r.returncode == done.returncode, r.stdout + r.stderr
        turns, result = _comparable(out)
        assert turns == ref_turns  # every completed turn exactly once, in order
        assert result["decision"] == ref_result["decision"]
        assert result["decision_rule"] == ref_result["decision_rule"]
        assert result["vote_tally"] == ref_result["vote_tally"]
        assert result["speaker_schedule"] == ref_result["speaker_schedule"]
    assert killed_mid_run == 6  # the test really interrupted every run
